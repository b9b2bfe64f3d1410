// Runs a child process from an argv array in its own process group, with timeouts that kill the group,
// and on request ends what the child started outside that group (setsid, daemons) once it is gone.
import { timerDelay } from './clock.js';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { execa } from 'execa';
import { containCommand, signalOfContainedExit } from './containment.js';
import type { FifoWait } from './fifo-wait.js';
import { carriesMark, currentRunMarks, RUN_MARK_VAR } from './run-marks.js';
import { endGroup, processCommandLine, processStartTicks, processStillRuns, signalGroup } from './pid.js';
import { createLineSplitter } from './line-splitter.js';
import { DEFAULT_KEPT_CHARS, TailBuffer } from './tail-buffer.js';
import { spawnErrorText, takeSpawnFailure, watchSpawnFailures } from './spawn-failures.js';

watchSpawnFailures();

export { isProcessAlive, signalGroup } from './pid.js';

export interface Command {
  file: string;
  args: readonly string[];
}

export interface RunProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. Without it stdin is ignored. */
  input?: string | undefined;
  /** Kill the whole process group after this many milliseconds (0 or undefined: no limit). */
  timeoutMs?: number | undefined;
  /** Kill the whole process group when this aborts (wall clock, SIGINT). */
  signal?: AbortSignal | undefined;
  /** Time between SIGTERM and SIGKILL of the group. */
  killGraceMs?: number | undefined;
  onStdoutLine?: ((line: string) => void) | undefined;
  onStderrLine?: ((line: string) => void) | undefined;
  /** Called once the child has a pid, e.g. to record it in a lock file. */
  onSpawn?: ((pid: number) => void) | undefined;
  /** Keep at most this many characters of each stream in memory (the tail is kept). */
  maxBufferChars?: number | undefined;
  /**
   * Marks the child's environment (RUN_MARK_VAR) and, once the child has exited, ends every process still
   * carrying the mark: what it started with `setsid`, `nohup … &` or a daemonising server escapes the
   * group kill but inherits the environment. Linux only (it reads /proc); elsewhere nothing is swept.
   * The child also carries the mark of each run it is started in (withRunMark).
   */
  sweep?: boolean;
  /**
   * Run the child as process 1 of a PID namespace of its own where the machine allows one, so the kernel
   * ends everything it started when it exits, marked or not (see containment.ts). The sweep still runs.
   */
  contain?: boolean;
}

export interface ProcessResult {
  exitCode: number | undefined;
  signal: string | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  /** The executable could not be started (ENOENT, EACCES). */
  spawnError: string | undefined;
  /**
   * runShortProcess: its output could not be caught whole (it could not be read, or it passed what is
   * kept of it and the command was stopped). The call failed, whatever the exit code says.
   */
  outputError?: string | undefined;
  /** runShortProcess: the command waited on a FIFO nothing writes (fifo-wait.ts), so it was stopped. */
  fifoWait?: FifoWait | undefined;
  durationMs: number;
  /** With `sweep`: the processes that outlived the child outside its group, which were then ended. */
  swept?: SweptProcess[] | undefined;
  /** With `contain`: the child ran in a PID namespace of its own. */
  contained?: boolean;
}

