// The real-CLI files get their longer timeouts from the setup file (test/support/setup-real-cli-timeouts.ts).
import { expect, it } from 'vitest';
import { REAL_CLI_TIMEOUTS } from '../support/real-cli-timeouts.js';

it('a test in a real-CLI file has the longer timeout', ({ task }) => {
  expect(task.timeout).toBe(REAL_CLI_TIMEOUTS.testTimeout);
});
