// A doer that hides a change outside its scope behind `git replace`: the iteration's base read as a copy
// holding the change, so a diff against it shows nothing. As a user runs a loop, with the built CLI,
// the scripted agent and the embedded store.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  BONUS_HELPERS,
  BONUS_METRIC,
  createValueLoop,
  oneDoerLoopRules,
  scriptedLoopRepo,
} from '../support/loop-script.js';

// The doer's shell: the helper changed, and the base commit replaced by a copy whose tree holds it.
const REPLACE_BASE = [
  'set -e',
  'base=$(git rev-parse HEAD)',
  "printf 'export const bonus = 40;\\n' > metric/helpers.mjs",
  'git add metric/helpers.mjs',
  'tree=$(git write-tree)',
  'parents=$(git log -1 --format=%P $base | sed "s/\\([0-9a-f]\\{40\\}\\)/-p \\1/g")',
  'forged=$(git commit-tree $tree $parents -m "$(git log -1 --format=%B $base)")',
  'git replace $base $forged',
].join('\n');

beforeAll(assertBuilt);

describe('a doer that replaces the base commit', () => {
  it('is tamper: the replace ref is removed, the helper is back, and a worse value is not kept', async () => {
    const repo = await scriptedLoopRepo(
      { 'src/value.txt': '10\n', 'metric/score.mjs': BONUS_METRIC, 'metric/helpers.mjs': BONUS_HELPERS },
      [],
      'forge-replace-',
    );
    await oneDoerLoopRules(repo, [
      { write: 'src/value.txt', content: '5\n' },
      { run: ['/bin/sh', '-c', REPLACE_BASE] },
      { say: 'HYPOTHESIS: 5 is better' },
    ]);
    const epic = await createValueLoop(repo);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    const ledger = await repo.ledger<{
      iter: number;
      decision: string;
      score_after: number | null;
      tamper?: { role: string; paths: string[] }[];
    }>();
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'tamper', null],
    ]);
    expect(ledger[1]?.tamper?.[0]?.paths).toEqual([
      expect.stringMatching(/^\.git\/refs\/replace\/[0-9a-f]{40}$/),
    ]);
    expect(await readdir(join(repo.dir, '.git', 'refs', 'replace')).catch(() => [])).toEqual([]);
    expect(await repo.git('show', 'HEAD:metric/helpers.mjs')).toBe(BONUS_HELPERS.trim());
    expect(await repo.git('show', 'HEAD:src/value.txt')).toBe('10');
  });
});
