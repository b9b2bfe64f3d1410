// A lock file holding who runs an epic (pid, host, start); stale holders are taken over, live ones refused.
import { mkdir, open, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isNotFound, readFileIfExists, writeJsonAtomicNow, writeJsonAtomicUnless } from './atomic-file.js';
import { AppError, EnvironmentError, ExitCode, kindWords } from './errors.js';
import type { HostClaim, HostClaimResult } from './host-claim.js';
import { createSerialQueue } from './serial-queue.js';
import { isProcessAlive, pidNamespace, processCommandLine, processStartTicks, signalGroup } from './pid.js';
import {
  isOutOfDate,
  isOwnerLive,
  isRecordedProcess,
  ownerMarks,
  parseLockRecord,
  type LockOwner,
  type LockRecord,
} from './lock-record.js';

import { carriesMark } from './run-marks.js';

export type { LockOwner, LockRecord } from './lock-record.js';
export { isRecordedProcess } from './lock-record.js';

/** Whether the runner a lock file names is live: another host's is taken as live (it cannot be checked). */
export async function isLockHolderLive(
  path: string,
  holder: LockOwner,
  host: string,
  isAlive: (pid: number) => boolean = isProcessAlive,
): Promise<boolean> {
  const written = host === holder.host ? (await stat(path).catch(() => undefined))?.mtimeMs : undefined;
  return isOwnerLive(holder, host, written, isAlive);
}

export type LockAcquireResult = { ok: true; tookOverFrom?: LockRecord } | { ok: false; holder: LockRecord };

export interface FileLockOptions {
  path: string;
  host: string;
  isAlive?: (pid: number) => boolean;
  /** Stops what a dead holder left running (its agent's process group). */
  killGroup?: (pid: number) => void;
  /**
   * Ends everything a dead holder on this host started in its run, found by the run's mark (run-marks.ts):
   * its agent even when the holder died before recording the agent's pid.
   */
  endRun?: (runId: string) => Promise<unknown>;
  /**
   * Holds the lock on this host as well by a claim only the holder's death releases (host-claim.ts):
   * the runner's locks pass `claimHost`; a lock without it is decided by its file alone.
   */
  claimHost?: (realPath: string, answer: () => string) => Promise<HostClaimResult>;
  /** A lock file that cannot be parsed is taken as abandoned once it is this old. */
  unreadableGraceMs?: number;
  now?: () => number;
  /** `soon` updates: written once none came for this long (default SOON_QUIET_MS)... */
  soonQuietMs?: number;
  /** ...and at the latest this long after the first one still unwritten (default SOON_MAX_MS). */
  soonMaxMs?: number;
}

/**
 * How `soon` progress waits to be written. A bead's end (its agent gone) and the next bead's start come
 * within ms of the next agent's spawn, whose `now` write carries both: written each on its own, they
 * cost a no-op bead two renames of the lock on the runner's main thread, each waiting on the file
 * system's journal while br writes too (7 ms a bead, measured, against 170 ms for the whole bead).
 */
export const SOON_QUIET_MS = 200;
export const SOON_MAX_MS = 1000;

/** How an update reaches the disk (the default: queued, written in order, awaited by the returned promise). */
export interface LockUpdateHow {
  /** On disk when the call returns (a new agent's pid): a write queued before it gives way to it. */
  now?: boolean;
  /**
   * Progress only (the live bead, an ended agent): recorded at once and written within SOON_MAX_MS, or
   * sooner by any write that comes first. The promise settles when that write has.
   */
  soon?: boolean;
}

export interface FileLock {
  /** The lock file. */
  readonly path: string;
  acquire(record: LockRecord): Promise<LockAcquireResult>;
  update(patch: Partial<LockRecord>, how?: LockUpdateHow): Promise<void>;
  release(): Promise<void>;
}

/** What runs a runner: the programs' names, whatever starts them (node, an npm shim, a bundle path). */
const RUNNER_COMMAND = /ralph-loop|forge-pack/;

/**
 * What to tell a user whose run `holder`'s lock at `path` refused; `wait` says what to do while the
 * holder runs. A lock is a file any process of the user's can write, an agent's too: one naming a live
 * process that is no runner, or another host, refuses every run until someone deletes it. So the hint
 * names the file, and says so when the pid it names runs something else.
 */
export function lockRefusalHint(path: string, holder: LockOwner, host: string, wait: string): string {
  if (holder.host !== host) {
    return `${wait}. It runs on ${holder.host}, which cannot be checked from here: if no runner is live there, delete ${path} and run again.`;
  }
  const command = processCommandLine(holder.pid);
  if (command !== undefined && !RUNNER_COMMAND.test(command)) {
    // Only the program: its arguments may hold what is not for a terminal or a log (a token). A kernel
    // thread has no command line at all.
    const program = command.split(' ')[0];
    const runs = program === '' ? 'is a kernel thread' : `runs ${program}`;
    return `pid ${holder.pid} ${runs}, not ralph-loop: ${path} was written by something else (an agent can write it). If no ralph-loop holds it, delete that file and run again.`;
  }
  return `${wait}. Its lock: ${path}`;
}

