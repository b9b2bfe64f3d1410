// Only the real-CLI files get the longer timeouts (test/support/setup-real-cli-timeouts.ts); the rest keep
// the config's, even in a worker that ran a real-CLI file just before.
import { expect, it } from 'vitest';
import { isRealCliFile, REAL_CLI_TIMEOUTS } from '../support/real-cli-timeouts.js';

it('a test elsewhere keeps the config timeout', ({ task }) => {
  expect(task.timeout).toBe(120_000);
  expect(task.timeout).not.toBe(REAL_CLI_TIMEOUTS.testTimeout);
});

it('tells the real-CLI files by their folder', () => {
  expect(isRealCliFile('/repo/test/e2e-claude/runner.test.ts')).toBe(true);
  expect(isRealCliFile('C:\\repo\\test\\e2e-claude\\runner.test.ts')).toBe(true);
  expect(isRealCliFile('/repo/test/e2e/runner.process.test.ts')).toBe(false);
  expect(isRealCliFile('/repo/test/e2e-claude-notes/runner.test.ts')).toBe(false);
});
