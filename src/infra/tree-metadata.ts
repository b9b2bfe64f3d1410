// What git does not keep of a tracked file: its permission bits beyond the executable one, its times,
// its hard links, its owner, its extended attributes, and all of that for a folder. A commit holds none
// of it, yet the code it holds can read it: a doer that ran `chmod 604 src/table.py` or `touch -d 2001`
// on it, or linked it to a file of its own, leaves a flag the artifact can test for while the judge
// measures it, and a clean clone of the kept commit has none (red team). Every change of that kind moves
// the file's ctime, which no process can set back; so a tracked file whose ctime is newer than the
// agent's start is written anew from its own bytes (a new inode: the mode it had before the agent, times
// of now, no extended attributes, this process's owner), and a folder gets back the mode it had and the
// time of now. A link the user made before (one file in two trees) is theirs, and stays. A folder's
// extended attributes stay too: Node cannot remove them.
import {
  chmod,
  lstat,
  open,
  readlink,
  realpath,
  rename,
  rm,
  symlink,
  utimes,
  type FileHandle,
} from 'node:fs/promises';
import { lstatSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { isNotFound, isNotRegularFile, openRegularFile } from './atomic-file.js';
import type { TreeEntry } from './git-parse.js';

/** A ctime a little before the start still counts: the kernel's clock for it runs up to a tick behind. */
const CLOCK_SLACK_MS = 100;

const REGULAR = new Set(['100644', '100755']);
const LINK = '120000';

export interface SettledMetadata {
  /** Tracked files and links written anew. */
  rewritten: string[];
  /** Files and folders whose mode was not what it was before the agent, put back. */
  modes: string[];
}

export interface TreeMetadata {
  /** Puts the tree's metadata back as the header says, for the tracked entries of the commit now. */
  settle(entries: readonly TreeEntry[]): Promise<SettledMetadata>;
}

/** The folder a path is in ('' for the tree's root), or undefined for the root itself. */
function parentOf(path: string): string | undefined {
  if (path === '') return undefined;
  const at = path.lastIndexOf('/');
  return at < 0 ? '' : path.slice(0, at);
}

/** Adds to `seen` the folders `path` is in that are not there yet (each once: a tree's walk stays linear). */
function addFolders(path: string, seen: Set<string>, onNew?: (folder: string) => void): void {
  for (let folder = parentOf(path); folder !== undefined && !seen.has(folder); folder = parentOf(folder)) {
    seen.add(folder);
    onNew?.(folder);
  }
}

/** Whether `path` is one of `skipped` (the runner's own folders) or under one. */
function isSkipped(path: string, skipped: readonly string[]): boolean {
  return skipped.some((top) => top !== '' && (path === top || path.startsWith(`${top}/`)));
}

/** Whether `path`'s folder is inside `root` itself, not reached through a link out of it (a user's own). */
async function isInside(root: string, path: string): Promise<boolean> {
  const [top, folder] = await Promise.all([realpath(root), realpath(dirname(path))]).catch(() => []);
  return top !== undefined && folder !== undefined && (folder === top || folder.startsWith(`${top}/`));
}

/** A stat that blocks: in a row, tens of thousands take half the time awaited ones do (50,000 files: 0.8 s → 0.4 s). */
function statOf(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined; // a folder on the way is a file now, or cannot be read
  }
}

/**
 * Records the modes of `entries` (the tracked tree, as the agent starts on it) and of their folders
 * under `root`, and the time; `skipped` folders (relative) are Forge's own and never touched.
 */
export async function recordTreeMetadata(
  root: string,
  entries: readonly TreeEntry[],
  skipped: readonly string[] = [],
): Promise<TreeMetadata> {
  const since = Date.now() - CLOCK_SLACK_MS;
  const skip = skipped.map((path) => path.replace(/^\.(?:\/|$)/, '').replace(/\/+$/, ''));
  const modes = new Map<string, number>();
  const remember = (path: string): void => {
    if (modes.has(path) || isSkipped(path, skip)) return;
    const mode = statOf(join(root, path))?.mode;
    if (mode !== undefined) modes.set(path, mode & 0o7777);
  };
  const seen = new Set<string>();
  for (const entry of entries) {
    addFolders(entry.path, seen, remember);
    remember(entry.path);
  }
  return {
    async settle(after) {
      const settled: SettledMetadata = { rewritten: [], modes: [] };
      const folders = new Set<string>();
      for (const entry of after) {
        if (isSkipped(entry.path, skip)) continue;
        addFolders(entry.path, folders);
        const done = await settleEntry(root, entry, modes.get(entry.path), since);
        if (done.rewritten) settled.rewritten.push(entry.path);
        if (done.mode) settled.modes.push(entry.path);
      }
      // Deepest first: a folder's time is set after what is in it was written.
      const deepestFirst = [...folders]
        .filter((folder) => !isSkipped(folder, skip))
        .sort((a, b) => b.split('/').length - a.split('/').length);
      for (const folder of deepestFirst) {
        if (await settleFolder(root, folder, modes, since)) settled.modes.push(folder === '' ? '.' : folder);
      }
      settled.modes.sort();
      return settled;
    },
  };
}

