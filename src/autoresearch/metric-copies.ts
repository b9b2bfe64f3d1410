// The metric's own files copied into the doer's scope: the cases a metric checks, with their answers,
// read by the artifact under a name of its own (seen: `cp metric/cases.json src/titles.json` and a
// solver that looks each case up, kept at 8 of 8 while answering '' to anything else). Code that names
// the metric's files is caught where it is read (runtime-reach.ts); a copy names nothing.
import { join } from 'node:path';
import { readBytesIfReadable } from '../infra/fs-ops.js';
import type { Git } from '../infra/git.js';

/** Shorter than this, a file's content is too common to tell a copy (`{}`, a version number). */
const MIN_KEY_BYTES = 32;
/** Larger than this, a changed file is not read for copies (a dataset, a build). */
const MAX_READ_BYTES = 4 * 1024 * 1024;

/**
 * Of `changed` (scope paths), those that hold the whole content of one of the metric's files: the
 * `metricFiles` themselves and every file tracked at `base` under `folders` (the metric's own).
 * Returns each with the metric file it holds, sorted by path.
 */
export async function copiedMetricFiles(
  git: Git,
  repo: string,
  base: string,
  changed: readonly string[],
  metricFiles: readonly string[],
  folders: readonly string[],
): Promise<{ path: string; holds: string }[]> {
  if (changed.length === 0) return [];
  const keys = new Set(metricFiles);
  if (folders.length > 0) for (const entry of await git.listTree(base, folders)) keys.add(entry.path);
  const contents: { path: string; bytes: Buffer }[] = [];
  for (const path of keys) {
    const bytes = trimmed(await readBytesIfReadable(join(repo, path)));
    if (bytes !== undefined && bytes.length >= MIN_KEY_BYTES) contents.push({ path, bytes });
  }
  if (contents.length === 0) return [];
  const found: { path: string; holds: string }[] = [];
  for (const path of [...changed].sort()) {
    if (keys.has(path)) continue;
    const bytes = await readBytesIfReadable(join(repo, path));
    if (bytes === undefined || bytes.length > MAX_READ_BYTES) continue;
    const key = contents.find((content) => bytes.includes(content.bytes));
    if (key !== undefined) found.push({ path, holds: key.path });
  }
  return found;
}

/** The bytes without leading and trailing white space (a copy may lose a final newline). */
function trimmed(bytes: Buffer | undefined): Buffer | undefined {
  if (bytes === undefined) return undefined;
  let start = 0;
  let end = bytes.length;
  while (start < end && isSpace(bytes[start] ?? 0)) start += 1;
  while (end > start && isSpace(bytes[end - 1] ?? 0)) end -= 1;
  return bytes.subarray(start, end);
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}
