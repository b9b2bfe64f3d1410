// A loop whose metric builds the artifact where git ignores it and runs what it built (`cc -o build/app`
// then `./build/app`; `cargo build` then `./target/release/app`): the file the metric names is the
// build's output, written anew by every honest run and by a doer that builds its change to try it.
// Seen before run-outputs.ts: every iteration gave no score ("changed build/app while the metric command
// ran it") and a doer that built its change was tamper ("the doer changed build/app"). A file the metric
// names that the baseline did not write (a dataset kept out of git) is held as before. As a user runs
// a loop, with the built CLI, the scripted agent and the embedded store; the "build" is a shell
// concatenation, so no compiler is needed.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
  valueLoopArgs,
} from '../support/loop-script.js';

const APP = '#!/bin/sh\necho 1\n';
/**
 * Builds build/app from the scope's parts, runs it, and adds the bonus in the data file its command
 * names (`data/bonus.txt`, which git ignores).
 */
const METRIC = [
  '#!/bin/sh',
  'set -e',
  'mkdir -p build',
  'cat src/*.part > build/app',
  'chmod +x build/app',
  'v=$(./build/app)',
  'b=$(cat "$1")',
  'printf \'{"value": %s}\\n\' "$((v + b))"',
  '',
].join('\n');
/** The metric's build, as a doer runs it by hand to try its change. */
const BUILD = [
  'sh',
  '-c',
  'mkdir -p build && cat src/*.part > build/app && chmod +x build/app && ./build/app',
];

beforeAll(async () => {
  await assertBuilt();
});

async function iteration(steps: unknown[], args: readonly string[] = []) {
  const repo = await scriptedLoopRepo(
    {
      '.gitignore': '.forge/\n.beads/\n.autoresearch/\nbuild/\ndata/\n',
      'src/app.part': APP,
      'metric/score.sh': METRIC,
      'data/bonus.txt': '0\n',
    },
    [],
    'forge-outputs-',
  );
  await oneDoerLoopRules(repo, [...steps, { say: 'HYPOTHESIS: a larger value' }]);
  const created = await repo.forge(valueLoopArgs('src/app.part', 'sh metric/score.sh data/bonus.txt', args));
  expect(created.exitCode, created.stderr).toBe(0);
  // Said when the loop is made: what its runs may write.
  expect(created.stderr).toContain("The baseline's runs wrote build/app: later runs may write them too");
  const epic = created.stdout.trim();
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  const ledger = await repo.ledger<{ decision?: string; reason?: string; kind?: string }>();
  return {
    decisions: await ledgerDecisions(repo),
    reason: ledger.find((line) => line.decision !== undefined && line.decision !== 'baseline')?.reason,
    events: ledger.filter((line) => line.kind !== undefined).map((line) => line.kind),
    app: await readFile(join(repo.dir, 'src', 'app.part'), 'utf8'),
    bonus: await readFile(join(repo.dir, 'data', 'bonus.txt'), 'utf8'),
  };
}

const better = { write: 'src/app.part', content: '#!/bin/sh\necho 5\n' };

describe('a metric that runs what it builds where git ignores it', () => {
  it('scores and keeps a better build, run after run', async () => {
    const honest = await iteration([better], ['--repeat', '3']);
    expect(honest.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'keep', 5],
    ]);
    // The build's rewrite is not a person changing the loop's settings either.
    expect(honest.events).toEqual([]);
  });

  it('keeps the change of a doer that built it to try it', async () => {
    const honest = await iteration([better, { run: BUILD }]);
    expect(honest.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'keep', 5],
    ]);
  });

  it('still holds a data file the command names that the baseline did not write: no score, put back', async () => {
    const cheat = await iteration([
      {
        write: 'src/app.part',
        content: '#!/bin/sh\necho 1000 > data/bonus.txt\necho 5\n',
      },
    ]);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'crash', null],
    ]);
    expect(cheat.reason).toContain("the doer's code changed data/bonus.txt while the metric command ran it");
    expect(cheat.bonus).toBe('0\n');
    expect(cheat.app).toBe(APP);
  });
});