/** Runs a command to completion. Never throws for a failing child: the result says what happened. */
export async function runProcess(command: Command, options: RunProcessOptions): Promise<ProcessResult> {
  const started = Date.now();
  const maxChars = options.maxBufferChars ?? DEFAULT_KEPT_CHARS;
  const stdout = new TailBuffer(maxChars);
  const stderr = new TailBuffer(maxChars);
  let timedOut = false;
  let aborted = false;
  const killGraceMs = options.killGraceMs ?? 2000;
  const mark = options.sweep === true ? randomUUID() : undefined;
  // The child carries the marks of the runs it is part of too (run-marks.ts), ahead of its own.
  const env = mark === undefined ? options.env : markEnv(options.env, [...currentRunMarks(), mark].join(':'));
  const launch =
    options.contain === true
      ? await containCommand(command, env, options.cwd)
      : { command, contained: false };
  // Where the pid allocator stands before the child is forked, so its sweep can skip older processes.
  const forksBefore = mark === undefined ? undefined : readPidCounters()?.forks;
  takeSpawnFailure(); // one an earlier spawn left is not this one's
  let child: ReturnType<typeof launchChild>;
  try {
    child = launchChild(launch.command, options, env);
  } catch (error) {
    // Out of file descriptors, execa throws where Node only failed the spawn (spawn-failures.ts).
    const failure = takeSpawnFailure();
    if (failure === undefined) throw error;
    return {
      exitCode: undefined,
      signal: undefined,
      stdout: '',
      stderr: '',
      timedOut: false,
      aborted: false,
      spawnError: failure,
      durationMs: Date.now() - started,
      ...(mark === undefined ? {} : { swept: [] }),
      ...(options.contain === true ? { contained: launch.contained } : {}),
    };
  }

  if (child.pid !== undefined) options.onSpawn?.(child.pid);

  const killGroup = (): void => {
    const pid = child.pid;
    if (pid === undefined) return;
    signalGroup(pid, 'SIGTERM');
    const grace = setTimeout(() => signalGroup(pid, 'SIGKILL'), killGraceMs);
    grace.unref();
    void child.finally(() => {
      // The leader is gone; make sure nothing it started in its group outlives it.
      signalGroup(pid, 'SIGKILL');
      clearTimeout(grace);
    });
  };

  // Once the leader has exited, anything left in its group is a leftover (a backgrounded daemon, a
  // watcher). Left alone it outlives the run, and if it holds stdout open the run does not end until
  // it does (or the timeout calls a finished command a timeout). End it like a timeout would, and with
  // it whatever left the group but carries the mark (it may hold stdout open just the same).
  let sweeping: Promise<SweptProcess[]> | undefined;
  child.once('exit', () => {
    const pid = child.pid;
    if (pid === undefined) return;
    endGroup(pid, killGraceMs);
    if (mark !== undefined) {
      const startedAfter = forksBefore === undefined ? undefined : { pid, forks: forksBefore };
      sweeping = sweepMarkedProcesses(mark, { graceMs: killGraceMs, startedAfter });
    }
  });

  const timer =
    options.timeoutMs !== undefined && options.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          killGroup();
        }, timerDelay(options.timeoutMs))
      : undefined;

  const onAbort = (): void => {
    aborted = true;
    killGroup();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  const pump = (stream: NodeJS.ReadableStream | null, buffer: TailBuffer, onLine?: (line: string) => void) =>
    new Promise<void>((resolve) => {
      if (stream === null) return resolve();
      const lines = onLine === undefined ? undefined : createLineSplitter(onLine);
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffer.push(chunk);
        lines?.push(chunk);
      });
      stream.on('end', () => {
        lines?.end();
        resolve();
      });
      stream.on('error', () => resolve());
    });

  const [result] = await Promise.all([
    child,
    pump(child.stdout, stdout, options.onStdoutLine),
    pump(child.stderr, stderr, options.onStderrLine),
  ]);
  if (timer !== undefined) clearTimeout(timer);
  options.signal?.removeEventListener('abort', onAbort);
  // The exit handler started the sweep; a child that never ran (spawn error) left nothing to sweep.
  const swept = mark === undefined ? undefined : ((await sweeping) ?? []);

  const spawnError =
    result.failed && result.exitCode === undefined && result.signal === undefined
      ? result.cause instanceof Error
        ? spawnErrorText(result.cause, options.cwd)
        : result.shortMessage
      : undefined;

  // In a namespace the command's own death by a signal reaches us as its shell's exit code 128+N.
  const killedBy = launch.contained ? signalOfContainedExit(result.exitCode) : undefined;
  return {
    exitCode: killedBy === undefined ? result.exitCode : undefined,
    signal: killedBy ?? result.signal,
    stdout: stdout.value(),
    stderr: stderr.value(),
    timedOut,
    aborted,
    spawnError,
    durationMs: Date.now() - started,
    swept,
    ...(options.contain === true ? { contained: launch.contained } : {}),
  };
}

/** The child, through execa: its own process group, output as pipes, never rejecting. */
function launchChild(command: Command, options: RunProcessOptions, env: NodeJS.ProcessEnv) {
  return execa(command.file, [...command.args], {
    cwd: options.cwd,
    env,
    extendEnv: false,
    detached: true,
    reject: false,
    stripFinalNewline: false,
    buffer: false,
    encoding: 'utf8',
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
    stdout: 'pipe',
    stderr: 'pipe',
    cleanup: true,
  });
}

