// A doer that changes a file git ignores which the metric reads: data, a local override, a build
// output. No scope check or revert sees an ignored file, so the runner puts back (or removes) what an
// agent changed there, and stops the loop where it cannot. As a user runs a loop, with the built CLI,
// the scripted agent and the embedded store.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  worseValueThen,
  scriptedLoopRepo,
  type ScriptedLoopRepo,
} from '../support/loop-script.js';

// The metric: src/value.txt times a factor from ignored data, or from a local override when there is
// one, and the first byte of data/big.bin, which it writes itself when it is missing.
const METRIC = `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
if (!existsSync('data/big.bin')) writeFileSync('data/big.bin', Buffer.alloc(2 * 1024 * 1024, 1));
const value = Number(readFileSync('src/value.txt', 'utf8'));
const weights = existsSync('data/override.json') ? 'data/override.json' : 'data/weights.json';
const factor = JSON.parse(readFileSync(weights, 'utf8')).factor * readFileSync('data/big.bin')[0];
console.log(JSON.stringify({ value: value * factor }));
`;
const WEIGHTS = '{"factor": 1}\n';
/** What the doer runs: the first byte of data/big.bin set to 10, in place. */
const FORGE_BIG = [
  'node',
  '-e',
  "const fs = require('node:fs'); const fd = fs.openSync('data/big.bin', 'r+'); fs.writeSync(fd, Buffer.from([10]), 0, 1, 0);",
];
/** Past what the runner keeps a copy of: 2 MB, its first byte a factor of 1. */
const BIG = Buffer.alloc(2 * 1024 * 1024, 1);

beforeAll(assertBuilt);

async function loopRepo(
  doerSteps: unknown[],
  loopArgs: string[] = [],
  files: Record<string, string> = {},
  weightsLine?: string,
): Promise<{ repo: ScriptedLoopRepo; epic: string }> {
  const metric = weightsLine === undefined ? METRIC : METRIC.replace(/^const weights = .*$/m, weightsLine);
  const repo = await scriptedLoopRepo(
    {
      '.gitignore': '.forge/\n.beads/\n.autoresearch/\ndata/\n',
      'src/value.txt': '10\n',
      'metric/score.mjs': metric,
      'package.json': '{"type":"module"}\n',
      'data/weights.json': WEIGHTS,
      'data/big.bin': BIG.toString('latin1'),
      ...files,
    },
    [],
    'forge-ignored-',
  );
  await oneDoerLoopRules(repo, doerSteps);
  return { repo, epic: await createValueLoop(repo, 'src/value.txt', 'node metric/score.mjs', loopArgs) };
}

describe('a doer that changes ignored files the metric reads', () => {
  // Git keeps no ignored file, so a score that rests on one is not the commit's, and a revert would
  // leave it behind. Seen: src/cache/ ignored in the doer's scope, a value written there by its turn
  // and read by the code it changed, kept at 1000 from 10.
  it('in its own scope too: what it made is removed before the metric runs', async () => {
    const { repo, epic } = await loopRepo(
      [
        { write: 'src/value.txt', content: '5\n' },
        { write: 'src/cache/factor.json', content: '{"factor": 200}\n' },
        { say: 'HYPOTHESIS: a cached factor' },
      ],
      [],
      { '.gitignore': '.forge/\n.beads/\n.autoresearch/\ndata/\nsrc/cache/\n' },
      "const weights = existsSync('src/cache/factor.json') ? 'src/cache/factor.json' : existsSync('data/override.json') ? 'data/override.json' : 'data/weights.json';",
    );
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 10],
      [1, 'revert', 5],
    ]);
    expect(run.stderr).toMatch(
      /removed the ignored files the doer made or changed \(src\/cache\/factor\.json\)/,
    );
    await expect(stat(join(repo.dir, 'src/cache/factor.json'))).rejects.toThrow(/ENOENT/);
  });

  it('has what it changed put back, and what it made removed, before the metric runs', async () => {
    const { repo, epic } = await loopRepo([
      { write: 'src/value.txt', content: '5\n' },
      { write: 'data/weights.json', content: '{"factor": 10}\n' },
      { write: 'data/override.json', content: '{"factor": 20}\n' },
      { say: 'HYPOTHESIS: 5 is better' },
    ]);
    const before = await stat(join(repo.dir, 'data/weights.json'));
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 10],
      [1, 'revert', 5],
    ]);
    expect(run.stderr).toMatch(/put back the ignored files the doer changed \(data\/weights\.json\)/);
    expect(run.stderr).toMatch(/removed the ignored files the doer made or changed \(data\/override\.json\)/);
    expect(await readFile(join(repo.dir, 'data/weights.json'), 'utf8')).toBe(WEIGHTS);
    // Its times too (to the microsecond utimes keeps): a build tool that compares them sees it as it was.
    const after = await stat(join(repo.dir, 'data/weights.json'));
    expect(Math.abs(after.mtimeMs - before.mtimeMs)).toBeLessThan(0.01);
    await expect(stat(join(repo.dir, 'data/override.json'))).rejects.toThrow(/ENOENT/);
  });

  it('gets tamper for a change it cannot be put back from, and the loop stops until a person looks', async () => {
    const { repo, epic } = await loopRepo(worseValueThen(FORGE_BIG));
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 10],
      [1, 'tamper', null],
    ]);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/The doer changed ignored files \(data\/big\.bin\)/);
    const again = await repo.ralph([epic, '--agent', 'scripted']);
    expect(again.exitCode, again.stderr).toBe(3);
    expect(again.stderr).toMatch(/Put them back as they were \(.*scope\.rebuilt_paths\), then run again/);
    // Put back by the person: the loop goes on to its end.
    await writeFile(join(repo.dir, 'data/big.bin'), BIG);
    const resumed = await repo.ralph([epic, '--agent', 'scripted']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
  });

  it('has what it changed under a path the metric writes again removed, with --rebuilt', async () => {
    const { repo, epic } = await loopRepo(worseValueThen(FORGE_BIG), ['--rebuilt', 'data/big.bin']);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 10],
      [1, 'revert', 5],
    ]);
    expect(run.stderr).toMatch(/removed the ignored files the doer made or changed \(data\/big\.bin\)/);
    // Written again by the metric, as it was.
    expect((await readFile(join(repo.dir, 'data/big.bin')))[0]).toBe(1);
  });

  it('takes a large file written again with the same bytes for no change, and sets its times back', async () => {
    const rewrite =
      "const fs = require('node:fs'); fs.writeFileSync('data/big.bin', fs.readFileSync('data/big.bin'));";
    const { repo, epic } = await loopRepo([
      { write: 'src/value.txt', content: '12\n' },
      { sleep_ms: 20 },
      { run: ['node', '-e', rewrite] },
      { say: 'HYPOTHESIS: 12 is better' },
    ]);
    const before = await stat(join(repo.dir, 'data/big.bin'));
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 10],
      [1, 'keep', 12],
    ]);
    expect(run.stderr).toMatch(/put back the ignored files the doer changed \(data\/big\.bin\)/);
    expect(Math.abs((await stat(join(repo.dir, 'data/big.bin'))).mtimeMs - before.mtimeMs)).toBeLessThan(
      0.01,
    );
  });
});
