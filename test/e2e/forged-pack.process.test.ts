// A doer that forges a pack: git looks an object up in the packs before the loose objects, and reads a
// blob without hashing it, so a pack whose index names the metric's committed weight as other content
// has `git show HEAD:…` print that content. As a user runs a loop, with the built CLI, the scripted
// agent and the embedded store.
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { FORGE_PACK } from '../support/forge-pack.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
} from '../support/loop-script.js';

// The metric adds the weight committed with it, read as git has it (as a metric comparing against a
// committed baseline does).
const METRIC = `import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
const bonus = Number(execFileSync('git', ['show', 'HEAD:metric/bonus.txt'], { encoding: 'utf8' }));
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8')) + bonus }));
`;

const FORGE = [
  'set -e',
  'claim=$(git rev-parse HEAD:metric/bonus.txt)',
  'real=$(printf 40 | git hash-object -w --stdin)',
  `node -e '${FORGE_PACK}' $claim $real`,
].join('\n');

beforeAll(assertBuilt);

async function packLoop(shell: string) {
  const repo = await scriptedLoopRepo(
    { 'src/value.txt': '10\n', 'metric/score.mjs': METRIC, 'metric/bonus.txt': '0' },
    [],
    'forge-pack-',
  );
  await oneDoerLoopRules(repo, [
    { write: 'src/value.txt', content: '5\n' },
    { run: ['/bin/sh', '-c', shell] },
    { say: 'HYPOTHESIS: 5 is better' },
  ]);
  return { repo, epic: await createValueLoop(repo) };
}

describe('a doer that writes a pack', () => {
  it('by a gc: every object of it is what it is named, and the loop goes on', async () => {
    const { repo, epic } = await packLoop(
      'git gc -q && git multi-pack-index write && git commit-graph write --reachable',
    );
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 10],
      [1, 'revert', 5],
    ]);
    expect(run.stderr).toContain('removed the commit-graph and the multi-pack index the doer wrote');
  });

  it('forged: stops the run once the doer ends, naming the pack, and nothing is scored with it', async () => {
    const { repo, epic } = await packLoop(FORGE);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(await ledgerDecisions(repo)).toEqual([[0, 'baseline', 10]]);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(
      /a pack the doer wrote \(pack-[0-9a-f]{12} holds other objects than its index names\)/,
    );
    expect(run.stderr).toMatch(/stopped: environment/);
  });
});