export { RUN_MARK_VAR } from './run-marks.js';

export interface SweptProcess {
  pid: number;
  /** Its command line, shortened, for the transcript. */
  command: string;
}

export interface SweepOptions {
  /** Time between SIGTERM and SIGKILL. */
  graceMs?: number;
  /** Scan again this many times at most, for processes started while the last ones were ending. */
  rounds?: number;
  /**
   * The swept child's pid and the fork count read just before it was forked: when the pid allocator
   * has provably not wrapped since, only pids from the child's on are read (see firstPidToScan).
   */
  startedAfter?: PidStart | undefined;
}

/** A process's pid, and the system's fork count (/proc/stat `processes`) read before it was forked. */
export interface PidStart {
  pid: number;
  forks: number;
}

/** The pid allocator as /proc shows it: forks since boot (all namespaces), the last pid given (ours). */
export interface PidCounters {
  forks: number;
  lastPid: number;
}

/**
 * The lowest pid a process started after `start` can have, or undefined when any pid can (read them
 * all). Linux hands out pids in increasing order in each namespace, wrapping at pid_max to the lowest
 * free one. With no wrap since `start.pid`, everything started since holds a pid in (start.pid,
 * lastPid]; a wrap means at least the pids from start.pid to pid_max and from the lowest to lastPid
 * were each handed out or in use, which takes more forks than lastPid − start.pid unless every pid is
 * in use (and then no fork succeeds). So when the forks since, minus the child's own, are at most
 * lastPid − start.pid, no older pid can carry the mark. Forks in other namespaces only make the count
 * larger, towards reading everything. (A process with CAP_SYS_ADMIN can ask for a pid by number, or
 * rewrite its own environment: the sweep ends leftovers, it is not a wall against an agent.)
 */
export function firstPidToScan(start: PidStart, now: PidCounters): number | undefined {
  if (now.lastPid < start.pid) return undefined;
  return now.forks - start.forks - 1 <= now.lastPid - start.pid ? start.pid : undefined;
}

/** The fork count and the last pid given, or undefined where /proc does not say. */
export function readPidCounters(): PidCounters | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const forks = Number(/^processes (\d+)$/m.exec(readFileSync('/proc/stat', 'latin1'))?.[1]);
    // "0.75 2.26 2.30 1/123 29369": the last field is the pid most recently given in our namespace.
    const lastPid = Number(readFileSync('/proc/loadavg', 'latin1').trim().split(/\s+/)[4]);
    return Number.isSafeInteger(forks) && Number.isSafeInteger(lastPid) ? { forks, lastPid } : undefined;
  } catch {
    return undefined;
  }
}

/** `env` with `mark` added to RUN_MARK_VAR, keeping any inherited marks (Forge running inside an agent). */
export function markEnv(env: NodeJS.ProcessEnv, mark: string): NodeJS.ProcessEnv {
  const inherited = env[RUN_MARK_VAR];
  return { ...env, [RUN_MARK_VAR]: inherited ? `${inherited}:${mark}` : mark };
}

/**
 * Ends every process whose environment carries `mark`: SIGTERM, then SIGKILL to those still there after
 * the grace, and waits until they are gone; scans again for what they started meanwhile. Best-effort
 * and bounded; never throws. This process and its ancestors are never signalled, and a process without
 * the mark cannot match (the mark is random). On platforms without /proc it finds nothing.
 */
