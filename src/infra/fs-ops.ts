// Small filesystem operations for the layers above infra, so loop and autoresearch code reaches the
// disk only through infra (a step towards a LoopFiles port that a test can replace).
import { lstat, mkdir, mkdtemp, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openIfExists, readBytesIfExists } from './atomic-file.js';

/** The names in a directory (unsorted, as the system gives them). Throws when it cannot be read. */
export async function listDir(path: string): Promise<string[]> {
  return readdir(path);
}

/** The names in a directory, or undefined when it does not exist or cannot be read. */
export async function listDirIfExists(path: string): Promise<string[] | undefined> {
  return readdir(path).catch(() => undefined);
}

export type EntryKind = 'dir' | 'file' | 'symlink' | 'special';

/** A directory's entries with what each is, without following symlinks; [] when it cannot be read. */
export async function listEntries(path: string): Promise<{ name: string; kind: EntryKind }[]> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  return entries.map((entry) => ({
    name: entry.name,
    kind: entry.isDirectory()
      ? 'dir'
      : entry.isFile()
        ? 'file'
        : entry.isSymbolicLink()
          ? 'symlink'
          : 'special',
  }));
}

/** Moves `from` to `to` (a rename on one filesystem: atomic for a file). */
export async function renamePath(from: string, to: string): Promise<void> {
  await rename(from, to);
}

/** Removes a file, or a directory with `recursive`; nothing happens when it is already gone. */
export async function removePath(path: string, options: { recursive?: boolean } = {}): Promise<void> {
  await rm(path, { force: true, recursive: options.recursive ?? false });
}

/** Creates a directory and any missing parents; nothing happens when it exists. */
export async function makeDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true });
}

/**
 * A fresh, empty directory named `<prefix>XXXXXX` under `root` (the system temp directory by default),
 * as its real path: on some systems the temp directory is behind a symlink (macOS /var → /private/var).
 */
export async function makeTempDir(prefix: string, root: string = tmpdir()): Promise<string> {
  return realpath(await mkdtemp(join(root, prefix)));
}

/**
 * A file's bytes, or undefined when it cannot be read (missing, a directory, no permission, not a
 * regular file: a FIFO is never waited on).
 */
export async function readBytesIfReadable(path: string): Promise<Buffer | undefined> {
  return readBytesIfExists(path).catch(() => undefined);
}

/**
 * A file's size, modification time (ms since the epoch) and whether it is a regular file (through a
 * symlink), or undefined when it cannot be read.
 */
export async function fileStat(
  path: string,
): Promise<{ size: number; mtimeMs: number; regular: boolean } | undefined> {
  return stat(path).then(
    (stats) => ({ size: stats.size, mtimeMs: stats.mtimeMs, regular: stats.isFile() }),
    () => undefined,
  );
}

/**
 * What changes whenever a file is written, renamed over or has its mode changed, and that no process
 * can set back: its inode and ctime. Undefined when it is not there.
 */
export async function changeStamp(path: string): Promise<string | undefined> {
  return lstat(path, { bigint: true }).then(
    (stats) => `${stats.ino}:${stats.ctimeNs}`,
    () => undefined,
  );
}

/** A file opened for reading byte ranges (a ledger read from where a cache left off). */
export interface RangeReader {
  size(): Promise<number>;
  /** The bytes in [from, to), fewer when the file ends first. */
  read(from: number, to: number): Promise<Buffer>;
  close(): Promise<void>;
}

/** Opens `path` for ranged reads; undefined when it does not exist, other errors are thrown. */
export async function openRangeReader(path: string): Promise<RangeReader | undefined> {
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  return {
    size: async () => (await handle.stat()).size,
    async read(from, to) {
      const buffer = Buffer.alloc(Math.max(0, to - from));
      let done = 0;
      while (done < buffer.length) {
        const { bytesRead } = await handle.read(buffer, done, buffer.length - done, from + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return buffer.subarray(0, done);
    },
    close: () => handle.close(),
  };
}

/** The path with every link in it resolved. */
export async function realPath(path: string): Promise<string> {
  return realpath(path);
}
