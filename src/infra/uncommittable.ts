// What a commit cannot hold but the tree still shows a measured run: directories with no file in them
// (git records files, never folders) and names that are not UTF-8 (Forge's git calls read paths as
// text, so such a file is neither committed nor reverted). The red team kept a score with each: answers
// in the names of empty folders, and in a file named `t\xff.json`, both read by the artifact, neither in
// the commit a clean clone gets. After a doer's commit they are removed from its scope, so the judge
// measures what the commit holds.
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Whether `name` (a path's bytes) reads as UTF-8. */
function isUtf8(name: Buffer): boolean {
  try {
    utf8.decode(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes, of `entries` (untracked and not ignored, as Git.untrackedBytes lists them under `root`), what
 * no commit can hold: a name that is not UTF-8 (whatever it is), a directory with no file left in it.
 * Returns what it removed, as text (an undecodable byte shows as U+FFFD), for the bead's notes.
 */
export async function removeUncommittable(root: string, entries: readonly Buffer[]): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of entries) {
    const isDir = entry.at(-1) === 0x2f; // '/'
    const name = isDir ? entry.subarray(0, -1) : entry;
    const path = Buffer.concat([Buffer.from(`${root}/`), name]);
    if (!isUtf8(name)) {
      await rm(path, { recursive: true, force: true });
      removed.push(name.toString('utf8'));
    } else if (isDir) {
      removed.push(...(await sweepDir(path, name.toString('utf8'))));
    }
  }
  return removed;
}

/**
 * Inside an untracked directory: removes names that are not UTF-8, then the folders left with no file.
 * A folder removed whole is reported by its own name only.
 */
async function sweepDir(dir: Buffer, shown: string): Promise<string[]> {
  const { removed, gone } = await sweep(dir, shown);
  return gone ? [shown] : removed;
}

async function sweep(dir: Buffer, shown: string): Promise<{ removed: string[]; gone: boolean }> {
  const removed: string[] = [];
  let kept = 0;
  for (const name of await readdir(dir, { encoding: 'buffer' })) {
    const path = Buffer.concat([dir, Buffer.from('/'), name]);
    const label = join(shown, name.toString('utf8'));
    if (!isUtf8(name)) {
      await rm(path, { recursive: true, force: true });
      removed.push(label);
    } else if ((await lstat(path)).isDirectory()) {
      const inner = await sweep(path, label);
      if (inner.gone) removed.push(label);
      else {
        removed.push(...inner.removed);
        kept += 1;
      }
    } else {
      kept += 1;
    }
  }
  if (kept > 0) return { removed, gone: false };
  await rmdir(dir);
  return { removed, gone: true };
}

/**
 * Removes the special files (FIFOs, sockets, device nodes) under `scope` (paths relative to `root`):
 * git neither lists nor commits them, yet an artifact can test for one (seen: `mkfifo src/mode` as a
 * flag the judge's run found and a clean clone does not have). Git's own folders are not entered.
 * Returns the removed paths, relative to `root`.
 */
export async function removeSpecialFiles(
  root: string,
  scope: readonly string[],
  /** Folders (relative to `root`) never entered: the runner's own, where its stop file may be a FIFO. */
  skipped: readonly string[] = [],
): Promise<string[]> {
  const removed: string[] = [];
  const skip = new Set(skipped.map((path) => path.replace(/^\.(?:\/|$)/, '').replace(/\/+$/, '')));
  // Never a node outside the tree, whatever link a folder on the way is (a device there is the system's).
  const top = await realpath(root).catch(() => undefined);
  const inside = async (path: string): Promise<boolean> => {
    const real = await realpath(join(root, path)).catch(() => undefined);
    return top !== undefined && real !== undefined && real.startsWith(`${top}/`);
  };
  const visit = async (relative: string): Promise<void> => {
    if (skip.has(relative)) return;
    let entries: Dirent[];
    try {
      entries = await readdir(join(root, relative), { withFileTypes: true });
    } catch {
      return; // gone, or not a folder
    }
    for (const entry of entries) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== '.git') await visit(path);
      } else if (entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) {
        if (!(await inside(path))) continue;
        await rm(join(root, path), { force: true });
        removed.push(path);
      }
    }
  };
  for (const top of scope) {
    const relative = top.replace(/^\.(?:\/|$)/, '').replace(/\/+$/, '');
    const info = await lstat(join(root, relative)).catch(() => undefined);
    if (info === undefined) continue;
    if (info.isDirectory()) await visit(relative);
    else if (info.isFIFO() || info.isSocket() || info.isCharacterDevice() || info.isBlockDevice()) {
      if (!(await inside(relative))) continue;
      await rm(join(root, relative), { force: true });
      removed.push(relative);
    }
  }
  return removed.sort();
}

/** A path component git refuses to add (`.GIT`, `git~1`, NTFS and its trailing dots or spaces). */
const REFUSED_COMPONENT = /^(?:\.git|git~1)[ .]*$/i;

/**
 * Removes, of `entries` (untracked, as Git.untrackedBytes lists them under `root`), those git refuses
 * to add, from the component it refuses on (seen: a doer's `src/git~1/flag`: `git add` failed on it,
 * three attempts were spent and the loop stopped). Returns the removed paths.
 */
export async function removeRefusedPaths(root: string, entries: readonly Buffer[]): Promise<string[]> {
  const removed = new Set<string>();
  for (const entry of entries) {
    const parts = entry.toString('utf8').replace(/\/$/, '').split('/');
    const at = parts.findIndex((part) => REFUSED_COMPONENT.test(part));
    if (at < 0) continue;
    const path = parts.slice(0, at + 1).join('/');
    if (removed.has(path)) continue;
    await rm(join(root, path), { recursive: true, force: true });
    removed.add(path);
  }
  return [...removed].sort();
}
