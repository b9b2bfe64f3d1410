// The runner's git port (refuse mid-merge or on a locked index, commits of only what a bead changed)
// and the loop worktree, over infra/git.
import { lstat, rename } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { readLoopsRegistry } from '../autoresearch/workspace.js';
import { pathExists } from '../infra/atomic-file.js';
import { EnvironmentError } from '../infra/errors.js';
import { isForgeStatePath } from '../infra/forge-state.js';
import { createGit } from '../infra/git.js';
import { overFileCount, overLimits, regularFileSizes, type SizeLimits } from '../infra/size-limits.js';
import type { DirtyPaths, RunnerGit } from '../loop/types.js';

/** The runner's git, or undefined when `cwd` is not inside a git work tree. */
export async function createRunnerGit(options: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  exclude?: readonly string[];
}): Promise<RunnerGit | undefined> {
  const git = createGit({ cwd: options.cwd, env: options.env });
  let top: string;
  try {
    top = await git.topLevel();
    await git.statusPorcelain();
  } catch {
    return undefined;
  }

  // Read at each use: a loop registered while the run goes on is left out from then on.
  async function excludedPrefixes(): Promise<string[]> {
    const registry = await readLoopsRegistry(top).catch(() => ({}));
    const workspaces = Object.values(registry).flatMap((entry) => {
      const path = relative(top, resolve(top, entry.workspace));
      return path === '' || path.startsWith('..') || isAbsolute(path)
        ? []
        : [`${path.split(sep).join('/')}/`];
    });
    return [...(options.exclude ?? []), ...workspaces];
  }

  async function changedPaths(): Promise<string[]> {
    const prefixes = await excludedPrefixes();
    const paths = (await git.statusPorcelain()).flatMap((entry) =>
      entry.origPath === undefined ? [entry.path] : [entry.path, entry.origPath],
    );
    // Forge's own state never goes into a mechanical commit, wherever the project sits in the tree;
    // nor do the loop workspaces in loops.json.
    return [...new Set(paths)].filter(
      (path) =>
        !isForgeStatePath(path) &&
        !prefixes.some((prefix) => path === prefix.replace(/\/$/, '') || path.startsWith(prefix)),
    );
  }

  /** Cheap and exact enough to tell whether a path was written since: kind, size, times, inode. */
  async function fingerprint(path: string): Promise<string> {
    const info = await lstat(join(top, path), { bigint: true }).catch(() => undefined);
    if (info === undefined) return 'absent';
    const kind = info.isSymbolicLink() ? 'link' : info.isDirectory() ? 'dir' : 'file';
    return `${kind}:${info.size}:${info.mtimeNs}:${info.ctimeNs}:${info.ino}`;
  }

  return {
    async operationInProgress() {
      return (await git.isMergeOrRebaseInProgress()) ? 'merge or rebase' : undefined;
    },
    async indexLock() {
      const path = join(await git.gitDir(), 'index.lock');
      return (await pathExists(path)) ? path : undefined;
    },
    async dirtyPaths() {
      const paths = await changedPaths();
      return new Map(await Promise.all(paths.map(async (path) => [path, await fingerprint(path)] as const)));
    },
    async commitChanges(message, before: DirtyPaths, limits?: SizeLimits) {
      const now = await changedPaths();
      const leftOut: string[] = [];
      for (const [path, print] of before) {
        if (now.includes(path) && (await fingerprint(path)) !== print) leftOut.push(path);
      }
      // Past the limits, a file stays as the bead left it, uncommitted: the bead's work, for the user to
      // decide on, never read whole by git on the way to a commit a host would refuse (size-limits.ts).
      const made = now.filter((path) => !before.has(path));
      const tooMany = limits === undefined ? [] : overFileCount(made, limits);
      const tooLarge =
        limits === undefined || tooMany.length > 0
          ? tooMany
          : overLimits(await regularFileSizes(top, made), limits);
      const held = new Set(tooLarge.map(({ path }) => path));
      const own = made.filter((path) => !held.has(path));
      const sha = own.length === 0 ? undefined : await git.commitPaths(own, message);
      return { sha, leftOut, ...(tooLarge.length > 0 ? { tooLarge } : {}) };
    },
  };
}

/**
 * Creates (or reuses) `.forge/worktrees/<epic>` on branch `ralph-loop/<epic>` and returns its path. A
 * worktree whose checkout went (deleted while or after a run) is made again from its branch, which
 * holds every commit the loop made; what was left in its folder is moved aside first, never deleted.
 */
export async function prepareLoopWorktree(options: {
  repo: string;
  epicId: string;
  env: NodeJS.ProcessEnv;
  /** Told what was repaired, for a warning. */
  onNote?: (text: string) => void;
}): Promise<string> {
  const git = createGit({ cwd: options.repo, env: options.env });
  const safe = options.epicId.replace(/[^A-Za-z0-9._-]/g, '_');
  const path = resolve(options.repo, '.forge', 'worktrees', safe);
  const branch = `ralph-loop/${safe}`;
  let worktrees;
  try {
    worktrees = await git.worktreeList();
  } catch (error) {
    throw new EnvironmentError(`--worktree needs a git repository; ${options.repo} is not one.`, {
      hint: 'Run git init (and make a first commit), or drop --worktree.',
      cause: error,
    });
  }
  const registered = worktrees.some((entry) => resolve(entry.path) === path);
  if (await pathExists(join(path, '.git'))) return path;
  if (await pathExists(path)) {
    // Not a checkout (its .git went): git would take it for a folder of the repository around it.
    const aside = `${path}.left-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await rename(path, aside);
    options.onNote?.(
      `the loop's worktree ${path} had lost its .git; what was in it is kept in ${aside}, and the worktree is made again from ${branch}`,
    );
  } else if (registered) {
    options.onNote?.(`the loop's worktree ${path} was gone; it is made again from ${branch}`);
  }
  // The entry of a checkout that is gone would refuse the new one ("missing but already registered").
  if (registered) await git.worktreeRemove(path);
  const branchExists = (await git.resolveCommit(`refs/heads/${branch}`)) !== undefined;
  if (branchExists) await git.worktreeAdd(path, { base: branch });
  else await git.worktreeAdd(path, { branch });
  return path;
}
