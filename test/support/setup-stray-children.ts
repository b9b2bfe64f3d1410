// Setup file (vitest.config.ts), run before each test file: a test that fails (a timeout among
// failures) has what it started and left running ended (stray-children.ts), so it cannot slow or
// break the tests after it. A test that passes is left as it is: what it keeps running is its own
// (a server its file stops after its last test).
import { afterEach, beforeEach } from 'vitest';
import { killDescendantsSince, uptimeTicks } from './stray-children.js';

let since = 0;

beforeEach(() => {
  since = uptimeTicks();
});

afterEach((context) => {
  if (context.task.result?.state !== 'fail') return;
  const killed = killDescendantsSince(since);
  if (killed.length > 0)
    console.warn(`ended ${killed.length} process(es) the failed test left: ${killed.join(' ')}`);
});
