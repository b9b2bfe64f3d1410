// Why a loop's bead may not start, beside the state guard's seal and HEAD checks (state-guard.ts): the
// user's own work in the scope before an iteration, and a question that waits for the user.
import { join } from 'node:path';
import type { Bead } from '../beads/types.js';
import { iterOf } from '../infra/labels.js';
import { relativeName } from '../infra/seal-journal.js';
import type { GuardVeto } from '../loop/types.js';
import { nameSome } from './dependency-guard.js';
import { bookkeepingPaths } from './executors/context.js';
import { readIterationState } from './iteration-state.js';
import { isPathInScope } from './keep-revert.js';
import type { StateGuardContext } from './state-guard.js';

type VetoContext = Pick<StateGuardContext, 'repo' | 'workspace' | 'files' | 'config' | 'git' | 'epicId'>;

/**
 * Why a doer may not start an iteration: uncommitted changes in its scope before the iteration began.
 * A loop commits what is in the scope after its doer (the doer's commit would hold them, judged as its
 * work) and brings the scope back to the base when it does not keep it (a revert would remove them):
 * seen by a new user, whose untracked notes in `src/` went into a doer's commit and then out of the
 * tree with its revert. Once an iteration began (its base is recorded), what is there is its doer's.
 */
export async function userWorkInScope(
  ctx: VetoContext,
  bead: Bead,
  role: string,
): Promise<GuardVeto | undefined> {
  const iter = iterOf(bead);
  if (role !== 'doer' || iter === undefined) return undefined;
  if ((await readIterationState(ctx.files, ctx.workspace, iter)).base_sha !== undefined) return undefined;
  const scope = ctx.config.scope.doer_paths;
  const ignored = bookkeepingPaths({ repo: ctx.repo, workspace: ctx.workspace });
  const paths = new Set<string>();
  for (const entry of await ctx.git.statusPorcelain()) {
    for (const path of [entry.path, entry.origPath]) {
      if (path !== undefined && isPathInScope(path, scope) && !isPathInScope(path, ignored)) paths.add(path);
    }
  }
  if (paths.size === 0) return undefined;
  return {
    reason: 'refused',
    message:
      `The loop's scope (${scope.join(', ')}) holds uncommitted changes of yours: ${nameSome([...paths].sort())}. ` +
      `A loop commits what is in its scope after each doer and undoes what it does not keep, so they would ` +
      `be committed as the doer's work or removed with its revert. Commit or stash them, then run again ` +
      `(doer ${bead.id} is left open).`,
  };
}

/**
 * A question waits for the user: nothing runs until it is answered, even what a strategist stamped
 * beside it (seen: iteration 2 ran whole past a question asked with it, and strategist-2 then failed
 * twice on stamping while asking). The resume-strategist is how an answer comes back.
 */
export async function questionWaits(ctx: VetoContext, role: string): Promise<GuardVeto | undefined> {
  const question = join(ctx.workspace, 'needs-human.md');
  if (role === 'resume-strategist' || !(await ctx.files.exists(question))) return undefined;
  return {
    reason: 'needs_human',
    message: `The loop is waiting for your answer in ${relativeName(ctx.repo, question)}. Answer it in that file, then run: ralph-loop resume ${ctx.epicId}`,
  };
}
