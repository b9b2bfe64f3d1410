// Temp files and directories named by the Forge process that made them, `<prefix><pid>-<random>`, so
// that what a Forge killed before it could remove them (kill -9, a machine that went down) is found and
// removed by a later one. One that a live process made is never touched.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { listDirIfExists } from './fs-ops.js';
import { isGoneMaker } from './pid.js';

/** The start of a name this process makes under `prefix`: `<prefix><pid>-`. */
export function ownTempPrefix(prefix: string): string {
  return `${prefix}${process.pid}-`;
}

/** Removes the entries of `base` made under `prefix` by a process that is gone; returns their paths. */
export async function removeLeftTemps(base: string, prefix: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of (await listDirIfExists(base)) ?? []) {
    if (!name.startsWith(prefix)) continue;
    const pid = /^(\d+)-[A-Za-z0-9]+$/.exec(name.slice(prefix.length))?.[1];
    if (pid === undefined || !isGoneMaker(Number(pid))) continue;
    const path = join(base, name);
    await rm(path, { recursive: true, force: true }).catch(() => undefined);
    removed.push(path);
  }
  return removed;
}

const cleared = new Set<string>();

/**
 * `removeLeftTemps` the first time this process asks for `base` and `prefix`; later calls return at once.
 * Best effort: nothing it meets is an error.
 */
export async function removeLeftTempsOnce(base: string, prefix: string): Promise<void> {
  const key = `${prefix}\0${base}`;
  if (cleared.has(key)) return;
  cleared.add(key);
  await removeLeftTemps(base, prefix);
}