/**
 * The holder of the lock at `path` as it answers through its claim on this host (host-claim.ts), for
 * when the file is gone; `ask` is host-claim's askHostClaim, passed in so status never loads node:net.
 */
export async function claimedHolder(
  path: string,
  ask: (realPath: string) => Promise<string | undefined>,
): Promise<LockRecord | undefined> {
  const dir = await realpath(dirname(path)).catch(() => undefined);
  if (dir === undefined) return undefined;
  const answer = await ask(join(dir, basename(path)));
  return answer === undefined ? undefined : parseLockRecord(answer);
}

/** Reads the lock without taking it (for `status`). */
export async function readLockFile(path: string): Promise<LockRecord | undefined> {
  const text = await readFileIfExists(path).catch(() => undefined);
  return text === undefined ? undefined : parseLockRecord(text);
}

/**
 * Throws when what is at the lock's path is no file (through a link too): a directory, a FIFO, a
 * socket or a device. No runner makes one, so nothing of a runner's is there to judge: it is never taken
 * over (a directory moved aside and removed could hold someone's files), and a FIFO is never read (the
 * read would wait for a writer forever).
 */
async function refuseNonFile(path: string): Promise<void> {
  const found = await stat(path).catch(() => undefined);
  if (found === undefined || found.isFile()) return;
  const kind = found.isDirectory() ? 'a directory' : kindWords(found);
  throw new EnvironmentError(`The lock ${path} is ${kind}, not a lock file: ralph-loop never makes one.`, {
    hint: "Nothing was changed. Move it out of the way (look inside first: it is not Forge's) and run again.",
  });
}

