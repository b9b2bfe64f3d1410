// Records of processes that run agents under a run mark (run-marks.ts), one file each in a directory:
// a process starting there first ends what a dead one on this host left running, found by its mark, so
// an agent whose runner was killed outright (kill -9, OOM) does not work on beside its replacement.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from './atomic-file.js';
import { isLockHolderLive, readLockFile, type LockRecord } from './lock-file.js';
import { ownerMarks } from './lock-record.js';

export interface RunRecordOptions {
  dir: string;
  host: string;
  pid: number;
  /** The mark this process's agents carry (withRunMark). */
  mark: string;
  startedAt: string;
  /** Ends every process carrying a dead holder's mark. */
  endRun: (mark: string) => Promise<unknown>;
  isAlive?: (pid: number) => boolean;
}

export interface RunRecord {
  /** The dead holders on this host whose marks were ended, each as `host:pid`. */
  ended: string[];
  /** Removes this process's record (a clean exit leaves nothing to end). */
  release(): Promise<void>;
}

/** Ends what dead holders on this host left, then records this process beside the live ones. */
export async function claimRunRecord(options: RunRecordOptions): Promise<RunRecord> {
  await mkdir(options.dir, { recursive: true });
  const ended: string[] = [];
  for (const name of (await readdir(options.dir)).filter((file) => file.endsWith('.json'))) {
    const path = join(options.dir, name);
    const record = await readLockFile(path);
    // Another host's records are its own to judge; an unreadable one (a write cut short) is left.
    if (record === undefined || record.host !== options.host) continue;
    if (await isLockHolderLive(path, record, options.host, options.isAlive)) continue;
    await options.endRun(record.run_id);
    await rm(path, { force: true });
    ended.push(`${record.host}:${record.pid}`);
  }
  const own = join(options.dir, `${options.host}-${options.pid}.json`);
  const record: LockRecord = {
    pid: options.pid,
    host: options.host,
    started_at: options.startedAt,
    epic: 'worker',
    run_id: options.mark,
    ...ownerMarks(options.pid),
  };
  await writeJsonAtomic(own, record);
  return { ended, release: () => rm(own, { force: true }) };
}
