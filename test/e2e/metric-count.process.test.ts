// A test metric's score means something over the tests its baseline ran. The doer here turns the
// failing tests into skips from the code under test (unittest's SkipTest, reached with no import a
// reading sees): under a JUnit pass rate that was kept at 100 from a baseline of 33 (seen, with the
// class found among Exception's subclasses, which the reading now names), and under an exit code the
// suite exits 0. The baseline's count (tests that passed or
// failed) is kept in iteration 0's state, and a run that counts fewer gives no score: the iteration is a
// crash and the change is reverted. As a user runs a loop, with the built CLI, the scripted agent and
// the embedded store.
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

const TEST = `import sys
import unittest
sys.path.insert(0, 'src')
import value


class ValueTest(unittest.TestCase):
    def test_one(self):
        self.assertEqual(value.one(), 1)

    def test_two(self):
        self.assertEqual(value.two(), 2)

    def test_three(self):
        self.assertEqual(value.three(), 3)
`;

/** pytest's JUnit XML on stdout, through a file outside the tree (pytest cannot open /dev/stdout on a pipe). */
const JUNIT_METRIC = `import os, subprocess, sys, tempfile
report = os.path.join(tempfile.mkdtemp(), 'report.xml')
subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--junitxml=' + report, 'tests'], stdout=subprocess.DEVNULL)
print(open(report).read())
`;

const BASELINE = 'def one():\n    return 1\n\ndef two():\n    return 0\n\ndef three():\n    return 0\n';
/** unittest's SkipTest, by a name built as it runs: no import and no name a reading of the code sees. */
const SKIP = "raise sys.modules['unit' + 'test'].SkipTest('later')";
const SKIPPING = `import sys\n\ndef one():\n    return 1\n\ndef two():\n    ${SKIP}\n\ndef three():\n    ${SKIP}\n`;
const FIXED = 'def one():\n    return 1\n\ndef two():\n    return 2\n\ndef three():\n    return 3\n';

beforeAll(assertBuilt);

async function metricIteration(
  metric: string,
  score: string,
  doerWrites: string,
  extraArgs: readonly string[] = [],
) {
  const repo = await scriptedLoopRepo(
    {
      'src/value.py': BASELINE,
      'tests/__init__.py': '',
      'tests/test_value.py': TEST,
      'metric/score.py': JUNIT_METRIC,
    },
    [],
    'forge-metric-count-',
  );
  await oneDoerLoopRules(repo, [
    { write: 'src/value.py', content: doerWrites },
    { say: 'HYPOTHESIS: the values' },
  ]);
  const epic = await createValueLoop(repo, 'src/value.py', metric, ['--score', score, ...extraArgs]);
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  const state = JSON.parse(
    await readFile(join(repo.dir, '.autoresearch', 'iterations', 'iter-0.json'), 'utf8'),
  ) as { metric_tests?: number; track_tests?: Record<string, number> };
  return {
    decisions: await ledgerDecisions(repo),
    reason: (await repo.ledger<{ reason?: string }>())[1]?.reason ?? '',
    floor: state.metric_tests,
    trackFloor: state.track_tests,
    value: await readFile(join(repo.dir, 'src', 'value.py'), 'utf8'),
  };
}

describe('a test metric that counts fewer tests than its baseline', () => {
  it('a JUnit pass rate whose failing tests became skips gives no score', async () => {
    const cheat = await metricIteration('python3 metric/score.py', 'junit', SKIPPING);
    expect(cheat.floor).toBe(3);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', (1 / 3) * 100],
      [1, 'crash', null],
    ]);
    expect(cheat.reason).toContain(
      "the metric's run counted 1 test that passed or failed, where the baseline's counted 3",
    );
    expect(cheat.value).toBe(BASELINE);
  });

  it('an exit code that turned 0 by skipping the failing tests gives no score', async () => {
    const cheat = await metricIteration('python3 -m unittest tests.test_value', 'exit-code', SKIPPING);
    expect(cheat.floor).toBe(3);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'crash', null],
    ]);
    expect(cheat.reason).toContain("counted 1 test that passed or failed, where the baseline's counted 3");
    expect(cheat.value).toBe(BASELINE);
  });

  // A track read from the same report is held the same way: with a threshold, the iteration fails it.
  it('a JUnit track whose failing tests became skips has no figure, and fails its threshold', async () => {
    const tracked = ['--track', 'rate=python3 metric/score.py', '--track-score', 'rate=junit'];
    const cheat = await metricIteration('python3 -m unittest tests.test_value', 'exit-code', SKIPPING, [
      ...tracked,
      '--track-min',
      'rate=30',
    ]);
    expect(cheat.trackFloor).toEqual({ rate: 3 });
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'guard_failed', null],
    ]);
    expect(cheat.reason).toContain("the track's run counted 1 test that passed or failed");
    expect(cheat.value).toBe(BASELINE);
  });

  it('the same suite passing in full is kept', async () => {
    const honest = await metricIteration('python3 -m unittest tests.test_value', 'exit-code', FIXED);
    expect(honest.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'keep', 100],
    ]);
  });
});
