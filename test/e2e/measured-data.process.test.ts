// The data a metric compares against, kept out of git (`data/` ignored, as a large test set is): code the
// doer changed that, while measured, writes its own answers over it. Seen before measured-data.ts: the
// answer key rewritten by the measured code, 0 → 100, kept. Now the run measures nothing, the file is
// put back and the change reverted; one too large to copy holds the loop until a person looks. What the
// runs write themselves (a results file, as the baseline's run wrote it) stays theirs. As a user runs a
// loop, with the built CLI, the scripted agent and the embedded store.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
} from '../support/loop-script.js';

const LIB = 'def predict():\n    return 1\n';
/** 100 when the prediction matches the ignored answer key, 0 otherwise; writes its result where git ignores it. */
const METRIC = [
  'import json, os, sys',
  "sys.path.insert(0, 'src')",
  'import lib',
  'p = lib.predict()',
  "e = int(open('data/expected.txt').read().split()[0])",
  'score = 100 if p == e else 0',
  "os.makedirs('results', exist_ok=True)",
  "open('results/last.json', 'w').write(json.dumps({'p': p, 'score': score}))",
  "open('.metric-cache', 'a').write(str(p))",
  "print(json.dumps({'value': score}))",
  '',
].join('\n');
const KEY = '7\n';

beforeAll(async () => {
  await assertBuilt();
});

async function iteration(lib: string, key = KEY) {
  const repo = await scriptedLoopRepo(
    {
      '.gitignore': '.forge/\n.beads/\n.autoresearch/\ndata/\nresults/\n.metric-cache\n',
      'src/lib.py': LIB,
      'metric/score.py': METRIC,
      'data/expected.txt': key,
    },
    [],
    'forge-data-',
  );
  await oneDoerLoopRules(repo, [
    { write: 'src/lib.py', content: lib },
    { say: 'HYPOTHESIS: a better prediction' },
  ]);
  const epic = await createValueLoop(repo, 'src/lib.py', 'python3 metric/score.py');
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  const ledger = await repo.ledger<{ iter?: number; reason?: string }>();
  return {
    run,
    decisions: await ledgerDecisions(repo),
    reason: ledger.find((line) => line.iter === 1)?.reason ?? '',
    key: await readFile(join(repo.dir, 'data', 'expected.txt'), 'utf8'),
    lib: await readFile(join(repo.dir, 'src', 'lib.py'), 'utf8'),
  };
}

