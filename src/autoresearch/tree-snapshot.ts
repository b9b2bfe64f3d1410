// Detects and undoes any change a step that must leave the tree alone made to the repository (HEAD,
// index, working tree): a soft judge, a metric, guard or track run, an agent that is not the doer.
import type { Git, SavedFile } from '../infra/git.js';
import { dropPin, keeper, keptFiles, pinStep } from './kept-refs.js';
import { isPathInScope, saveDirty, snapshotWorkingTree, type TakenSnapshot } from './keep-revert.js';

/** The repository before a read-only step: the working tree's dirty files, plus where HEAD was and the index. */
export interface TreeSnapshot extends TakenSnapshot {
  /** The index as a tree object; undefined when it could not be written (unmerged entries). */
  indexTree: string | undefined;
  /** Files saved whatever git says of them (clean, or ignored): a metric's own files. */
  watched: readonly string[];
  /** The ref keeping the saved blobs from git's gc until the put-back (kept-refs.ts). */
  pin?: string;
}

export interface RestoreTreeOptions {
  /**
   * Leave the files that appeared during the step, neither in HEAD nor there before nor watched: a
   * command's output (a build, a cache a `.gitignore` misses), which the next command may need.
   */
  leaveNewFiles?: boolean;
}

export interface TreeChange {
  /** Working-tree files that had changed and were put back, sorted. */
  paths: string[];
  /** HEAD had moved (another commit, or another branch) and was put back. */
  headMoved: boolean;
  /** Where what was undone is kept (`refs/forge/undone/<stamp>/…`), when anything was. */
  keptUnder?: string;
  /** Where the step had left HEAD, when it had moved it; `branch` when it had left the branch it was on. */
  movedTo?: { sha: string; branch?: string };
  /** The index had changed (something staged or unstaged) and was put back. */
  indexChanged: boolean;
  /** With `leaveNewFiles`: the files that appeared during the step and were left, sorted. */
  left?: string[];
}

/** Take it right before the read-only step runs; `watched` files are saved even when git sees no change. */
export async function snapshotTree(git: Git, watched: readonly string[] = []): Promise<TreeSnapshot> {
  const indexTree = await git.writeIndexTree().catch(() => undefined);
  const taken = await snapshotWorkingTree(git);
  const files = await withWatched(git, taken.files, watched);
  // With no file saved the index is HEAD's tree, which HEAD keeps: nothing to pin then.
  const pin = await pinStep(git, files, indexTree === undefined ? [] : [indexTree]);
  return { ...taken, files, indexTree, watched, ...(pin === undefined ? {} : { pin }) };
}

/** A file git ignores is not in its status: a watched one is compared by its content all the same. */
async function withWatched(
  git: Git,
  files: ReadonlyMap<string, SavedFile>,
  watched: readonly string[],
): Promise<ReadonlyMap<string, SavedFile>> {
  const extra = watched.filter((path) => !files.has(path));
  if (extra.length === 0) return files;
  return new Map([...files, ...(await git.saveFiles(extra))]);
}

/**
 * Compares the repository with a snapshot taken before and puts back what had changed: HEAD first (the
 * branch it was on, at the commit it was at; a commit made meanwhile stays only in the reflog), then
 * the index, then every changed file. Paths under `ignored` (the runner's own logs) are left alone.
 */
export async function restoreTree(
  git: Git,
  before: TreeSnapshot,
  ignored: readonly string[],
  options: RestoreTreeOptions = {},
): Promise<TreeChange> {
  const change = await putTreeBack(git, before, ignored, options);
  // Only once put back: a put-back that failed leaves the pin, for the next try (or a day).
  await dropPin(git, before.pin);
  return change;
}

