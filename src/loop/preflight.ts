// Before a run claims or writes anything: refuse a work tree no bead could be committed in.
import { EnvironmentError } from '../infra/errors.js';
import { namePaths } from './run-context.js';
import type { DirtyPaths, RunnerGit, RunnerOptions } from './types.js';

/** Throws, naming the fix, on a git operation under way, a left index lock, or a dirty tree to auto-commit on. */
export async function refuseUncommittableTree(
  o: Pick<RunnerOptions, 'cwd' | 'autoCommit' | 'allowDirty'>,
  git: RunnerGit | undefined,
  /**
   * The tree before the last bead's first attempt (ControlFiles.treeBefore): a path dirty now that was
   * not dirty then is that bead's unfinished work, left by a run that was killed or interrupted, and
   * its rerun commits it; only what was dirty then is the user's.
   */
  leftBy?: Promise<{ bead: string; dirty: DirtyPaths } | undefined>,
): Promise<void> {
  if (git === undefined) return;
  // Both asked at once (each is a git process); a refusal still names the operation first.
  const [operation, indexLock] = await Promise.all([git.operationInProgress(), git.indexLock()]);
  if (operation !== undefined) {
    throw new EnvironmentError(
      `A git ${operation} is in progress in ${o.cwd}; ralph-loop will not start on it.`,
      {
        hint: `Finish or abort the ${operation} (git ${operation} --continue / --abort), then run again.`,
      },
    );
  }
  if (indexLock !== undefined) {
    throw new EnvironmentError(
      `Git's index is locked (${indexLock} exists): another git command is running, or one was killed and left it behind, and no commit can be made until it is gone.`,
      { hint: `If no git command is running, delete ${indexLock}, then run again.` },
    );
  }
  if (o.autoCommit && o.allowDirty !== true) {
    const before = await leftBy?.catch(() => undefined);
    const dirty = [...(await git.dirtyPaths()).keys()].filter(
      (path) => before === undefined || before.dirty.has(path),
    );
    if (dirty.length > 0) {
      throw new EnvironmentError(
        `--auto-commit will not start on a dirty tree: ${namePaths(dirty)} ${dirty.length === 1 ? 'has' : 'have'} uncommitted changes of your own, which Forge never commits.`,
        {
          hint: 'Commit or stash them first, or run with --allow-dirty: those paths are then left out of every bead commit.',
        },
      );
    }
  }
}