describe('the ignored data a metric reads, rewritten by the code it measures', () => {
  it('written by a doer that then kills the runner: the rerun finds it, tamper, and the loop holds', async () => {
    const repo = await scriptedLoopRepo(
      {
        '.gitignore': '.forge/\n.beads/\n.autoresearch/\ndata/\nresults/\n.metric-cache\n',
        'src/lib.py': LIB,
        'metric/score.py': METRIC,
        'data/expected.txt': KEY,
      },
      [],
      'forge-data-killer-',
    );
    const killed = join(repo.base, 'killed-once');
    // Without a PID namespace of its own (the suite runs agents so), an agent can reach the runner.
    const writeAndKill = [
      "const fs = require('fs');",
      "fs.writeFileSync('data/expected.txt', '3');",
      `if (!fs.existsSync(${JSON.stringify(killed)})) {`,
      `  fs.writeFileSync(${JSON.stringify(killed)}, '');`,
      "  process.kill(process.ppid, 'SIGKILL');",
      '}',
    ].join('\n');
    await oneDoerLoopRules(repo, [
      { write: 'src/lib.py', content: 'def predict():\n    return 3\n' },
      { run: ['node', '-e', writeAndKill] },
      { say: 'HYPOTHESIS: a better prediction' },
    ]);
    const epic = await createValueLoop(repo, 'src/lib.py', 'python3 metric/score.py');
    const first = await repo.ralphProcess([epic, '--agent', 'scripted']);
    expect(first.exitCode).toBe(-1); // killed by a signal
    const rerun = await repo.ralphProcess([epic, '--agent', 'scripted']);
    expect(rerun.exitCode, rerun.stderr).toBe(3);
    expect(rerun.stderr).toContain('data/expected.txt');
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 0],
      [1, 'tamper', null],
    ]);
  });

  it("an answer key overwritten with the code's own answer: no score, put back, reverted", async () => {
    const cheat = await iteration(
      "def predict():\n    open('data/expected.txt', 'w').write('3')\n    return 3\n",
    );
    expect(cheat.run.exitCode, cheat.run.stderr).toBe(0);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'crash', null],
    ]);
    expect(cheat.reason).toContain(
      "the doer's code changed data/expected.txt, which git ignores and the measured runs read",
    );
    expect(cheat.key).toBe(KEY);
    expect(cheat.lib).toBe(LIB);
  });

  it('one removed and made anew through a rename: no score, put back', async () => {
    const cheat = await iteration(
      [
        'import os',
        'def predict():',
        "    open('data/k.tmp', 'w').write('3')",
        "    os.replace('data/k.tmp', 'data/expected.txt')",
        '    return 3',
        '',
      ].join('\n'),
    );
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'crash', null],
    ]);
    expect(cheat.key).toBe(KEY);
  });

  it('one too large to copy: no score, and the loop holds for a person', async () => {
    const big = `7\n${'#'.repeat(2 << 20)}\n`;
    const cheat = await iteration(
      "def predict():\n    open('data/expected.txt', 'w').write('3')\n    return 3\n",
      big,
    );
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'crash', null],
    ]);
    expect(cheat.reason).toContain('of which Forge keeps no copy to put back (over 1 MB)');
    // Held: the run stops, and says what to look at.
    expect(cheat.run.exitCode).toBe(3);
    expect(cheat.run.stderr).toContain(
      "The doer's code changed ignored files (data/expected.txt), which the metric may load and Forge cannot put back",
    );
  });

  it('a right answer, with the results the runs write where git ignores them: kept', async () => {
    const honest = await iteration('def predict():\n    return 7\n');
    expect(honest.run.exitCode, honest.run.stderr).toBe(0);
    expect(honest.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'keep', 100],
    ]);
    expect(honest.key).toBe(KEY);
  });

  it('the key written over and its bytes put back before the run ended: no score', async () => {
    const cheat = await iteration(
      [
        'def predict():',
        "    key = open('data/expected.txt').read()",
        "    open('data/expected.txt', 'w').write(key)",
        '    return 7',
        '',
      ].join('\n'),
    );
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'crash', null],
    ]);
    expect(cheat.reason).toContain(
      "the doer's code rewrote data/expected.txt, which git ignores and the measured runs read, and wrote its bytes back before the run ended",
    );
  });
});

/** A folder outside every repository, as a user's datasets folder is; removed with the test. */
async function datasetsFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-datasets-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'expected.txt'), KEY);
  return dir;
}

/** The metric of `metric/score.py`, reading the key from where `where` (a Python expression) says. */
const outsideMetric = (where: string) =>
  [
    'import json, sys',
    "sys.path.insert(0, 'src')",
    'import lib',
    `KEY = ${where}`,
    'p = lib.predict(KEY)',
    'e = int(open(KEY).read().split()[0])',
    'if len(sys.argv) > 2:',
    "    open(sys.argv[2], 'w').write(json.dumps({'p': p}))",
    "print(json.dumps({'value': 100 if p == e else 0}))",
    '',
  ].join('\n');

async function outsideIteration(metric: string, command: string, lib: string, also: unknown[] = []) {
  const repo = await scriptedLoopRepo(
    { 'src/lib.py': 'def predict(key):\n    return 1\n', 'metric/score.py': metric },
    [],
    'forge-data-out-',
  );
  await oneDoerLoopRules(repo, [
    { write: 'src/lib.py', content: lib },
    ...also,
    { say: 'HYPOTHESIS: a better prediction' },
  ]);
  const epic = await createValueLoop(repo, 'src/lib.py', command);
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  const ledger = await repo.ledger<{ iter?: number; reason?: string }>();
  return {
    decisions: await ledgerDecisions(repo),
    reason: ledger.find((line) => line.iter === 1)?.reason ?? '',
  };
}

const OVERWRITE = "def predict(key):\n    open(key, 'w').write('3')\n    return 3\n";

