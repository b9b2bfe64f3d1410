// The runner's git port (refuse mid-merge, mechanical commits) and the loop worktree, over infra/git.
import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EnvironmentError } from '../infra/errors.js';
import { createGit } from '../infra/git.js';
import type { Git } from '../loop/types.js';

/** Forge's own state never goes into a mechanical commit. */
const NEVER_COMMITTED = ['.forge/', '.beads/'];

/** The runner's git, or undefined when `cwd` is not inside a git work tree (then nothing is committed). */
export async function createRunnerGit(options: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  exclude?: readonly string[];
}): Promise<Git | undefined> {
  const git = createGit({ cwd: options.cwd, env: options.env });
  try {
    await git.statusPorcelain();
  } catch {
    return undefined;
  }
  const excluded = [...NEVER_COMMITTED, ...(options.exclude ?? [])];
  return {
    async operationInProgress() {
      return (await git.isMergeOrRebaseInProgress()) ? 'merge or rebase' : undefined;
    },
    async commitAll(message) {
      const paths = (await git.statusPorcelain())
        .flatMap((entry) => (entry.origPath === undefined ? [entry.path] : [entry.path, entry.origPath]))
        .filter(
          (path) => !excluded.some((prefix) => path === prefix.replace(/\/$/, '') || path.startsWith(prefix)),
        );
      if (paths.length === 0) return undefined;
      return git.commitPaths([...new Set(paths)], message);
    },
  };
}

/** Creates (or reuses) `.forge/worktrees/<epic>` on branch `ralph-loop/<epic>` and returns its path. */
export async function prepareLoopWorktree(options: {
  repo: string;
  epicId: string;
  env: NodeJS.ProcessEnv;
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
  const existing = worktrees.find((entry) => resolve(entry.path) === path);
  if (existing !== undefined) return path;
  const branchExists = (await git.resolveCommit(`refs/heads/${branch}`)) !== undefined;
  const present = await access(join(path, '.git')).then(
    () => true,
    () => false,
  );
  if (present) return path;
  if (branchExists) await git.worktreeAdd(path, { base: branch });
  else await git.worktreeAdd(path, { branch });
  return path;
}
