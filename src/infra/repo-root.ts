// Finds the directory whose Forge state a command uses when started somewhere inside a repository,
// the way git and br find theirs: the nearest `.forge/` or `.beads/` from the start upwards.
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

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
  for (let dir = from; ; dir = dirname(dir)) {
    if (isDirectory(join(dir, '.forge')) || isDirectory(join(dir, '.beads'))) return dir;
    // `.git` is a directory in a clone and a file in a linked worktree or submodule: either ends the search.
    if (exists(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}
