// Temp files and directories named by the Forge process that made them, `<prefix><host>-<pid>-<random>`,
// so that what a Forge killed before it could remove them (kill -9, a machine that went down) is found
// and removed by a later one on the same host. One a live process made is never touched, nor one made
// on another host (a temp directory shared with a container: its pids are not this host's).
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { listDirIfExists } from './fs-ops.js';
import { isGoneMaker } from './pid.js';

/** This host, as 8 hex digits (a host name may hold any character). */
const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** The start of a name process `pid` of this host makes under `prefix`: `<prefix><host>-<pid>-`. */
export function tempPrefixFor(prefix: string, pid: number): string {
  return `${prefix}${HOST}-${pid}-`;
}

/** The start of a name this process makes under `prefix`. */
export function ownTempPrefix(prefix: string): string {
  return tempPrefixFor(prefix, process.pid);
}

/** Removes the entries of `base` made under `prefix` by a process of this host that is gone; their paths. */
export async function removeLeftTemps(base: string, prefix: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of (await listDirIfExists(base)) ?? []) {
    if (!name.startsWith(prefix)) continue;
    const maker = /^([0-9a-f]{8})-(\d+)-[A-Za-z0-9]+$/.exec(name.slice(prefix.length));
    if (maker === null || maker[1] !== HOST || !isGoneMaker(Number(maker[2]))) continue;
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
