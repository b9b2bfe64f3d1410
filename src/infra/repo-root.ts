// Finds the directory whose Forge state a command uses when started somewhere inside a repository,
// the way git and br find theirs: the nearest `.forge/` or `.beads/` from the start upwards.
import { statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

function exists(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false }) !== undefined;
}

/**
 * The nearest directory, from `start` up to the git top level (outside git: the filesystem root),
 * that holds `.forge/` or `.beads/`. When there is none: the git top level, so `forge-pack init`
 * from a subdirectory sets up the repository rather than a nested store; outside git, `start`.
 * Synchronous on purpose: a few stats, on the path of `ralph-loop status`.
 */
export function findRepoRoot(start: string): string {
  const from = resolve(start);
  // A worktree Forge made inside git's own directory (a parallel attempt, a population's candidate)
  // works on the repository around that directory: its beads, its config.
  const owner = projectOfGitDir(from);
  if (owner !== undefined) return findRepoRoot(owner);
  for (let dir = from; ; dir = dirname(dir)) {
    if (isDirectory(join(dir, '.forge')) || isDirectory(join(dir, '.beads'))) return dir;
    // `.git` is a directory in a clone and a file in a linked worktree or submodule: either ends the search.
    if (exists(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

/**
 * The repository whose `.git/` directory holds `path` (Forge's attempt and candidate worktrees live
 * there), or undefined when `path` is not inside a `.git/` directory.
 */
export function projectOfGitDir(path: string): string | undefined {
  const parts = resolve(path).split(sep);
  const at = parts.indexOf('.git');
  if (at < 1 || at === parts.length - 1) return undefined;
  return parts.slice(0, at).join(sep) || sep;
}
