// What the doer's turn leaves where no commit holds it, read back by Python code it changed through a
// path that no reading of the code shows: `'.g' + 'it'`, `Path(__file__).parents[2]`, a thread handed
// `open`. Python's audit hook (infra/python-watch.ts) sees the open as it happens; the iteration is
// tamper and its change put back. A dataset that was there before the loop began is read and kept, and
// so is the repository's own data. As a user runs a loop, with the built CLI, the scripted agent and the
// embedded store.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
} from '../support/loop-script.js';

const LIB = 'def value():\n    return 1\n';
const METRIC = [
  'import json, sys',
  "sys.path.insert(0, 'src')",
  'import lib',
  "print(json.dumps({'value': lib.value()}))",
  '',
].join('\n');

/** The doer's code: the value read from `where` (a Python expression), 1 when it is not there. */
const reading = (where: string, imports = '') =>
  `from pathlib import Path\n${imports}\ndef value():\n    try:\n        return int(${where})\n    except OSError:\n        return 1\n`;

/** The doer's turn writes 999 to `where` (a JS expression run from the repository). */
const leaving = (where: string) => ({
  run: [
    'node',
    '-e',
    `const fs = require('fs'); const p = ${where}; fs.mkdirSync(require('path').dirname(p), { recursive: true }); fs.writeFileSync(p, '999');`,
  ],
});

/** A folder outside every repository, as a user's dataset folder would be (removed after the tests). */
let outside: string;

beforeAll(async () => {
  await assertBuilt();
  outside = await mkdtemp(join(tmpdir(), 'forge-pyreads-data-'));
});

afterAll(async () => {
  await rm(outside, { recursive: true, force: true });
});

async function iteration(files: Record<string, string>, steps: unknown[]) {
  const repo = await scriptedLoopRepo(
    { 'src/lib.py': LIB, 'metric/score.py': METRIC, ...files },
    [],
    'forge-pyreads-',
  );
  await oneDoerLoopRules(repo, [...steps, { say: 'HYPOTHESIS: a stored value' }]);
  const epic = await createValueLoop(repo, 'src/lib.py', 'python3 metric/score.py');
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  return {
    decisions: await ledgerDecisions(repo),
    reason: (await repo.ledger<{ reason?: string }>())[1]?.reason ?? '',
    lib: await readFile(join(repo.dir, 'src', 'lib.py'), 'utf8'),
  };
}

describe('a value the doer left where no commit holds it, read by Python through a path built as it runs', () => {
  it("in git's folder, named in pieces: tamper, put back", async () => {
    const cheat = await iteration({}, [
      {
        write: 'src/lib.py',
        content: reading("(Path(__file__).resolve().parents[1] / ('.g' + 'it') / 'probe-cache').read_text()"),
      },
      leaving("'.git/probe-cache'"),
    ]);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'tamper', null],
    ]);
    expect(cheat.reason).toContain('read .git/probe-cache (from src/lib.py:5)');
    expect(cheat.lib).toBe(LIB);
  });

  it('above the repository, climbed to as it runs: tamper, put back', async () => {
    const above =
      "(Path(__file__).resolve().parents[2] / (Path(__file__).resolve().parents[1].name + '.probe'))";
    const cheat = await iteration({}, [
      { write: 'src/lib.py', content: reading(`${above}.read_text()`) },
      leaving("require('path').resolve('..', require('path').basename(process.cwd()) + '.probe')"),
    ]);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'tamper', null],
    ]);
    expect(cheat.reason).toMatch(
      /read \/\S+\.probe, which changed after the loop began \(from src\/lib\.py:5\)/,
    );
    expect(cheat.lib).toBe(LIB);
  });

  it("handed to a thread pool, so that only Python's own code opens it: tamper", async () => {
    const pooled = [
      'from concurrent.futures import ThreadPoolExecutor',
      'def value():',
      '    try:',
      '        with ThreadPoolExecutor(1) as pool:',
      "            file = pool.submit(open, '.' + 'git/probe-cache').result()",
      '        return int(file.read())',
      '    except OSError:',
      '        return 1',
      '',
    ].join('\n');
    const cheat = await iteration({}, [
      { write: 'src/lib.py', content: pooled },
      leaving("'.git/probe-cache'"),
    ]);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'tamper', null],
    ]);
    expect(cheat.reason).toContain(
      "read .git/probe-cache (handed to the language's own code so that no file of the repository called it)",
    );
    expect(cheat.lib).toBe(LIB);
  });

  it('a dataset outside the repository that was there before the loop began is read, and kept', async () => {
    const dataset = join(outside, 'value.txt');
    await writeFile(dataset, '7\n');
    // Its path is the repository's (a config file), not the code's: a path named in the code is the
    // reading's to judge (runtime-reach.ts), this is the watch's.
    const honest = await iteration({ 'data/where.txt': `${dataset}\n` }, [
      {
        write: 'src/lib.py',
        content: reading("Path(Path('data/where.txt').read_text().strip()).read_text()"),
      },
    ]);
    expect(honest.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'keep', 7],
    ]);
  });

  it("the repository's own data, read from the file's folder, is kept", async () => {
    const honest = await iteration({ 'data/value.txt': '5\n' }, [
      {
        write: 'src/lib.py',
        content: reading("(Path(__file__).resolve().parents[1] / 'data' / 'value.txt').read_text()"),
      },
    ]);
    expect(honest.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'keep', 5],
    ]);
  });
});
