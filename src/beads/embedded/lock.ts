// An exclusive lock file across processes: O_EXCL create with pid/host/time, backoff, stale takeover.
import { lstat, open, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { isNotFound, openRegularFile } from '../../infra/atomic-file.js';
import {
  isOutOfDate,
  isOwnerLive,
  ownerMarks,
  parseStoreLockHolder,
  type StoreLockHolder,
} from '../../infra/lock-record.js';
import { currentStopSignal } from '../../infra/stop-scope.js';
import { storeLocked, storeLockStuck } from './errors.js';

export interface StoreLockOptions {
  /** Give up (DATABASE_LOCKED) after waiting this long for a live holder. Default 30 s, like br. */
  waitMs?: number;
  /**
   * Beyond the shared rule (a holder on this host whose process ended), a store lock older than this is
   * abandoned whoever holds it: it is held for milliseconds, so an old one is a hung holder or one on
   * another host sharing the directory. Default 60 s.
   */
  staleAfterMs?: number;
  /** Told when a stale lock is taken over, with the holder it replaced. */
  onTakeover?: (message: string) => void;
}

export interface StoreLock {
  release(): Promise<void>;
}

const DEFAULT_WAIT_MS = 30_000;
const DEFAULT_STALE_AFTER_MS = 60_000;
/** An empty or unreadable lock younger than this is a holder still writing its details. */
const UNREADABLE_GRACE_MS = 5_000;
/** The takeover guard is held for microseconds; older than this, its holder died. */
const GUARD_STALE_MS = 10_000;
const GUARD_SUFFIX = '.takeover';
/**
 * Once the work waiting is asked to stop (a runner's SIGTERM or Ctrl-C), the wait lasts at most this
 * long: a live holder keeps the lock for milliseconds, so this still lets a clean stop's writes through,
 * while a lock that will not come free no longer holds the stop for the whole wait, write after write.
 */
const STOPPING_WAIT_MS = 2_000;
const FIRST_DELAY_MS = 2;
const MAX_DELAY_MS = 50;

/** A lock file as seen at one moment. */
export interface ObservedLock {
  raw: string;
  holder: StoreLockHolder | undefined;
  mtimeMs: number;
  ino: number;
}

/** Takes the lock at `path`, waiting with backoff while a live holder has it. */
export async function acquireStoreLock(path: string, options: StoreLockOptions = {}): Promise<StoreLock> {
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  let deadline = Date.now() + waitMs;
  const stop = currentStopSignal();
  let stopSeen = false;
  // Loaded here, not at the top: a command that only reads the store never loads node:crypto.
  const { randomBytes } = await import('node:crypto');
  const holder: StoreLockHolder = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    // An agent's forge-pack in a PID namespace of its own: the runner outside judges its lock by age.
    ...ownerMarks(process.pid),
    token: randomBytes(8).toString('hex'),
  };
  let delay = FIRST_DELAY_MS;
  for (;;) {
    if (await tryCreate(path, `${JSON.stringify(holder)}\n`))
      return { release: () => releaseLock(path, holder.token) };
    const seen = await observeLock(path);
    const staleReason = seen === undefined ? undefined : whyStale(seen, staleAfterMs);
    if (seen !== undefined && staleReason !== undefined && (await breakStaleLock(path, seen))) {
      options.onTakeover?.(`Took over a stale bead store lock ${path} (${staleReason}).`);
      continue;
    }
    // Every other way round the loop waits and answers to the deadline: a takeover guard that cannot be
    // taken, or a lock path that refuses creation yet cannot be read (a dangling link), would otherwise
    // spin here for ever, and a runner's clean stop, which writes the store, with it.
    if (stop?.aborted === true && !stopSeen) {
      stopSeen = true;
      deadline = Math.min(deadline, Date.now() + STOPPING_WAIT_MS);
    }
    if (Date.now() >= deadline) {
      if (seen !== undefined && staleReason === undefined) throw storeLocked(path, describe(seen));
      throw storeLockStuck(path, staleReason ?? 'it cannot be read', `${path}${GUARD_SUFFIX}`);
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}

/** Why the lock's holder is gone, or undefined while it may still be working. */
function whyStale(seen: ObservedLock, staleAfterMs: number, now = Date.now()): string | undefined {
  const age = now - seen.mtimeMs;
  const { holder } = seen;
  if (holder === undefined)
    return isOutOfDate(seen.mtimeMs, UNREADABLE_GRACE_MS, now) ? 'unreadable lock file' : undefined;
  if (!isOwnerLive(holder, hostname(), seen.mtimeMs)) return `holder pid ${holder.pid} is not running`;
  if (!isOutOfDate(seen.mtimeMs, staleAfterMs, now)) return undefined;
  return age < 0
    ? `dated ${Math.round(-age / 1000)} s in the future`
    : `held by pid ${holder.pid} on ${holder.host} for ${Math.round(age / 1000)} s`;
}

async function tryCreate(path: string, content: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(content);
  } catch (error) {
    await handle.close();
    await unlink(path).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return true;
}

export async function observeLock(path: string): Promise<ObservedLock | undefined> {
  try {
    // The file as opened, so its text and its identity are one file's; a FIFO there is an error, not a wait.
    const handle = await openRegularFile(path);
    try {
      const [raw, info] = await Promise.all([handle.readFile('utf8'), handle.stat()]);
      return { raw, holder: parseStoreLockHolder(raw), mtimeMs: info.mtimeMs, ino: info.ino };
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * Removes the stale lock we looked at, and only that one: under a short guard lock, and only if the
 * file is still the very one judged stale, so two waiters cannot both take over (one removing the
 * other's fresh lock). Returns whether it removed it.
 */
export async function breakStaleLock(path: string, seen: ObservedLock): Promise<boolean> {
  const guard = `${path}${GUARD_SUFFIX}`;
  if (!(await tryCreate(guard, `${process.pid}\n`))) {
    // The entry itself (lstat): a dangling link there blocks the create just as a file does.
    const guardInfo = await lstat(guard).catch(() => undefined);
    if (guardInfo !== undefined && isOutOfDate(guardInfo.mtimeMs, GUARD_STALE_MS, Date.now()))
      await unlink(guard).catch(() => undefined);
    return false;
  }
  try {
    const now = await observeLock(path);
    if (now === undefined || now.raw !== seen.raw || now.ino !== seen.ino || now.mtimeMs !== seen.mtimeMs)
      return false;
    await unlink(path);
    return true;
  } finally {
    await unlink(guard).catch(() => undefined);
  }
}

async function releaseLock(path: string, token: string): Promise<void> {
  const seen = await observeLock(path);
  // Someone may have judged us stale and taken over; their lock is not ours to remove.
  if (seen?.holder?.token === token) await unlink(path).catch(() => undefined);
}

function describe(seen: ObservedLock): string {
  const { holder } = seen;
  return holder === undefined
    ? 'an unknown process'
    : `pid ${holder.pid} on ${holder.host} since ${holder.started_at}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
