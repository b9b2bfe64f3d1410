// One committing run per working tree. Two runs that commit in the same checkout take each other's
// files into their commits, and a parallel run's undo of a red gate resets the branch over the other
// run's landed commit (found by a user running two epics side by side). A loop reverts what it did
// not keep, so it always holds the tree; a plain epic holds it when it commits (--auto-commit,
// --parallel, the queue). Separate worktrees (`--worktree`) each have their own.
import { join } from 'node:path';
import { claimHost } from '../infra/host-claim.js';
import { createFileLock, lockRefusalHint, type FileLock } from '../infra/lock-file.js';
import { LockedError } from '../loop/runner.js';
import type { CliDeps } from './deps.js';

/** The lock of the working tree whose git directory is `gitDir` (its own, in a linked worktree). */
export function createTreeLock(gitDir: string, host: string): FileLock {
  return createFileLock({ path: join(gitDir, 'forge-loop.lock'), host, claimHost });
}

/**
 * Takes the tree for epic `epicId`'s run, or refuses with the running one named. The same epic's second
 * runner is left to its epic lock, which names it as such; a pipeline's stage runs inside its parent's
 * run, in the same process, and works in the tree its parent holds.
 */
export async function holdTree(lock: FileLock, epicId: string, deps: CliDeps, runId: string): Promise<void> {
  const acquired = await lock.acquire({
    pid: deps.pid,
    host: deps.host,
    started_at: new Date(deps.clock.now()).toISOString(),
    epic: epicId,
    run_id: runId,
  });
  if (acquired.ok) return;
  const h = acquired.holder;
  if (h.epic === epicId) return;
  if (h.pid === deps.pid && h.host === deps.host) return;
  throw new LockedError(
    `Another run that commits (epic ${h.epic}, pid ${h.pid} on ${h.host}, started ${h.started_at}) is running in this working tree; two would take or undo each other's commits.`,
    lockRefusalHint(
      lock.path,
      h,
      deps.host,
      `Run this epic in its own worktree: ralph-loop ${epicId} --worktree (or wait for ${h.epic} to finish)`,
    ),
  );
}

/** The tree lock of a plain epic's committing run, in the git directory of the tree it runs in. */
export async function plainTreeLock(cwd: string, deps: CliDeps): Promise<FileLock> {
  const { createGit } = await import('../infra/git.js');
  return createTreeLock(await createGit({ cwd, env: deps.env }).gitDir(), deps.host);
}