async function putTreeBack(
  git: Git,
  before: TreeSnapshot,
  ignored: readonly string[],
  options: RestoreTreeOptions,
): Promise<TreeChange> {
  // Where HEAD is and what is dirty, in one call: the files' list serves below unless HEAD or the index
  // has to be put back first.
  const found = await git.statusWithHead();
  const { sha, branch } = found.head;
  const headMoved = sha !== before.headSha || branch !== before.branch;
  // What is undone is kept first, under one ref per put-back: whoever made it (an agent, or the user
  // committing while an agent ran: fault injection), a commit reset away is not left to the reflog.
  const keep = keeper(git);
  if (headMoved && sha !== before.headSha) await keep(new Map([['head', sha]]));
  if (headMoved) {
    if (before.branch === undefined) {
      await git.detachHead(before.headSha);
    } else {
      if (branch !== before.branch) await git.attachHead(before.branch, before.headSha);
      await git.resetSoft(before.headSha);
    }
  }
  // With HEAD back, the index decides what `git status` calls dirty: put it back before comparing files.
  const indexNow = await git.writeIndexTree().catch(() => undefined);
  const indexChanged = indexNow !== before.indexTree;
  if (indexChanged && before.indexTree !== undefined) await git.readIndexTree(before.indexTree);

  // With HEAD or the index put back, git is asked again what is dirty against them.
  const dirty = headMoved || indexChanged ? await git.statusPorcelain() : found.entries;
  const after = await withWatched(git, await saveDirty(git, dirty), before.watched);
  const candidates = new Set([...before.files.keys(), ...after.keys()]);
  const differ = [...candidates]
    .filter((path) => !isPathInScope(path, ignored))
    .filter((path) => before.files.get(path)?.blob !== after.get(path)?.blob)
    .sort();
  // Files that were clean before are either in HEAD (tracked: they go back to it) or new.
  const cleanBefore = differ.filter((path) => !before.files.has(path));
  const tracked = await git.pathsInCommit(before.headSha, cleanBefore);
  const changed =
    options.leaveNewFiles === true
      ? differ.filter((path) => before.files.has(path) || tracked.has(path))
      : differ;
  await keep(keptFiles(new Map(changed.flatMap((path) => tracedFile(after, path)))));
  const keptUnder = keep.prefix();
  const change: TreeChange = {
    ...(keptUnder === undefined ? {} : { keptUnder }),
    paths: changed,
    ...(options.leaveNewFiles === true ? { left: differ.filter((path) => !changed.includes(path)) } : {}),
    headMoved,
    ...(headMoved
      ? { movedTo: { sha, ...(branch === before.branch ? {} : { branch: branch ?? '(detached)' }) } }
      : {}),
    indexChanged,
  };
  if (changed.length === 0) return change;

  // Files that were dirty before get their saved content back; files that were clean go back to HEAD.
  const dirtyBefore = new Map([...before.files].filter(([path]) => changed.includes(path)));
  const untracked = changed.filter((path) => !before.files.has(path) && !tracked.has(path));
  if (tracked.size > 0) await git.checkoutPathsFrom(before.headSha, [...tracked]);
  await git.writeSavedFiles(
    new Map([
      ...dirtyBefore,
      ...untracked.map((path) => [path, { blob: null, mode: '100644' as const }] as const),
    ]),
  );
  return change;
}

/** `[path, file]` when `files` has it, for building a map of some of them. */
function tracedFile(files: ReadonlyMap<string, SavedFile>, path: string): [string, SavedFile][] {
  const file = files.get(path);
  return file === undefined ? [] : [[path, file]];
}

/** One phrase for a message, e.g. `moved HEAD (to 1a2b3c4d5e), changed the index, changed a.md`. */
export function describeTreeChange(change: TreeChange): string | undefined {
  const parts: string[] = [];
  if (change.headMoved && change.movedTo !== undefined) {
    const where = change.movedTo.branch === undefined ? '' : ` on ${change.movedTo.branch}`;
    parts.push(`moved HEAD (to ${change.movedTo.sha.slice(0, 10)}${where})`);
  }
  if (change.indexChanged) parts.push('changed the index');
  if (change.paths.length > 0) parts.push(`changed ${change.paths.join(', ')}`);
  return parts.length === 0 ? undefined : parts.join(', ');
}
