// Copies of the small files git ignores in a working tree (data, local settings, build outputs), kept
// in memory by identity so an agent's change there can be put back, times and mode included: a build
// tool that compares mtimes must see the file as it was. Each file is read once per identity, and kept
// only when its identity is still the fingerprint's once read (verified-read.ts); what is past the
// bounds has no copy.
import { chmod, lstat, mkdir, realpath, rm, symlink, utimes } from 'node:fs/promises';
import { writeFileAtomic } from './atomic-file.js';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { isLinkIdentity, linkAsSeen, modeOf, readAsSeen, sizeOf, Slices } from './verified-read.js';

/** A file larger than this has no copy. */
export const MAX_COPIED_FILE = 1 << 20;
/** Nor does any file past this many bytes of copies. */
export const MAX_COPIED_TOTAL = 64 << 20;

export interface FileCopy {
  /** The file's bytes, or where a link led. */
  content: Buffer | { link: string };
  mode: number;
  /** The mtime, in seconds since the epoch to the microsecond (a Date keeps only milliseconds). */
  mtime: number;
}

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
    const slices = new Slices();
    for (const [path, id] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (this.#copies.has(path)) continue;
      if (sizeOf(id) > MAX_COPIED_FILE || this.#bytes + sizeOf(id) > MAX_COPIED_TOTAL) continue;
      const copy = await this.#read(path, id, slices);
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

  async #read(path: string, id: string, slices: Slices): Promise<FileCopy | undefined> {
    // A followed link's own entry is named `<dir> ->`: what it holds is where it leads.
    const link = path.endsWith(' ->');
    const file = link ? path.slice(0, -3) : path;
    const at = isAbsolute(file) ? file : join(this.root, file);
    const mode = modeOf(id);
    if (link || isLinkIdentity(id)) {
      const target = linkAsSeen(at, id);
      return target === undefined ? undefined : { content: { link: target }, mode, mtime: mtimeOf(id) };
    }
    const content = Buffer.allocUnsafe(sizeOf(id));
    let filled = 0;
    const whole = await readAsSeen(at, id, content, (chunk) => (filled += chunk.length), slices);
    return whole && filled === content.length ? { content, mode, mtime: mtimeOf(id) } : undefined;
  }
}

function size(copy: FileCopy): number {
  return Buffer.isBuffer(copy.content) ? copy.content.length : copy.content.link.length;
}

/** The mtime to set back, in seconds, from the identity: the one the fingerprint saw. */
function mtimeOf(id: string): number {
  return Number(BigInt(id.split(':')[3] ?? '0') / 1000n) / 1e6;
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

/** Sets the times of the file at `at` back to those of identity `id` (its bytes and mode are as they were). */
export async function putTimesBack(at: string, id: string): Promise<void> {
  const mtime = mtimeOf(id);
  await utimes(at, mtime, mtime);
}

/** Writes `copy` back at `at`: its bytes (atomically), mode and times, or the link it was. */
export async function putBack(at: string, copy: FileCopy): Promise<void> {
  const stats = await lstat(at).catch(() => undefined);
  if (stats !== undefined && (stats.isDirectory() || !Buffer.isBuffer(copy.content)))
    await rm(at, { force: true, recursive: true });
  if (Buffer.isBuffer(copy.content)) {
    await writeFileAtomic(at, copy.content);
    await chmod(at, copy.mode & 0o7777);
    await utimes(at, copy.mtime, copy.mtime);
  } else {
    await mkdir(dirname(at), { recursive: true });
    await symlink(copy.content.link, at);
  }
}