export async function sweepMarkedProcesses(
  mark: string,
  options: SweepOptions = {},
): Promise<SweptProcess[]> {
  if (process.platform !== 'linux') return [];
  const graceMs = options.graceMs ?? 2000;
  const swept = new Map<number, SweptProcess>();
  try {
    // Read only once something carries the mark: most runs leave nothing, and walking the chain up
    // to init is a /proc read per ancestor on every agent run.
    let spared: Set<number> | undefined;
    // Each target's start, read as it is found: from then on it is followed by its pid and start, not
    // by its mark. A process that is ending reads without its mark before it has ended, and one that
    // execs a program without the mark is still the process that was found.
    const startOf = new Map<number, number>();
    const stillThere = (target: SweptProcess) => processStillRuns(target.pid, startOf.get(target.pid) ?? -1);
    for (let round = 0; round < (options.rounds ?? 3); round += 1) {
      const marked = await findMarkedProcesses(mark, { startedAfter: options.startedAfter });
      if (marked.length === 0) break;
      spared ??= ancestry(process.pid);
      const found: SweptProcess[] = [];
      for (const candidate of marked) {
        if (spared.has(candidate.pid)) continue;
        const start = processStartTicks(candidate.pid);
        // The mark read again after the start: had the pid been reused in between, the start would be
        // another process's. Gone already, or no longer marked: nothing to end.
        if (start === undefined || !carriesMark(candidate.pid, mark)) continue;
        startOf.set(candidate.pid, start);
        found.push(candidate);
      }
      if (found.length === 0) break;
      for (const target of found) {
        swept.set(target.pid, target);
        signal(target.pid, 'SIGTERM');
      }
      const deadline = Date.now() + graceMs;
      let left = found;
      while (left.length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        left = left.filter(stillThere);
      }
      // Checked again just before: a pid reused meanwhile is not the process found.
      const killed = left.filter(stillThere);
      for (const target of killed) signal(target.pid, 'SIGKILL');
      // A SIGKILL takes effect when the kernel next runs the process, which on a loaded machine can be
      // well after kill() returns. Wait for every one, so that what a sweep reports ended has ended
      // when it returns (the caller measures, commits or starts the next agent then), and the next
      // round does not find it still there and signal it all over again.
      await waitUntilGone(found, stillThere);
    }
  } catch {
    // Best-effort: /proc unreadable or gone; what was signalled so far is still reported.
  }
  return [...swept.values()];
}

/**
 * How long a sweep waits for the processes it signalled to be gone. Only a process stuck in the kernel
 * (a hung network mount) takes this long; the sweep then goes on without it.
 */
const KILL_WAIT_MS = 2000;

/** Waits until none of `targets` is `stillThere`, or KILL_WAIT_MS pass. */
async function waitUntilGone(
  targets: readonly SweptProcess[],
  stillThere: (target: SweptProcess) => boolean,
): Promise<void> {
  const deadline = Date.now() + KILL_WAIT_MS;
  let left = targets.filter(stillThere);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    left = left.filter(stillThere);
  }
}

/**
 * Live processes (on this host, readable by this user) whose environment carries `mark`; with
 * `startedAfter`, only those that can have been started after that process when that can be proven
 * (firstPidToScan): a sweep then reads a handful of environs instead of every process's.
 */
export async function findMarkedProcesses(
  mark: string,
  options: {
    startedAfter?: PidStart | undefined;
    /** The allocator's counters the window is judged by; read from /proc at the scan when not given. */
    counters?: PidCounters | undefined;
  } = {},
): Promise<SweptProcess[]> {
  if (process.platform !== 'linux') return [];
  const counters = options.startedAfter === undefined ? undefined : (options.counters ?? readPidCounters());
  const from =
    options.startedAfter === undefined || counters === undefined
      ? undefined
      : firstPidToScan(options.startedAfter, counters);
  const pids = listProc()
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => from === undefined || pid >= from)
    .slice(0, MAX_SCANNED);
  const found: SweptProcess[] = [];
  for (const pid of pids.filter((pid) => carriesMark(pid, mark))) {
    found.push({ pid, command: processCommandLine(pid) ?? '' });
  }
  return found;
}

/** The entries of /proc (none when it cannot be read), listed in place like the files below. */
function listProc(): string[] {
  try {
    return readdirSync('/proc');
  } catch {
    return [];
  }
}

/** Bounds a scan on a machine with a huge process table. */
const MAX_SCANNED = 100_000;

/**
 * `pid` and every process above it, which no sweep may signal. Read synchronously like the environs:
 * through the promise API, walking six ancestors cost 1.35 ms per sweep against 0.06 ms.
 */
function ancestry(pid: number): Set<number> {
  const chain = new Set<number>();
  let current = pid;
  while (current > 1 && !chain.has(current)) {
    chain.add(current);
    let stat = '';
    try {
      stat = readFileSync(`/proc/${current}/stat`, 'utf8');
    } catch {
      // Gone, or not ours to read: the chain ends here.
    }
    // The command name may contain spaces and parentheses: the fields after the last ')' are fixed.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(ppid)) break;
    current = ppid;
  }
  return chain;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}
