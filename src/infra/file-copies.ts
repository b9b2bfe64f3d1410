// Copies of the small files git ignores in a working tree (data, local settings, build outputs), kept
// in memory by identity so an agent's change there can be put back, times and mode included: a build
// tool that compares mtimes must see the file as it was. Each file is read once per identity, and only
// while its identity is the fingerprint's before and after the read; what is past the bounds has no
// copy.
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, readlink, realpath, rm, symlink, utimes } from 'node:fs/promises';
import { writeFileAtomic } from './atomic-file.js';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { identity } from './ignored-files.js';

/** A file larger than this has no copy. */
export const MAX_COPIED_FILE = 1 << 20;
/** Nor does any file past this many bytes of copies. */
export const MAX_COPIED_TOTAL = 64 << 20;

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
/** Never blocks on a FIFO put where a file was, never follows a link put there. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export interface FileCopy {
  /** The file's bytes, or where a link led. */
  content: Buffer | { link: string };
  mode: number;
  /** Seconds since the epoch, to the microsecond or so that a double holds. */
  atime: number;
  mtime: number;
}

/** An identity's mode (its first field). */
const modeOf = (id: string) => Number(id.split(':')[0]);
const sizeOf = (id: string) => Number(id.split(':')[1]);

export class FileCopies {
  #copies = new Map<string, { identity: string; copy: FileCopy }>();
  #bytes = 0;

  constructor(private readonly root: string) {}

  /** Copies each file of `files` not yet copied at its identity, within the bounds; forgets the rest. */
  async prime(files: ReadonlyMap<string, string>): Promise<void> {
    for (const [path, kept] of this.#copies) {
      if (files.get(path) === kept.identity) continue;
      this.#copies.delete(path);
      this.#bytes -= size(kept.copy);
    }
    for (const [path, id] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (this.#copies.has(path)) continue;
      if (sizeOf(id) > MAX_COPIED_FILE || this.#bytes + sizeOf(id) > MAX_COPIED_TOTAL) continue;
      const copy = await this.#read(path, id);
      if (copy === undefined) continue;
      this.#copies.set(path, { identity: id, copy });
      this.#bytes += size(copy);
    }
  }

  /** The copy of `path` as it was at identity `id`, if one was taken. */
  get(path: string, id: string): FileCopy | undefined {
    const kept = this.#copies.get(path);
    return kept?.identity === id ? kept.copy : undefined;
  }

  async #read(path: string, id: string): Promise<FileCopy | undefined> {
    // A followed link's own entry is named `<dir> ->`: what it holds is where it leads.
    const link = path.endsWith(' ->');
    const file = link ? path.slice(0, -3) : path;
    const at = isAbsolute(file) ? file : join(this.root, file);
    const mode = modeOf(id);
    try {
      if (link || (mode & S_IFMT) === S_IFLNK) {
        const stats = await lstat(at, { bigint: true });
        if (identity(stats) !== id) return undefined;
        const target = await readlink(at);
        const again = await lstat(at, { bigint: true });
        return identity(again) === id ? { content: { link: target }, ...times(again), mode } : undefined;
      }
      if ((mode & S_IFMT) !== S_IFREG) return undefined;
      const handle = await open(at, READ_FLAGS);
      try {
        if (identity(await handle.stat({ bigint: true })) !== id) return undefined;
        const content = await handle.readFile();
        const again = await handle.stat({ bigint: true });
        return identity(again) === id ? { content, ...times(again), mode } : undefined;
      } finally {
        await handle.close();
      }
    } catch {
      return undefined; // gone or unreadable: no copy
    }
  }
}

function size(copy: FileCopy): number {
  return Buffer.isBuffer(copy.content) ? copy.content.length : copy.content.link.length;
}

/** The times to set back, in seconds (a Date would keep only milliseconds). */
function times(stats: { atimeNs: bigint; mtimeNs: bigint }): { atime: number; mtime: number } {
  const seconds = (ns: bigint) => Number(ns / 1000n) / 1e6;
  return { atime: seconds(stats.atimeNs), mtime: seconds(stats.mtimeNs) };
}

/** Whether `dir`, or the nearest directory above it that exists, is `tree` or inside it. */
export async function insideTree(tree: string, dir: string): Promise<boolean> {
  for (let at = dir; ; at = dirname(at)) {
    try {
      const real = await realpath(at);
      return real === tree || real.startsWith(tree + sep);
    } catch {
      if (dirname(at) === at) return false;
    }
  }
}

/** Writes `copy` back at `at`: its bytes (atomically), mode and times, or the link it was. */
export async function putBack(at: string, copy: FileCopy): Promise<void> {
  const stats = await lstat(at).catch(() => undefined);
  if (stats !== undefined && (stats.isDirectory() || !Buffer.isBuffer(copy.content)))
    await rm(at, { force: true, recursive: true });
  if (Buffer.isBuffer(copy.content)) {
    await writeFileAtomic(at, copy.content);
    await chmod(at, copy.mode & 0o7777);
    await utimes(at, copy.atime, copy.mtime);
  } else {
    await mkdir(dirname(at), { recursive: true });
    await symlink(copy.content.link, at);
  }
}
