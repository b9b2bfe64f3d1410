// What a lock file says about its holder (one parser for every lock Forge reads) and the one rule
// for whether that holder is gone: on this host, its process ended; on another host, never by pid.
import { isProcessAlive, pidNamespace, processIsZombie, processStartedAt, processStartTicks } from './pid.js';

/** Who holds a lock: enough to tell, on the holder's own host, whether it still runs. */
export interface LockOwner {
  pid: number;
  host: string;
  started_at: string;
  /** The holder's start in clock ticks since boot (Linux): a live pid with another start is someone else. */
  pid_start?: number;
  /** The holder's PID namespace (pidNamespace): in another one, its pid names nobody here. */
  pid_ns?: string;
}

/** The runner's lock (one per epic, and one per working tree): its owner, run and live bead. */
export interface LockRecord extends LockOwner {
  epic: string;
  run_id: string;
  bead?: string | undefined;
  bead_started_at?: string | undefined;
  agent_pid?: number | undefined;
  agent_pid_start?: number | undefined;
  /** A `--parallel` run's beads in flight, in pick order (absent in serial runs and older records). */
  running?: string[] | undefined;
  /**
   * The runs whose unfinished beads this run took on, newest first: the one whose lock it took over,
   * then those that one had taken on. A run that takes over this one's lock knows the whole line.
   */
  recovered?: string[] | undefined;
}

/** The embedded bead store's short-lived write lock: its owner and a token only it knows. */
export interface StoreLockHolder extends LockOwner {
  token: string;
}

// Checked by hand rather than with zod: `ralph-loop status` reads locks and must stay light (no zod
// loaded on that path; test/e2e/autoresearch-cli.test.ts holds it to that). Each field goes through a
// type guard, so the record is built from checked values and no cast stands in for a check.
type Check<T> = (value: unknown) => value is T;
const isString: Check<string> = (value) => typeof value === 'string';
const isStringList: Check<string[]> = (value) => Array.isArray(value) && value.every(isString);
const isInteger: Check<number> = (value): value is number => Number.isInteger(value);
const isPid: Check<number> = (value): value is number => isInteger(value) && value > 0;

/** A field that may be absent: undefined when it is, `BAD` when it is present and fails its check. */
const BAD = Symbol('bad field');
function optional<T>(
  fields: ReadonlyMap<string, unknown>,
  key: string,
  check: Check<T>,
): T | undefined | typeof BAD {
  const value = fields.get(key);
  if (value === undefined) return undefined;
  return check(value) ? value : BAD;
}

/** The keys of a JSON object text, or undefined when it is not JSON or not an object. */
function objectFields(text: string): ReadonlyMap<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return new Map(Object.entries(value));
}

/** The owner every lock records; `started_at` may be missing (older locks, other writers): then ''. */
function ownerOf(fields: ReadonlyMap<string, unknown>): LockOwner | undefined {
  const pid = fields.get('pid');
  const host = fields.get('host');
  const pidStart = optional(fields, 'pid_start', isInteger);
  const pidNs = optional(fields, 'pid_ns', isString);
  if (!isPid(pid) || !isString(host) || pidStart === BAD || pidNs === BAD) return undefined;
  const startedAt = fields.get('started_at');
  return {
    pid,
    host,
    started_at: isString(startedAt) ? startedAt : '',
    ...(pidStart === undefined ? {} : { pid_start: pidStart }),
    ...(pidNs === undefined ? {} : { pid_ns: pidNs }),
  };
}

