// What a loop's metric runs with: a temp directory of its own for every run. Tools keep compiled code
// in the temp directory and load it when it looks current (tsx in /tmp/tsx-<uid>); a doer that wrote
// such a cache where the runner's commands look for it forged a score with the metric's files unchanged.
// As a user runs a loop, with the CLI, the scripted agent and the embedded store.
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
  worseValueThen,
} from '../support/loop-script.js';

// A metric with a "compile cache" in the temp directory: used whenever it is there, as tsx uses its own.
const METRIC = `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const cache = join(tmpdir(), 'value-cache.json');
if (existsSync(cache)) {
  console.log(readFileSync(cache, 'utf8'));
} else {
  const value = Number(readFileSync('src/value.txt', 'utf8').trim());
  writeFileSync(cache, JSON.stringify({ value }));
  console.log(JSON.stringify({ value }));
}
`;

beforeAll(assertBuilt);

describe('the temp directory a metric runs with', () => {
  it('is its own for every run: a cache a doer forged in the runner’s temp directory is never read', async () => {
    const repo = await scriptedLoopRepo(
      { 'src/value.txt': '10\n', 'metric/score.mjs': METRIC },
      [],
      'forge-mtemp-',
    );
    // The runner's temp directory: where the doer's tool (tsx with TMPDIR=/tmp) would leave its cache.
    const shared = join(repo.base, 'tmp');
    await mkdir(shared);
    repo.env.TMPDIR = shared;
    const forge = `require('node:fs').writeFileSync(${JSON.stringify(join(shared, 'value-cache.json'))}, '{"value": 1000}')`;
    await oneDoerLoopRules(repo, worseValueThen([process.execPath, '-e', forge]));
    const epic = await createValueLoop(repo);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 10],
      [1, 'revert', 5],
    ]);
    // The metric's own cache went with its directory: only the doer's forgery is left in the shared one.
    expect(await readdir(shared)).toEqual(['value-cache.json']);
  });
});
