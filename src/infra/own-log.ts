// Opening a log Forge appends (a bead's transcript, a run's event log) in a folder an agent can write.
//
// O_NOFOLLOW keeps a symlink put at the log's own name from being written through, and no more. An
// agent that knows the next log's name (the bead ids and the run id are in its environment) can put a
// hard link to ~/.bashrc there, which O_NOFOLLOW does not see, or swap the `logs/` folder (or the
// epic's) for a symlink to a folder elsewhere: Forge appended the next agent's prompt and output, or
// its own events, to files it was never meant to touch, and the HOME guard blamed the next, innocent
// bead for the change. So the folders below a root Forge trusts (the repository) are checked not to be
// links, and a log file is Forge's own only when it is a regular file with no other name.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, unlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { EnvironmentError } from './errors.js';

/** Append to what is at the path: a FIFO fails at once (ENXIO), a symlink too (ELOOP). */
export const OWN_LOG_APPEND =
  constants.O_WRONLY |
  constants.O_APPEND |
  (constants.O_NONBLOCK ?? 0) |
  (constants.O_NOCTTY ?? 0) |
  (constants.O_NOFOLLOW ?? 0);
/** Create the file, or fail: whatever name is there already (a link of any kind) is not written. */
export const OWN_LOG_CREATE = OWN_LOG_APPEND | constants.O_CREAT | constants.O_EXCL;

/** A folder on the way to a log is a link or not a folder: the log is not written there. */
export class LinkedLogDirError extends EnvironmentError {
  readonly code = 'ELINKEDDIR';

  constructor(readonly path: string) {
    super(`${path} is a symlink or not a folder: Forge does not write its logs through it.`, {
      hint: 'Put the folder back in its place if you did not replace it (an agent can).',
    });
    this.name = 'LinkedLogDirError';
  }
}

/**
 * Makes the folders from `root` down to `dir`, and checks those already there: a symlink (or anything
 * but a folder) below `root` throws LinkedLogDirError. `root` itself is the user's choice, made when
 * missing and not checked; for a `dir` outside it, only `dir` itself is checked.
 */
export function ensureOwnDir(root: string, dir: string): void {
  let at = isBelow(root, dir) ? root : dirname(dir);
  mkdirSync(at, { recursive: true });
  for (const part of relative(at, dir).split(sep)) {
    if (part === '') continue;
    at = join(at, part);
    const info = lstatOrUndefined(at);
    if (info === undefined) {
      try {
        mkdirSync(at);
        continue;
      } catch (error) {
        // Made by someone else meanwhile: checked below like any other.
        if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
      }
    }
    if (!(info ?? lstatSync(at)).isDirectory()) throw new LinkedLogDirError(at);
  }
}

/**
 * Whether each folder from `root` down to `dir` is a folder, not a link (ensureOwnDir's rule, without
 * making any): false when one is missing or is something else. For a file Forge would rather not write
 * than write through a link an agent put there.
 */
export function isOwnDir(root: string, dir: string): boolean {
  if (!isBelow(root, dir)) return false;
  let at = root;
  for (const part of relative(root, dir).split(sep)) {
    if (part === '') continue;
    at = join(at, part);
    if (lstatOrUndefined(at)?.isDirectory() !== true) return false;
  }
  return true;
}

/** Whether `dir` is `root` or lies below it (by name: links are the callers' to check). */
function isBelow(root: string, dir: string): boolean {
  const rel = relative(root, dir);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The log at `path` opened for appending (a file descriptor), its folders checked from `root` (see
 * ensureOwnDir; by default, only the log's own folder). A regular file with no other name is appended
 * to: a bead's later attempts, and its later runs, follow one another in one transcript, which
 * `logs --follow` counts on. Anything else there (a hard link, a symlink, a FIFO) is only a name an
 * agent left: it is removed, which leaves the file it names as it was, and the log starts afresh.
 * Synchronous: it stands between the runner and an agent's start, and a trip to the thread pool would
 * cost more than these few calls.
 */
export function openOwnLogSync(path: string, root: string = dirname(dirname(path))): number {
  ensureOwnDir(root, dirname(path));
  let fd: number | undefined;
  try {
    fd = openSync(path, OWN_LOG_APPEND);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return openSync(path, OWN_LOG_CREATE, 0o644);
  }
  if (fd !== undefined) {
    const info = fstatSync(fd);
    if (info.isFile() && info.nlink === 1) return fd;
    closeSync(fd);
  }
  // A device node is the system's, never a name an agent left: removed, /dev/null went with it (a test
  // handed it as a transcript path, and the whole test run after failed).
  const there = lstatSync(path, { throwIfNoEntry: false });
  if (there?.isCharacterDevice() === true || there?.isBlockDevice() === true) {
    throw new EnvironmentError(`${path} is a device, not a log file: nothing is written there.`);
  }
  unlinkSync(path);
  return openSync(path, OWN_LOG_CREATE, 0o644);
}
