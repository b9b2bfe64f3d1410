// Detects and undoes any change a read-only step (a judge) made to the working tree.
import type { Git } from '../infra/git.js';
import { isPathInScope, snapshotWorkingTree, type WorkingTreeSnapshot } from './keep-revert.js';

export interface TreeChange {
  paths: string[];
  headMoved: boolean;
}

/**
 * Compares the tree with a snapshot taken before, puts every changed file back as it was, and returns
 * what had changed. Paths under `ignored` (the runner's own logs) are left alone.
 */
export async function restoreTree(
  git: Git,
  before: WorkingTreeSnapshot,
  ignored: readonly string[],
): Promise<TreeChange> {
  const after = await snapshotWorkingTree(git);
  const headMoved = after.headSha !== before.headSha;
  const candidates = new Set([...before.files.keys(), ...after.files.keys()]);
  const changed = [...candidates]
    .filter((path) => !isPathInScope(path, ignored))
    .filter((path) => before.files.get(path)?.blob !== after.files.get(path)?.blob)
    .sort();
  if (changed.length === 0) return { paths: [], headMoved };

  // Files that were dirty before get their saved content back; files that were clean go back to HEAD.
  const dirtyBefore = new Map([...before.files].filter(([path]) => changed.includes(path)));
  const cleanBefore = changed.filter((path) => !before.files.has(path));
  const tracked = await git.pathsInCommit(before.headSha, cleanBefore);
  const untracked = cleanBefore.filter((path) => !tracked.has(path));
  if (tracked.size > 0) await git.checkoutPathsFrom(before.headSha, [...tracked]);
  await git.writeSavedFiles(
    new Map([
      ...dirtyBefore,
      ...untracked.map((path) => [path, { blob: null, mode: '100644' as const }] as const),
    ]),
  );
  return { paths: changed, headMoved };
}
