// Process liveness, start times and group signals, without pulling in the process runner (kept light
// for `status`).
import { readFileSync, readlinkSync } from 'node:fs';

/** True when a process with this pid exists (on this host). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/** True when `pid`, named in something a Forge process made, is gone (or a zombie) and is not this process. */
export function isGoneMaker(pid: number): boolean {
  return pid !== process.pid && (!isProcessAlive(pid) || processIsZombie(pid));
}

/**
 * Sends a signal to a whole process group; a group that is already gone is not an error. Never to
 * "group" 1 or 0 or below: kill(-1) signals every process the user may signal, kill(0) the caller's own
 * group, and a pid can come from a file an agent wrote (lock-file.ts).
 */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group has exited.
  }
}

/** Ends a process group: SIGTERM now, SIGKILL to whatever is left after `graceMs` (never keeps Node up). */
export function endGroup(pid: number, graceMs: number): void {
  signalGroup(pid, 'SIGTERM');
  setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs).unref();
}

/**
 * A process's command line (Linux `/proc/<pid>/cmdline`), its words joined by spaces and cut at 200
 * characters; undefined where /proc cannot tell (another OS, the process gone, not ours to read).
 */
export function processCommandLine(pid: number): string | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
  const text = raw.split('\0').filter(Boolean).join(' ');
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * When a process started, in clock ticks since boot (Linux `/proc/<pid>/stat`, field 22): with the pid,
 * it names one process for good, since a pid is reused only by a process that starts later.
 * Undefined where /proc cannot tell (another OS, the process gone).
 */
export function processStartTicks(pid: number): number | undefined {
  const ticks = Number(statFields(pid)?.[19]);
  return Number.isInteger(ticks) ? ticks : undefined;
}

/** The parent of process `pid` (`/proc/<pid>/stat`, field 4); undefined where /proc cannot tell. */
export function processParent(pid: number): number | undefined {
  const parent = Number(statFields(pid)?.[1]);
  return Number.isInteger(parent) ? parent : undefined;
}

/**
 * Whether the process `pid` that started at `startTicks` (processStartTicks) still runs: not gone, not a
 * zombie, its pid not another's since. A process killed outright is not gone when it stops carrying
 * what it had in memory: its environment reads empty once the kernel has taken its memory, and only
 * later is it a zombie, having closed its files and let go of its locks meanwhile (seen here: 6 of 400
 * processes read so just after their SIGKILL, on an idle machine).
 */
export function processStillRuns(pid: number, startTicks: number): boolean {
  const fields = statFields(pid);
  if (fields === undefined || hasEnded(fields)) return false;
  return Number(fields[19]) === startTicks;
}

/**
 * Whether `pid` is a process that has ended and waits for its parent to reap it (a zombie). kill(pid, 0)
 * still succeeds for one, and it is reaped only by its parent: a container whose first process reaps
 * nothing keeps a killed process's zombie for good. False when /proc cannot tell.
 */
export function processIsZombie(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== undefined && hasEnded(fields);
}

/** A state of Z (zombie) or X (dead, being removed). */
function hasEnded(fields: readonly string[]): boolean {
  const state = fields[0];
  return state === 'Z' || state === 'X' || state === 'x';
}

/** The fields of `/proc/<pid>/stat` from the third (the state) on; undefined when it cannot be read. */
function statFields(pid: number): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Clock ticks per second in /proc (USER_HZ, 100 on Linux whatever the kernel's own HZ). */
const USER_HZ = 100;

/** When a process started, in epoch ms (Linux only; precise to about a second). */
export function processStartedAt(pid: number): number | undefined {
  const ticks = processStartTicks(pid);
  if (ticks === undefined) return undefined;
  try {
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1];
    return btime === undefined ? undefined : Number(btime) * 1000 + (ticks * 1000) / USER_HZ;
  } catch {
    return undefined;
  }
}

let ownPidNamespace: string | null | undefined;

/**
 * This process's PID namespace (`pid:[4026531836]`, Linux), or undefined where /proc does not say. A
 * pid means a process only inside its namespace: an agent's `forge-pack` run under `unshare --pid`
 * records pids the runner outside would read as others'.
 */
export function pidNamespace(): string | undefined {
  if (ownPidNamespace === undefined) {
    try {
      ownPidNamespace = readlinkSync('/proc/self/ns/pid');
    } catch {
      ownPidNamespace = null;
    }
  }
  return ownPidNamespace ?? undefined;
}
