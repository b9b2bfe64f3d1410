// How large a change an agent may leave for a commit. Git reads and compresses every byte of a file it
// adds, and Forge's guards add a changed file more than once (saving it, committing it, measuring its
// commit): a doer that left a 3 GB sparse file (`truncate -s 3G`, instant) in its scope took 14 s to
// commit, 27 s to judge and 90 s to keep, and nothing bounded a 300 GB one. Nor would a host take
// it: GitHub refuses a file over 100 MiB. So what passes a limit is never committed. The number of
// files is bounded too: each one costs a hash, a stat and a guard's look, and a doer that made 100,000
// small files (one `npm install` into its scope does) held its iteration for 5 minutes.
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { mapConcurrent } from './concurrent.js';

/** Limits on what one change may hold, in bytes; 0 is no limit. */
export interface SizeLimits {
  /** Any one file. */
  file: number;
  /** All the changed files together. */
  total: number;
  /** How many files one change may add, change or remove: past it, none of the change is committed. */
  files: number;
}

/** GitHub's limit on one file. */
export const DEFAULT_MAX_FILE_BYTES = 100 * 2 ** 20;
/** A change ten times that: more than any one improvement needs, small enough to commit in seconds. */
export const DEFAULT_MAX_CHANGE_BYTES = 2 ** 30;
/** Far more than one improvement touches (a rename across a large tree stays under it), and seconds to undo. */
export const DEFAULT_MAX_CHANGE_FILES = 10_000;

/** The limits a config gives (each field left out takes its default). */
export function sizeLimitsOf(given: {
  max_file_bytes?: number | undefined;
  max_change_bytes?: number | undefined;
  max_change_files?: number | undefined;
}): SizeLimits {
  return {
    file: given.max_file_bytes ?? DEFAULT_MAX_FILE_BYTES,
    total: given.max_change_bytes ?? DEFAULT_MAX_CHANGE_BYTES,
    files: given.max_change_files ?? DEFAULT_MAX_CHANGE_FILES,
  };
}

/** A changed file a limit keeps out of the commit. */
export interface OverLimit {
  path: string;
  size: number;
  /**
   * Over the limit on one file, pushed out by the limit on the whole change, or one of a change of
   * more files than the limit (`size` is then the number of files the change holds).
   */
  limit: 'file' | 'total' | 'files';
}

/** Every one of `paths` (a change's, deletions too) when there are more than the limit allows, else none. */
export function overFileCount(paths: readonly string[], limits: SizeLimits): OverLimit[] {
  if (limits.files === 0 || paths.length <= limits.files) return [];
  return [...paths].sort().map((path) => ({ path, size: paths.length, limit: 'files' as const }));
}

/** The size of each of `paths` (relative to `root`) that is a regular file; links, folders and the gone are left out. */
export async function regularFileSizes(root: string, paths: readonly string[]): Promise<Map<string, number>> {
  const infos = await mapConcurrent(paths, (path) => lstat(join(root, path)).catch(() => undefined));
  const sizes = new Map<string, number>();
  paths.forEach((path, index) => {
    const info = infos[index];
    if (info?.isFile() === true) sizes.set(path, info.size);
  });
  return sizes;
}

/**
 * Of `files` (each changed path with its size, as lstat read it), those a commit may not hold: every
 * one over the file limit, then, while the rest together pass the change limit, the largest of them
 * (by name on a tie, so two runs over the same tree agree).
 */
export function overLimits(files: ReadonlyMap<string, number>, limits: SizeLimits): OverLimit[] {
  const over: OverLimit[] = [];
  const rest: [string, number][] = [];
  for (const [path, size] of files) {
    if (limits.file > 0 && size > limits.file) over.push({ path, size, limit: 'file' });
    else rest.push([path, size]);
  }
  if (limits.total > 0) {
    let total = rest.reduce((sum, [, size]) => sum + size, 0);
    rest.sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
    for (const [path, size] of rest) {
      if (total <= limits.total) break;
      over.push({ path, size, limit: 'total' });
      total -= size;
    }
  }
  return over.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/** `104857600` → `100 MiB`, `3221225472` → `3 GiB`, `1536` → `1.5 KiB`, `12` → `12 B`. */
export function formatSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : Number(value.toFixed(1))} ${units[unit]}`;
}

/**
 * A size as a person writes it, `100M`, `1.5G`, `2GiB`, `500k` or plain bytes, to a whole number of
 * bytes (units are binary: K is 1024). Undefined for anything else.
 */
export function parseSize(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?\s*$/i.exec(text);
  if (match === null) return undefined;
  const power = match[2] === undefined ? 0 : 'kmgt'.indexOf(match[2].toLowerCase()) + 1;
  const bytes = Math.round(Number(match[1]) * 1024 ** power);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/**
 * What a note says of the files a limit kept out: `src/big.bin (3 GiB, over 100 MiB a file)`; for a
 * change of too many files, how many and the first few by name.
 */
export function describeOverLimits(over: readonly OverLimit[], limits: SizeLimits): string {
  const many = over.filter(({ limit }) => limit === 'files');
  if (many.length > 0) {
    const shown = 5;
    const named = many.slice(0, shown).map(({ path }) => path);
    if (many.length > shown) named.push(`${(many.length - shown).toLocaleString('en-US')} more`);
    const count = (many[0]?.size ?? many.length).toLocaleString('en-US');
    return `${count} changed files (${named.join(', ')}), over ${limits.files.toLocaleString('en-US')} files a change`;
  }
  return over
    .map(
      ({ path, size, limit }) =>
        `${path} (${formatSize(size)}, over ${formatSize(limit === 'file' ? limits.file : limits.total)} ${limit === 'file' ? 'a file' : 'for the whole change'})`,
    )
    .join(', ');
}