async function settleEntry(
  root: string,
  entry: TreeEntry,
  before: number | undefined,
  since: number,
): Promise<{ rewritten: boolean; mode: boolean }> {
  const path = join(root, entry.path);
  const info = statOf(path);
  const none = { rewritten: false, mode: false };
  if (info === undefined) return none;
  if (entry.mode === LINK && info.isSymbolicLink()) {
    if (info.ctimeMs < since || !(await isInside(root, path))) return none;
    const temp = tempBeside(path);
    await symlink(await readlink(path), temp);
    await replace(temp, path, info);
    return { rewritten: true, mode: false };
  }
  if (!REGULAR.has(entry.mode) || !info.isFile()) return none;
  const executable = entry.mode === '100755';
  // The mode it had, when its executable bit is still the one the commit holds; else git's own.
  const wanted = before !== undefined && ((before & 0o111) !== 0) === executable ? before & 0o777 : undefined;
  const modeChanged = wanted !== undefined && (info.mode & 0o7777) !== wanted;
  if (info.ctimeMs < since && !modeChanged) return none;
  if (!(await isInside(root, path))) return none;
  // Opened before anything is made beside it: one gone, or no longer a file, since the look above (a
  // process the agent left) is not written anew here, and the guards after it see what it is.
  const source = await openRegularFile(path).catch((error: unknown) => {
    if (isNotFound(error) || isNotRegularFile(error)) return undefined;
    throw error;
  });
  if (source === undefined) return none;
  const temp = tempBeside(path);
  try {
    // Created with git's mode (the umask applies), then given the one it had.
    const handle = await open(temp, 'wx', executable ? 0o777 : 0o666);
    try {
      await copyInto(source, handle);
      if (wanted !== undefined) await handle.chmod(wanted);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    await source.close();
  }
  await replace(temp, path, info);
  return { rewritten: true, mode: modeChanged };
}

/** How much of a file is copied at a time (copyInto). */
const COPY_CHUNK = 1024 * 1024;

/**
 * The bytes of `source` written into `target`, a piece at a time: a file of any size
 * (one over 2 GiB, which a doer can leave in its scope, threw from a whole read and ended the run with
 * an unexpected error), in constant memory. A piece of zeros is left a hole, so a sparse file stays
 * sparse rather than filling the disk.
 */
async function copyInto(source: FileHandle, target: FileHandle): Promise<void> {
  const buffer = Buffer.allocUnsafe(COPY_CHUNK);
  const zeros = Buffer.alloc(COPY_CHUNK);
  let at = 0;
  for (;;) {
    const { bytesRead } = await source.read(buffer, 0, COPY_CHUNK, at);
    if (bytesRead === 0) break;
    const piece = buffer.subarray(0, bytesRead);
    if (!piece.equals(zeros.subarray(0, bytesRead))) await target.write(piece, 0, bytesRead, at);
    at += bytesRead;
  }
  await target.truncate(at);
}

/** Renames `temp` over `path` unless `path` changed since `seen` (a person saving it now): then drops it. */
async function replace(temp: string, path: string, seen: { ino: number; size: number; mtimeMs: number }) {
  const now = await lstat(path).catch(() => undefined);
  if (now === undefined || now.ino !== seen.ino || now.size !== seen.size || now.mtimeMs !== seen.mtimeMs) {
    await rm(temp, { force: true });
    return;
  }
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

let temps = 0;
function tempBeside(path: string): string {
  temps += 1;
  return join(dirname(path), `.forge-settle.${process.pid}.${temps}.tmp`);
}

/** Gives a folder back the mode it had (one the agent made, its parent's) and, if it changed, the time of now. */
async function settleFolder(
  root: string,
  folder: string,
  modes: ReadonlyMap<string, number>,
  since: number,
): Promise<boolean> {
  const path = join(root, folder);
  const info = statOf(path);
  if (info === undefined || !info.isDirectory() || (folder !== '' && !(await isInside(root, path))))
    return false;
  let wanted = modes.get(folder);
  for (let up = folder; wanted === undefined && up !== '';) {
    up = up.includes('/') ? up.slice(0, up.lastIndexOf('/')) : '';
    wanted = modes.get(up);
  }
  const changed = wanted !== undefined && (info.mode & 0o7777) !== wanted;
  if (changed && wanted !== undefined) await chmod(path, wanted);
  if (changed || info.ctimeMs >= since) {
    const now = new Date();
    await utimes(path, now, now);
  }
  return changed;
}
