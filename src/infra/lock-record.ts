// What a lock file says about its holder (one zod parser for every lock Forge reads) and the one rule
// for whether that holder is gone: on this host, its process ended; on another host, never by pid.
import { z } from 'zod';
import { isProcessAlive, processStartedAt, processStartTicks } from './pid.js';

/** Who holds a lock: enough to tell, on the holder's own host, whether it still runs. */
export interface LockOwner {
  pid: number;
  host: string;
  started_at: string;
  /** The holder's start in clock ticks since boot (Linux): a live pid with another start is someone else. */
  pid_start?: number;
}

/** The runner's lock (one per epic, and one per working tree): its owner, run and live bead. */
export interface LockRecord extends LockOwner {
  epic: string;
  run_id: string;
  bead?: string;
  bead_started_at?: string;
  agent_pid?: number;
  agent_pid_start?: number;
}

/** The embedded bead store's short-lived write lock: its owner and a token only it knows. */
export interface StoreLockHolder extends LockOwner {
  token: string;
}

const pid = z.number().int().positive();

const ownerShape = {
  pid,
  host: z.string(),
  // Older locks and other writers may leave it out: shown as unknown, never a reason to refuse the lock.
  started_at: z.string().catch(''),
  pid_start: z.number().int().optional(),
};

const lockRecordSchema: z.ZodType<LockRecord> = z.object({
  ...ownerShape,
  epic: z.string(),
  run_id: z.string(),
  bead: z.string().optional(),
  bead_started_at: z.string().optional(),
  agent_pid: pid.optional(),
  agent_pid_start: z.number().int().optional(),
});

const storeLockHolderSchema: z.ZodType<StoreLockHolder> = z.object({ ...ownerShape, token: z.string() });

/** Lock text as `schema` describes it, or undefined when it is torn, foreign or not JSON. */
function parseWith<T>(schema: z.ZodType<T>, text: string): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** A runner lock file's content, or undefined when it cannot be one (its holder is then judged by age). */
export function parseLockRecord(text: string): LockRecord | undefined {
  return parseWith(lockRecordSchema, text);
}

/** The bead store lock's content, or undefined when it cannot be one. */
export function parseStoreLockHolder(text: string): StoreLockHolder | undefined {
  return parseWith(storeLockHolderSchema, text);
}

/** How much later than the lock's last write a process may seem to start (/proc's boot time is in seconds). */
const START_SLACK_MS = 2_000;

/**
 * Whether `pid` is still the process a lock recorded: alive, and not a later process that was given
 * the same pid (after a reboot, or in a container). By the recorded start when there is one; for older
 * locks, a process that started after the lock was last written cannot be the one it names.
 */
export function isRecordedProcess(
  pid: number,
  recordedStart: number | undefined,
  lockWrittenAt: number | undefined,
  isAlive: (pid: number) => boolean = isProcessAlive,
): boolean {
  if (!isAlive(pid)) return false;
  if (recordedStart !== undefined) {
    const start = processStartTicks(pid);
    return start === undefined || start === recordedStart;
  }
  const startedAt = processStartedAt(pid);
  if (startedAt === undefined || lockWrittenAt === undefined) return true;
  return startedAt <= lockWrittenAt + START_SLACK_MS;
}

/**
 * The stale-lock rule for every lock: an owner on another host is live (its pid cannot be checked
 * from here); on this host it is live while the process it recorded runs.
 */
export function isOwnerLive(
  owner: LockOwner,
  host: string,
  lockWrittenAt: number | undefined,
  isAlive: (pid: number) => boolean = isProcessAlive,
): boolean {
  if (owner.host !== host) return true;
  return isRecordedProcess(owner.pid, owner.pid_start, lockWrittenAt, isAlive);
}