describe('the data outside the repository that the commands name, rewritten by the code they measure', () => {
  it('named in the metric command: no score, and the dataset is put back', async () => {
    const dir = await datasetsFolder();
    const key = join(dir, 'expected.txt');
    const cheat = await outsideIteration(
      outsideMetric('sys.argv[1]'),
      `python3 metric/score.py ${key}`,
      OVERWRITE,
    );
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'crash', null],
    ]);
    expect(cheat.reason).toContain(
      `the doer's code changed ${key}, data outside the repository that the commands name`,
    );
    expect(await readFile(key, 'utf8')).toBe(KEY);
  });

  it('named in the metric script itself: no score, put back', async () => {
    const dir = await datasetsFolder();
    const key = join(dir, 'expected.txt');
    const cheat = await outsideIteration(
      outsideMetric(JSON.stringify(key)),
      'python3 metric/score.py',
      OVERWRITE,
    );
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'crash', null],
    ]);
    expect(await readFile(key, 'utf8')).toBe(KEY);
  });

  it('a result the metric writes outside the repository, as its baseline did: kept', async () => {
    const dir = await datasetsFolder();
    const key = join(dir, 'expected.txt');
    const honest = await outsideIteration(
      outsideMetric('sys.argv[1]'),
      `python3 metric/score.py ${key} ${join(dir, 'result.json')}`,
      'def predict(key):\n    return 7\n',
    );
    expect(honest.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'keep', 100],
    ]);
    expect(JSON.parse(await readFile(join(dir, 'result.json'), 'utf8'))).toEqual({ p: 7 });
  });

  it('edited by the doer in its turn: put back before the judge measures, the change not kept', async () => {
    const dir = await datasetsFolder();
    const key = join(dir, 'expected.txt');
    const cheat = await outsideIteration(
      outsideMetric('sys.argv[1]'),
      `python3 metric/score.py ${key}`,
      'def predict(key):\n    return 3\n',
      [{ run: ['node', '-e', `require('fs').writeFileSync(${JSON.stringify(key)}, '3')`] }],
    );
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 0],
      [1, 'revert', 0],
    ]);
    expect(await readFile(key, 'utf8')).toBe(KEY);
  });

  it('a kill -9 of the runner while the measured code had changed the key: the rerun holds the loop and names it', async () => {
    const dir = await datasetsFolder();
    const key = join(dir, 'expected.txt');
    const killed = join(dir, 'killed-once');
    // The machine's fault, not the doer's: the metric kills the runner once, after the code it measures ran.
    const metric = outsideMetric('sys.argv[1]').replace(
      'p = lib.predict(KEY)\n',
      `p = lib.predict(KEY)\nimport os, signal\nif not os.path.exists(${JSON.stringify(killed)}):\n    open(${JSON.stringify(killed)}, 'w').close()\n    os.kill(os.getppid(), signal.SIGKILL)\n`,
    );
    const repo = await scriptedLoopRepo(
      { 'src/lib.py': 'def predict(key):\n    return 1\n', 'metric/score.py': metric },
      [],
      'forge-data-kill-',
    );
    await oneDoerLoopRules(repo, [
      { write: 'src/lib.py', content: OVERWRITE },
      { say: 'HYPOTHESIS: a better prediction' },
    ]);
    await writeFile(killed, ''); // the baseline is not killed
    const epic = await createValueLoop(repo, 'src/lib.py', `python3 metric/score.py ${key}`);
    await rm(killed);
    const first = await repo.ralphProcess([epic, '--agent', 'scripted']);
    expect(first.exitCode).toBe(-1); // killed by a signal
    expect(await readFile(key, 'utf8')).toBe('3');
    const rerun = await repo.ralphProcess([epic, '--agent', 'scripted']);
    expect(rerun.exitCode, rerun.stderr).toBe(3);
    expect(rerun.stderr).toContain(key);
    const ledger = await repo.ledger<{ iter?: number; decision?: string; reason?: string }>();
    const line = ledger.find((entry) => entry.iter === 1);
    expect(line?.decision).toBe('crash');
    expect(line?.reason).toContain('changed in a run that was measuring when its runner was killed');
  });
});
