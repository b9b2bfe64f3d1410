// Git submodules in a loop's tree: each is a repository of its own, whose files the superproject's
// status and diff pass over (Forge's scope check runs with --ignore-submodules), so a doer's edit inside
// one outside its scope went unseen. Seen: the metric's expected answers lived in a submodule, and a
// doer that rewrote them there (committing inside it, even) was kept at 8 for a change worth 1.
import { join } from 'node:path';
import { pathExists } from '../infra/atomic-file.js';
import type { Git } from '../infra/git.js';
import { isPathInScope } from './keep-revert.js';
import { describeTreeChange, restoreTree, snapshotTree, type TreeSnapshot } from './tree-snapshot.js';

export interface SubmoduleSnapshots {
  /** Puts back what changed in each submodule since the snapshot; names each one changed, and how. */
  restore(): Promise<string[]>;
}

/**
 * Snapshots the submodules of `base` (gitlinks in its tree) that lie outside `scope`: HEAD, the index
 * and every changed file, as the soft judge's tree guard does for the superproject. In a repository
 * without a .gitmodules file, nothing is spent.
 */
export async function snapshotSubmodules(
  git: Git,
  gitAt: ((cwd: string) => Git) | undefined,
  repo: string,
  base: string,
  scope: readonly string[],
): Promise<SubmoduleSnapshots> {
  const taken: { path: string; git: Git; snapshot: TreeSnapshot }[] = [];
  // `git submodule add` writes .gitmodules: without one, no tree walk is spent.
  if (gitAt !== undefined && (await pathExists(join(repo, '.gitmodules')))) {
    const links = (await git.listTree(base, [])).filter((entry) => entry.mode === '160000');
    for (const { path } of links) {
      if (isPathInScope(path, scope)) continue;
      const sub = gitAt(join(repo, path));
      // Not checked out (no `git submodule update`): nothing there for an agent to change or a metric to read.
      const snapshot = await snapshotTree(sub).catch(() => undefined);
      if (snapshot !== undefined) taken.push({ path, git: sub, snapshot });
    }
  }
  return {
    async restore() {
      const changed: string[] = [];
      for (const { path, git: sub, snapshot } of taken) {
        const what = describeTreeChange(await restoreTree(sub, snapshot, []));
        if (what !== undefined) changed.push(`${path} (submodule: ${what})`);
      }
      return changed;
    },
  };
}