/** A runner lock file's content, or undefined when it cannot be one (its holder is then judged by age). */
export function parseLockRecord(text: string): LockRecord | undefined {
  const fields = objectFields(text);
  const owner = fields === undefined ? undefined : ownerOf(fields);
  if (fields === undefined || owner === undefined) return undefined;
  const epic = fields.get('epic');
  const runId = fields.get('run_id');
  const bead = optional(fields, 'bead', isString);
  const beadStartedAt = optional(fields, 'bead_started_at', isString);
  const agentPid = optional(fields, 'agent_pid', isPid);
  const agentPidStart = optional(fields, 'agent_pid_start', isInteger);
  // An unreadable list of running beads costs only the list: a newer field must not void the lock.
  const running = optional(fields, 'running', isStringList);
  const recovered = optional(fields, 'recovered', isStringList);
  if (!isString(epic) || !isString(runId)) return undefined;
  if (bead === BAD || beadStartedAt === BAD || agentPid === BAD || agentPidStart === BAD) return undefined;
  const record: LockRecord = { ...owner, epic, run_id: runId };
  if (bead !== undefined) record.bead = bead;
  if (beadStartedAt !== undefined) record.bead_started_at = beadStartedAt;
  if (agentPid !== undefined) record.agent_pid = agentPid;
  if (agentPidStart !== undefined) record.agent_pid_start = agentPidStart;
  if (running !== undefined && running !== BAD) record.running = running;
  if (recovered !== undefined && recovered !== BAD) record.recovered = recovered;
  return record;
}

/** The bead store lock's content, or undefined when it cannot be one. */
export function parseStoreLockHolder(text: string): StoreLockHolder | undefined {
  const fields = objectFields(text);
  const owner = fields === undefined ? undefined : ownerOf(fields);
  const token = fields?.get('token');
  if (owner === undefined || !isString(token)) return undefined;
  return { ...owner, token };
}

/** How much later than the lock's last write a process may seem to start (/proc's boot time is in seconds). */
const START_SLACK_MS = 2_000;

/**
 * Whether `pid` is still the process a lock recorded: alive (not a zombie), and not a later process
 * that was given the same pid (after a reboot, or in a container). By the recorded start when there is
 * one; for older locks, a process that started after the lock was last written cannot be the one it
 * names.
 */
export function isRecordedProcess(
  pid: number,
  recordedStart: number | undefined,
  lockWrittenAt: number | undefined,
  isAlive: (pid: number) => boolean = isProcessAlive,
): boolean {
  // A zombie has ended, whatever kill(pid, 0) says: a runner killed outright under a parent that does
  // not reap it would otherwise hold its lock until that parent ends.
  if (!isAlive(pid) || processIsZombie(pid)) return false;
  if (recordedStart !== undefined) {
    const start = processStartTicks(pid);
    return start === undefined || start === recordedStart;
  }
  const startedAt = processStartedAt(pid);
  if (startedAt === undefined || lockWrittenAt === undefined) return true;
  return startedAt <= lockWrittenAt + START_SLACK_MS;
}

/**
 * The stale-lock rule for every lock: an owner on another host, or in another PID namespace on this
 * one (an agent's `forge-pack` under `unshare --pid`), is live (its pid cannot be checked from here:
 * such a lock is judged by its age); otherwise it is live while the process it recorded runs.
 */
export function isOwnerLive(
  owner: LockOwner,
  host: string,
  lockWrittenAt: number | undefined,
  isAlive: (pid: number) => boolean = isProcessAlive,
  ownPidNs: string | undefined = pidNamespace(),
): boolean {
  if (owner.host !== host) return true;
  if (owner.pid_ns !== undefined && ownPidNs !== undefined && owner.pid_ns !== ownPidNs) return true;
  return isRecordedProcess(owner.pid, owner.pid_start, lockWrittenAt, isAlive);
}

/** The owner fields a lock records for this process: its pid, its start and its PID namespace. */
export function ownerMarks(pid: number): Pick<LockOwner, 'pid_start' | 'pid_ns'> {
  const start = processStartTicks(pid);
  const ns = pid === process.pid ? pidNamespace() : undefined;
  return {
    ...(start === undefined ? {} : { pid_start: start }),
    ...(ns === undefined ? {} : { pid_ns: ns }),
  };
}

/**
 * Whether a lock file written at `mtimeMs` is more than `limitMs` away from `now`, either way. A date in
 * the future counts: no holder writes one, and a lock that only ages once its date has passed (one
 * planted dated years ahead) would never be judged abandoned. Within the limit it may be another
 * host's clock.
 */
export function isOutOfDate(mtimeMs: number, limitMs: number, now: number): boolean {
  return Math.abs(now - mtimeMs) > limitMs;
}
