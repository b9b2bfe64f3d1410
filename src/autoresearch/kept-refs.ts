// Where Forge keeps git objects nothing else reaches, so that `git gc` (run by a user, an agent, or git
// itself after a commit) cannot take them:
//   refs/forge/undone/<stamp>/…  what a put-back undid (a commit reset away, a file's content), for a
//                               user to get back; pruned after UNDONE_KEPT_MS.
//   refs/forge/saved/…          the saved content of a user's uncommitted files while a step that may
//                               change them runs: one per loop for the doer's iteration snapshot, one
//                               per read-only step, dropped when the step's put-back is done.
// A put-back writes a user's file from its saved blob: a blob pruned meanwhile (seen: `git gc
// --prune=now` during a doer) left the file deleted.
import { createHash } from 'node:crypto';
import { isMark } from '../infra/file-marks.js';
import type { Git, SavedFile } from '../infra/git.js';

/** Put-backs older than this are pruned from refs/forge/undone (when a later step keeps something). */
export const UNDONE_KEPT_MS = 30 * 24 * 3600 * 1000;
/** A step's pin older than this belongs to a run that died before dropping it. */
const STEP_PIN_STALE_MS = 24 * 3600 * 1000;

const UNDONE = 'refs/forge/undone/';
const SAVED = 'refs/forge/saved/';

/** Keeps objects under one `refs/forge/undone/<stamp>/` prefix, made on first use. */
export interface Keeper {
  /** Keeps each object under `<prefix>/<name>`, in one git call. Best-effort. */
  (objects: ReadonlyMap<string, string>): Promise<void>;
  /** The prefix, once anything was kept. */
  prefix(): string | undefined;
}

export function keeper(git: Git, now: () => number = Date.now): Keeper {
  let prefix: string | undefined;
  const keep = async (objects: ReadonlyMap<string, string>): Promise<void> => {
    if (git.keepRefs === undefined || objects.size === 0) return;
    if (prefix === undefined) {
      prefix = `${UNDONE}${stampOf(now())}-${process.pid}`;
      await pruneOld(git, now(), true);
    }
    const at = prefix;
    const refs = new Map([...objects].map(([name, object]) => [`${at}/${name}`, object] as const));
    await git.keepRefs(refs).catch(() => undefined);
  };
  return Object.assign(keep, { prefix: () => prefix });
}

/** What a put-back is about to overwrite: the files' present blobs, named `files/<path>`. */
export function keptFiles(files: ReadonlyMap<string, SavedFile>): Map<string, string> {
  const kept = new Map<string, string>();
  for (const [path, file] of files) {
    if (file.blob !== null && !isMark(file.blob)) kept.set(`files/${keptName(path)}`, file.blob);
  }
  return kept;
}

/** A path as one ref name component: only what refs allow. */
export function keptName(path: string): string {
  return path
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^\.+/, '_')
    .replace(/\.lock$/, '_lock');
}

/**
 * Pins the saved files' blobs (and `trees`, an index written as a tree) under `ref`. Best-effort: a
 * Git without pins, or a blob gone already, leaves things as they were. Returns the ref when pinned.
 */
export async function pinSaved(
  git: Git,
  ref: string,
  files: ReadonlyMap<string, SavedFile>,
  trees: readonly string[] = [],
): Promise<string | undefined> {
  if (git.pinObjects === undefined) return undefined;
  const blobs = [
    ...new Set(
      [...files.values()].flatMap((file) => (file.blob === null || isMark(file.blob) ? [] : [file.blob])),
    ),
  ];
  if (blobs.length === 0) return undefined;
  try {
    await git.pinObjects(ref, { blobs, trees });
    return ref;
  } catch {
    return undefined;
  }
}

let stepPins = 0;

/** Pins the files a read-only step may change, under a fresh name (dropPin when put back). */
export async function pinStep(
  git: Git,
  files: ReadonlyMap<string, SavedFile>,
  trees: readonly string[],
  now: number = Date.now(),
): Promise<string | undefined> {
  stepPins += 1;
  const pinned = await pinSaved(git, `${SAVED}step-${stampOf(now)}-${process.pid}-${stepPins}`, files, trees);
  if (pinned !== undefined) await pruneOld(git, now, false);
  return pinned;
}

/** The pin of a loop's doer snapshot: one per workspace, each iteration's replacing the last's. */
export function doerPinRef(workspace: string): string {
  return `${SAVED}doer-${createHash('sha256').update(workspace).digest('hex').slice(0, 16)}`;
}

/** Drops a pin; best-effort (a pin left behind only keeps some blobs, and is pruned a day on). */
export async function dropPin(git: Git, ref: string | undefined): Promise<void> {
  if (ref === undefined || git.dropRefs === undefined) return;
  await git.dropRefs([ref]).catch(() => undefined);
}

/** Repositories pruned by this process already (for step pins: once; put-backs prune each time). */
const pruned = new WeakSet<Git>();

/** Deletes put-backs older than UNDONE_KEPT_MS and step pins older than a day. Best-effort. */
async function pruneOld(git: Git, now: number, always: boolean): Promise<void> {
  if (git.listRefs === undefined || git.dropRefs === undefined) return;
  if (!always && pruned.has(git)) return;
  pruned.add(git);
  try {
    const step = `${SAVED}step-`;
    const old = [
      ...(await git.listRefs(UNDONE)).filter((ref) =>
        isOlder(ref.slice(UNDONE.length), now - UNDONE_KEPT_MS),
      ),
      // for-each-ref matches whole path components: the folder, then the step pins in it.
      ...(await git.listRefs(SAVED)).filter(
        (ref) => ref.startsWith(step) && isOlder(ref.slice(step.length), now - STEP_PIN_STALE_MS),
      ),
    ];
    await git.dropRefs(old);
  } catch {
    // Pruning is housekeeping: a failure keeps more, never less.
  }
}

/** `2026-12-02T14-49-22-123Z`: an ISO time as a ref name component. */
function stampOf(time: number): string {
  return new Date(time).toISOString().replace(/[:.]/g, '-');
}

/** True when `name` starts with a stamp (stampOf) from before `cutoff`; unreadable names are kept. */
function isOlder(name: string, cutoff: number): boolean {
  const match = /^(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d)-(\d{3})Z/.exec(name);
  if (match === null) return false;
  const time = Date.parse(`${match[1]}:${match[2]}:${match[3]}.${match[4]}Z`);
  return Number.isFinite(time) && time < cutoff;
}
