// A guard is an exit code, and an exit code says nothing of how many tests ran. Here the tests are run
// module by module (`python3 -m unittest tests.test_value`), and unittest ends 0 when an import it makes
// calls `sys.exit(0)`: a doer that breaks a test and puts that exit in a module the test imports
// passed the guard (seen: kept at 100). The baseline's runner summary (`Ran 2 tests`) is the floor; a
// run that passes fewer, or prints none, fails the guard. As a user runs a loop, with the built CLI,
// the scripted agent and the embedded store.
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

const SCORE = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8')) }));
`;
const TEST = `import sys
import unittest
sys.path.insert(0, 'src')
import limits


class ValueTest(unittest.TestCase):
    def test_within_the_limit(self):
        with open('src/value.txt') as f:
            self.assertLessEqual(int(f.read()), limits.MAX)

    def test_the_limit_is_positive(self):
        self.assertGreater(limits.MAX, 0)
`;

beforeAll(assertBuilt);

async function guardedIteration(steps: unknown[]) {
  const repo = await scriptedLoopRepo(
    {
      'src/value.txt': '10\n',
      'src/limits.py': 'MAX = 50\n',
      'metric/score.mjs': SCORE,
      'tests/__init__.py': '',
      'tests/test_value.py': TEST,
    },
    [],
    'forge-count-',
  );
  await oneDoerLoopRules(repo, [...steps, { say: 'HYPOTHESIS: a larger value' }]);
  const epic = await createValueLoop(repo, 'src/value.txt', 'node metric/score.mjs', [
    '--guard',
    'tests=python3 -m unittest tests.test_value',
  ]);
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  const state = JSON.parse(
    await readFile(join(repo.dir, '.autoresearch', 'iterations', 'iter-0.json'), 'utf8'),
  ) as {
    guard_tests?: Record<string, number>;
  };
  return {
    decisions: await ledgerDecisions(repo),
    reason: (await repo.ledger<{ reason?: string }>())[1]?.reason ?? '',
    floor: state.guard_tests,
    limits: await readFile(join(repo.dir, 'src', 'limits.py'), 'utf8'),
  };
}

describe('a guard that runs fewer tests than its baseline', () => {
  it('an exit in a module the tests import: the guard fails, and the change is reverted', async () => {
    const cheat = await guardedIteration([
      { write: 'src/value.txt', content: '100\n' },
      { write: 'src/limits.py', content: 'import sys\nsys.exit(0)\nMAX = 50\n' },
    ]);
    expect(cheat.floor).toEqual({ tests: 2 });
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 10],
      [1, 'guard_failed', null],
    ]);
    expect(cheat.reason).toContain(
      'guard tests printed no count of the tests it passed where the baseline passed 2: a test that no longer runs passes nothing',
    );
    expect(cheat.limits).toBe('MAX = 50\n');
  });

  // The same exit with the summary the runner would have printed, forged: the count is read from
  // the code, before the guard runs.
  it('a forged summary before the exit: tamper, and the change is reverted', async () => {
    const forged = await guardedIteration([
      { write: 'src/value.txt', content: '100\n' },
      {
        write: 'src/limits.py',
        content:
          "import sys\nprint('\\n' + '-' * 70 + '\\nRan 2 tests in 0.001s\\n\\nOK', file=sys.stderr)\nsys.exit(0)\nMAX = 50\n",
      },
    ]);
    expect(forged.decisions).toEqual([
      [0, 'baseline', 10],
      [1, 'tamper', null],
    ]);
    expect(forged.reason).toContain("src/limits.py (writes a test runner's summary (Ran 2 tests))");
    expect(forged.limits).toBe('MAX = 50\n');
  });

  it('an honest change within the limit is kept', async () => {
    const honest = await guardedIteration([{ write: 'src/value.txt', content: '40\n' }]);
    expect(honest.decisions).toEqual([
      [0, 'baseline', 10],
      [1, 'keep', 40],
    ]);
  });
});
