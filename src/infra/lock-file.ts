// A lock file holding who runs an epic (pid, host, start); stale holders are taken over, live ones refused.
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isNotFound, writeJsonAtomic } from './atomic-file.js';
import { EnvironmentError } from './errors.js';
import { isProcessAlive, signalGroup } from './pid.js';

export interface LockRecord {
  pid: number;
  host: string;
  started_at: string;
  epic: string;
  run_id: string;
  bead?: string;
  bead_started_at?: string;
  agent_pid?: number;
}

export type LockAcquireResult = { ok: true; tookOverFrom?: LockRecord } | { ok: false; holder: LockRecord };

export interface FileLockOptions {
  path: string;
  host: string;
  isAlive?: (pid: number) => boolean;
  /** Stops what a dead holder left running (its agent's process group). */
  killGroup?: (pid: number) => void;
  /** A lock file that cannot be parsed is taken as abandoned once it is this old. */
  unreadableGraceMs?: number;
  now?: () => number;
}

export interface FileLock {
  acquire(record: LockRecord): Promise<LockAcquireResult>;
  update(patch: Partial<LockRecord>): Promise<void>;
  release(): Promise<void>;
}

/** Reads the lock without taking it (for `status`). */
export async function readLockFile(path: string): Promise<LockRecord | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockRecord;
  } catch {
    return undefined;
  }
}

export function createFileLock(options: FileLockOptions): FileLock {
  const isAlive = options.isAlive ?? isProcessAlive;
  const killGroup = options.killGroup ?? ((pid: number) => signalGroup(pid, 'SIGKILL'));
  const now = options.now ?? Date.now;
  let held: LockRecord | undefined;
  // Lock writes are chained so a late write can never land after another, or after release.
  let writes: Promise<void> = Promise.resolve();

  async function tryCreate(record: LockRecord): Promise<boolean> {
    await mkdir(dirname(options.path), { recursive: true });
    try {
      const handle = await open(options.path, 'wx');
      try {
        await handle.writeFile(`${JSON.stringify(record, null, 2)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === 'EEXIST') return false;
      throw error;
    }
  }

  async function isStale(holder: LockRecord | undefined): Promise<boolean> {
    if (holder === undefined) {
      const info = await stat(options.path).catch(() => undefined);
      return info === undefined || now() - info.mtimeMs > (options.unreadableGraceMs ?? 10_000);
    }
    return holder.host === options.host && !isAlive(holder.pid);
  }

  return {
    async acquire(record) {
      for (let round = 0; round < 3; round += 1) {
        if (await tryCreate(record)) {
          held = record;
          return { ok: true };
        }
        const holder = await readLockFile(options.path);
        if (!(await isStale(holder))) {
          if (holder !== undefined) return { ok: false, holder };
          continue;
        }
        // Move the stale file aside, then check it was the one we judged: another runner may have
        // taken over between our read and our rename.
        const aside = `${options.path}.stale-${record.run_id}`;
        try {
          await rename(options.path, aside);
        } catch (error) {
          if (isNotFound(error)) continue;
          throw error;
        }
        const moved = await readLockFile(aside);
        if (holder !== undefined && moved?.run_id !== holder.run_id) {
          await rename(aside, options.path).catch(() => undefined);
          continue;
        }
        await rm(aside, { force: true });
        if (holder?.agent_pid !== undefined && holder.host === options.host && isAlive(holder.agent_pid)) {
          killGroup(holder.agent_pid);
        }
        if (await tryCreate(record)) {
          held = record;
          return holder === undefined ? { ok: true } : { ok: true, tookOverFrom: holder };
        }
      }
      const holder = await readLockFile(options.path);
      if (holder !== undefined) return { ok: false, holder };
      throw new EnvironmentError(
        `Could not take the lock ${options.path}: it keeps changing or cannot be read.`,
        {
          hint: 'If no other ralph-loop is running for this epic, delete that file and run again.',
        },
      );
    },

    async update(patch) {
      if (held === undefined) return;
      const record = { ...held, ...patch };
      held = record;
      writes = writes.then(() => writeJsonAtomic(options.path, record));
      await writes;
    },

    async release() {
      await writes.catch(() => undefined);
      if (held === undefined) return;
      const current = await readLockFile(options.path);
      if (current?.run_id === held.run_id) await rm(options.path, { force: true });
      held = undefined;
    },
  };
}
