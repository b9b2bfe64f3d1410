// What a lock file says about its holder (one parser for every lock Forge reads) and the one rule
// for whether that holder is gone: on this host, its process ended; on another host, never by pid.
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
  bead?: string | undefined;
  bead_started_at?: string | undefined;
  agent_pid?: number | undefined;
  agent_pid_start?: number | undefined;
}

/** The embedded bead store's short-lived write lock: its owner and a token only it knows. */
export interface StoreLockHolder extends LockOwner {
  token: string;
}

// Checked by hand rather than with zod: `ralph-loop status` reads locks and must stay light (no zod
// loaded on that path; test/e2e/autoresearch-cli.test.ts holds it to that).
type Check = (value: unknown) => boolean;
const isString: Check = (value) => typeof value === 'string';
const isInteger: Check = (value) => Number.isInteger(value);
const isPid: Check = (value) => Number.isInteger(value) && (value as number) > 0;

/** The fields of every lock's owner; `started_at` may be missing (older locks, other writers). */
const OWNER_FIELDS = { pid: isPid, host: isString };
const OWNER_OPTIONAL = { pid_start: isInteger };

const RECORD_FIELDS = { ...OWNER_FIELDS, epic: isString, run_id: isString };
const RECORD_OPTIONAL = {
  ...OWNER_OPTIONAL,
  bead: isString,
  bead_started_at: isString,
  agent_pid: isPid,
  agent_pid_start: isInteger,
};

/**
 * The fields of a JSON object text that `required` and `optional` describe (others dropped), or
 * undefined when it is not JSON, not an object, or a field fails its check.
 */
function pickFields(
  text: string,
  required: Readonly<Record<string, Check>>,
  optional: Readonly<Record<string, Check>>,
): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const source = value as Record<string, unknown>;
  const picked: Record<string, unknown> = {};
  for (const [key, check] of Object.entries(required)) {
    if (!check(source[key])) return undefined;
    picked[key] = source[key];
  }
  for (const [key, check] of Object.entries(optional)) {
    if (source[key] === undefined) continue;
    if (!check(source[key])) return undefined;
    picked[key] = source[key];
  }
  picked.started_at = isString(source.started_at) ? source.started_at : '';
  return picked;
}

/** A runner lock file's content, or undefined when it cannot be one (its holder is then judged by age). */
export function parseLockRecord(text: string): LockRecord | undefined {
  return pickFields(text, RECORD_FIELDS, RECORD_OPTIONAL) as LockRecord | undefined;
}

/** The bead store lock's content, or undefined when it cannot be one. */
export function parseStoreLockHolder(text: string): StoreLockHolder | undefined {
  return pickFields(text, { ...OWNER_FIELDS, token: isString }, OWNER_OPTIONAL) as
    StoreLockHolder | undefined;
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