export function createFileLock(options: FileLockOptions): FileLock {
  const isAlive = options.isAlive ?? isProcessAlive;
  const killGroup = options.killGroup ?? ((pid: number) => signalGroup(pid, 'SIGKILL'));
  const now = options.now ?? Date.now;
  let held: LockRecord | undefined;
  let hostClaim: HostClaim | undefined;
  // Lock writes are chained so a late write can never land after another, or after release.
  const writes = createSerialQueue();
  /** Updates made, and how many of them the file on disk holds (a `now` write can get ahead). */
  let made = 0;
  let onDisk = 0;
  const soonQuietMs = options.soonQuietMs ?? SOON_QUIET_MS;
  const soonMaxMs = options.soonMaxMs ?? SOON_MAX_MS;
  /** The `soon` write waiting for its timer: `go(true)` writes, `go(false)` drops it (a release). */
  let soon:
    { since: number; timer?: NodeJS.Timeout; go: (write: boolean) => void; done: Promise<void> } | undefined;

  /** Writes the newest record in turn, unless the disk already holds it (or a `now` write gets ahead). */
  function queueWrite(): Promise<void> {
    return writes.run(async () => {
      const newest = held;
      const upTo = made;
      if (newest === undefined || onDisk >= upTo) return;
      if (await writeJsonAtomicUnless(options.path, newest, () => onDisk >= upTo)) onDisk = upTo;
    });
  }

  function writeSoon(): Promise<void> {
    if (soon === undefined) {
      let go: (write: boolean) => void = () => undefined;
      const decided = new Promise<boolean>((resolve) => (go = resolve));
      soon = { since: Date.now(), go, done: decided.then((write) => (write ? queueWrite() : undefined)) };
    }
    const pending = soon;
    clearTimeout(pending.timer);
    const wait = Math.max(0, Math.min(soonQuietMs, pending.since + soonMaxMs - Date.now()));
    pending.timer = setTimeout(() => {
      if (soon === pending) soon = undefined;
      pending.go(true);
    }, wait);
    // A runner that ends without releasing (killed) loses it, as it would lose any unwritten progress.
    pending.timer.unref();
    return pending.done;
  }

  async function tryCreate(record: LockRecord): Promise<boolean> {
    await mkdir(dirname(options.path), { recursive: true });
    let handle;
    try {
      handle = await open(options.path, 'wx');
    } catch (error) {
      if ((error as { code?: string }).code === 'EEXIST') return false;
      throw error;
    }
    try {
      await handle.writeFile(`${JSON.stringify(record, null, 2)}\n`);
      await handle.sync();
      await handle.close();
    } catch (error) {
      // A half-written lock (a full disk) would refuse every later run until it aged: never leave one.
      await handle.close().catch(() => undefined);
      await rm(options.path, { force: true });
      throw error;
    }
    return true;
  }

  async function isStale(holder: LockRecord | undefined): Promise<boolean> {
    if (holder === undefined) {
      const info = await stat(options.path).catch(() => undefined);
      return info === undefined || isOutOfDate(info.mtimeMs, options.unreadableGraceMs ?? 10_000, now());
    }
    // A holder in another PID namespace here (a ralph-loop an agent ran) cannot be checked by its pid;
    // the claim can: held by this process now, no live runner on this host holds the lock.
    const elsewhere = holder.pid_ns !== undefined && holder.pid_ns !== pidNamespace();
    if (holder.host === options.host && hostClaim !== undefined && elsewhere) return true;
    return !(await isLockHolderLive(options.path, holder, options.host, isAlive));
  }

  /** The start of `pid` joins it in the record, so a later process given the same pid is told apart. */
  function withStart(pid: number | undefined): number | undefined {
    return pid === undefined ? undefined : processStartTicks(pid);
  }

  /**
   * The claim on this host, taken before the file: undefined when it is held (or cannot be had here),
   * the refusal when a live process holds it, whatever the file says or whether it is there at all.
   */
  async function claimOnHost(record: LockRecord): Promise<LockAcquireResult | undefined> {
    if (options.claimHost === undefined || hostClaim !== undefined) return undefined;
    await mkdir(dirname(options.path), { recursive: true });
    const real = join(await realpath(dirname(options.path)), basename(options.path));
    const claimed = await options.claimHost(real, () => `${JSON.stringify(held ?? record)}\n`);
    if (claimed.kind === 'unsupported') return undefined;
    if (claimed.kind === 'held') {
      hostClaim = claimed.claim;
      return undefined;
    }
    const holder = claimed.answer === undefined ? undefined : parseLockRecord(claimed.answer);
    if (holder !== undefined) return { ok: false, holder };
    throw new AppError(
      `Another process on this host holds the lock ${options.path} (its claim, the socket @${claimed.name}) and does not say who it is.`,
      {
        exitCode: ExitCode.locked,
        hint: 'A ralph-loop that is starting or stopping holds it for a moment: run again. Otherwise find the holder with: ss -xlp | grep forge-lock',
      },
    );
  }

  async function dropHostClaim(): Promise<void> {
    const claim = hostClaim;
    hostClaim = undefined;
    await claim?.release();
  }

  /** The lock file: created, or taken over from a holder that is gone. */
  async function acquireFile(record: LockRecord): Promise<LockAcquireResult> {
    for (let round = 0; round < 3; round += 1) {
      if (await tryCreate(record)) {
        held = record;
        return { ok: true };
      }
      await refuseNonFile(options.path);
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
      const written = (await stat(aside).catch(() => undefined))?.mtimeMs;
      await rm(aside, { force: true });
      const agent = holder?.agent_pid;
      // The agent it left is stopped, unless its pid now belongs to another process.
      if (
        agent !== undefined &&
        holder?.host === options.host &&
        isRecordedProcess(agent, holder.agent_pid_start, written, isAlive) &&
        isMarkedAgent(agent, holder.run_id)
      ) {
        killGroup(agent);
      }
      if (holder !== undefined && holder.host === options.host) await options.endRun?.(holder.run_id);
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
  }

  return {
    path: options.path,
    async acquire(given) {
      const record = { ...given, ...ownerMarks(given.pid) };
      const refused = await claimOnHost(record);
      if (refused !== undefined) return refused;
      let result: LockAcquireResult;
      try {
        result = await acquireFile(record);
      } catch (error) {
        await dropHostClaim();
        throw error;
      }
      if (!result.ok) await dropHostClaim();
      return result;
    },

    async update(given, how = {}) {
      if (held === undefined) return;
      const patch = 'agent_pid' in given ? { ...given, agent_pid_start: withStart(given.agent_pid) } : given;
      const record = { ...held, ...patch };
      held = record;
      made += 1;
      if (how.now === true) {
        // A new agent's pid, written before the caller goes on: a runner killed between the spawn and
        // a queued write would leave an agent that the next run, taking over, does not know to stop.
        // Writes are queued behind earlier ones, which took a few ms and under load far more.
        try {
          writeJsonAtomicNow(options.path, record);
          onDisk = made;
        } catch {
          // The queued write below still lands.
        }
      }
      // Progress only (the live bead, the agent's pid), several times a bead: replaced atomically but not
      // flushed. A kill leaves the last update; a power loss leaves this record or, at worst, an
      // unreadable lock, which ages out (unreadableGraceMs) — either way its processes are gone. A
      // queued write writes the newest record, and gives way to a `now` write made while it ran.
      if (how.now !== true && how.soon === true) return writeSoon();
      await queueWrite();
    },

    async release() {
      // Progress not yet written is dropped: the lock is going.
      const pending = soon;
      soon = undefined;
      if (pending !== undefined) {
        clearTimeout(pending.timer);
        pending.go(false);
      }
      await writes.idle();
      if (held === undefined) return;
      const current = await readLockFile(options.path);
      if (current?.run_id === held.run_id) await rm(options.path, { force: true });
      held = undefined;
      await dropHostClaim();
    },
  };
}

/**
 * Whether the agent pid a dead holder's lock names may have its group killed. The lock is a file in the
 * repository and in git's own directory, which any agent can write: one that named a pid of the user's
 * (and a dead holder) had the next run SIGKILL that process's group, and `agent_pid: 1` had it call
 * kill(-1), which ends every process the user may signal (found by the red team). So the process must
 * be one the holder's run started, whose environment carries that run's mark; an agent can give a mark
 * only to processes it starts itself. Never pid 1 or less, nor this process.
 */
function isMarkedAgent(pid: number, runId: string): boolean {
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return false;
  return carriesMark(pid, runId);
}
