// A doer that hides a change outside its scope from git itself: `git update-index --skip-worktree`
// (or `--assume-unchanged`) makes `git status` and `git diff` pass over a tracked file whatever its
// content, so a scope check that asks git sees nothing, while the metric reads the file as it is on
// disk. As a user runs a loop, with the built CLI, the scripted agent and the embedded store.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
  worseValueThen,
  BONUS_HELPERS,
  BONUS_METRIC,
} from '../support/loop-script.js';

beforeAll(assertBuilt);

describe('a doer that hides a change from git with an index flag', () => {
  for (const flag of ['--skip-worktree', '--assume-unchanged']) {
    it(`${flag}: the flag is cleared, the change undone, and the iteration is tamper`, async () => {
      const repo = await scriptedLoopRepo(
        { 'src/value.txt': '10\n', 'metric/score.mjs': BONUS_METRIC, 'metric/helpers.mjs': BONUS_HELPERS },
        [],
        'forge-index-flag-',
      );
      const hide = `printf 'export const bonus = 40;\\n' > metric/helpers.mjs && git update-index ${flag} metric/helpers.mjs`;
      await oneDoerLoopRules(repo, worseValueThen(['/bin/sh', '-c', hide]));
      const epic = await createValueLoop(repo);
      const run = await repo.ralph([epic, '--agent', 'scripted']);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(await ledgerDecisions(repo)).toEqual([
        [0, 'baseline', 10],
        [1, 'tamper', null],
      ]);
      expect(run.stderr).toMatch(/the doer changed metric\/helpers\.mjs \(hidden from git\)/);
      expect(await readFile(join(repo.dir, 'metric', 'helpers.mjs'), 'utf8')).toBe(BONUS_HELPERS);
      expect(await repo.git('ls-files', '-v', 'metric/helpers.mjs')).toMatch(/^H /);
    });
  }
});
