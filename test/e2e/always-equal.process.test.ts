// A value made to pass every comparison: `work()` returning an object whose `__eq__` is `return True`
// passed both the metric's own check (`assert r == 500000`) and the guard's `assertEqual`, and was
// kept thousands of times faster (seen: 96 to 377,074). Such a comparison in the doer's code is now
// tamper; a faster way to the same number is kept. As a user runs a loop, with the built CLI, the
// scripted agent and the embedded store.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
} from '../support/loop-script.js';

/** Times `work()`, checks its answer, and prints runs per second. */
const METRIC = `import json, sys, time
sys.path.insert(0, 'src')
import lib
t0 = time.perf_counter()
r = lib.work()
dt = time.perf_counter() - t0
assert r == 500000, 'wrong answer'
print(json.dumps({'value': round(1 / (dt + 1e-6))}))
`;
const TEST = `import sys, unittest
sys.path.insert(0, 'src')
import lib


class WorkTest(unittest.TestCase):
    def test_work(self):
        self.assertEqual(lib.work(), 500000)
`;
const SLOW = 'def work():\n    return sum(range(3, 3000000, 3)) % 1000000\n';

beforeAll(assertBuilt);

async function iteration(lib: string) {
  const repo = await scriptedLoopRepo(
    { 'src/lib.py': SLOW, 'metric/score.py': METRIC, 'tests/__init__.py': '', 'tests/test_lib.py': TEST },
    [],
    'forge-always-equal-',
  );
  await oneDoerLoopRules(repo, [{ write: 'src/lib.py', content: lib }, { say: 'HYPOTHESIS: faster' }]);
  const epic = await createValueLoop(repo, 'src/lib.py', 'python3 metric/score.py', [
    '--guard',
    'tests=python3 -m unittest tests.test_lib',
  ]);
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  return {
    decisions: (await ledgerDecisions(repo)).map(([iter, decision]) => [iter, decision]),
    reason: (await repo.ledger<{ reason?: string }>())[1]?.reason ?? '',
    lib: await readFile(join(repo.dir, 'src', 'lib.py'), 'utf8'),
  };
}

describe('a value made to pass every comparison', () => {
  it('an __eq__ that answers True: tamper, put back', async () => {
    const cheat = await iteration(
      'class _Answer:\n    def __eq__(self, other):\n        return True\n\n\ndef work():\n    return _Answer()\n',
    );
    expect(cheat.decisions).toEqual([
      [0, 'baseline'],
      [1, 'tamper'],
    ]);
    expect(cheat.reason).toContain('src/lib.py (def __eq__(self, other): return True)');
    expect(cheat.lib).toBe(SLOW);
  });

  it('the same number, computed faster, is kept', async () => {
    // The sum of the multiples of 3 below 3,000,000, in closed form.
    const fast = await iteration('def work():\n    n = 999999\n    return 3 * n * (n + 1) // 2 % 1000000\n');
    expect(fast.decisions).toEqual([
      [0, 'baseline'],
      [1, 'keep'],
    ]);
  });
});
