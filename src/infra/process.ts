// Runs a child process from an argv array in its own process group, with timeouts that kill the group.
import { execa } from 'execa';
import { signalGroup } from './pid.js';

export { isProcessAlive, signalGroup } from './pid.js';

export interface Command {
  file: string;
  args: readonly string[];
}

export interface RunProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. Without it stdin is ignored. */
  input?: string;
  /** Kill the whole process group after this many milliseconds (0 or undefined: no limit). */
  timeoutMs?: number;
  /** Kill the whole process group when this aborts (wall clock, SIGINT). */
  signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL of the group. */
  killGraceMs?: number;
  onStdoutLine?: (line: string) => void;
  onStderrLine?: (line: string) => void;
  /** Called once the child has a pid, e.g. to record it in a lock file. */
  onSpawn?: (pid: number) => void;
  /** Keep at most this many characters of each stream in memory (the tail is kept). */
  maxBufferChars?: number;
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
  durationMs: number;
}

const DEFAULT_MAX_BUFFER = 50 * 1024 * 1024;

/** Runs a command to completion. Never throws for a failing child: the result says what happened. */
export async function runProcess(command: Command, options: RunProcessOptions): Promise<ProcessResult> {
  const started = Date.now();
  const maxChars = options.maxBufferChars ?? DEFAULT_MAX_BUFFER;
  const stdout = new TailBuffer(maxChars);
  const stderr = new TailBuffer(maxChars);
  let timedOut = false;
  let aborted = false;

  const child = execa(command.file, [...command.args], {
    cwd: options.cwd,
    env: options.env,
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

  if (child.pid !== undefined) options.onSpawn?.(child.pid);

  const killGroup = (): void => {
    const pid = child.pid;
    if (pid === undefined) return;
    signalGroup(pid, 'SIGTERM');
    const grace = setTimeout(() => signalGroup(pid, 'SIGKILL'), options.killGraceMs ?? 2000);
    grace.unref();
    void child.finally(() => {
      // The leader is gone; make sure nothing it started in its group outlives it.
      signalGroup(pid, 'SIGKILL');
      clearTimeout(grace);
    });
  };

  // Once the leader has exited, anything left in its group is a leftover (a backgrounded daemon, a
  // watcher). Left alone it outlives the run, and if it holds stdout open the run does not end until
  // it does (or the timeout calls a finished command a timeout). End it like a timeout would.
  child.once('exit', () => {
    const pid = child.pid;
    if (pid === undefined) return;
    signalGroup(pid, 'SIGTERM');
    setTimeout(() => signalGroup(pid, 'SIGKILL'), options.killGraceMs ?? 2000).unref();
  });

  const timer =
    options.timeoutMs !== undefined && options.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          killGroup();
        }, options.timeoutMs)
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
      let pending = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffer.push(chunk);
        if (onLine === undefined) return;
        pending += chunk;
        let index = pending.indexOf('\n');
        while (index !== -1) {
          onLine(pending.slice(0, index).replace(/\r$/, ''));
          pending = pending.slice(index + 1);
          index = pending.indexOf('\n');
        }
      });
      stream.on('end', () => {
        if (onLine !== undefined && pending !== '') onLine(pending);
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

  const spawnError =
    result.failed && result.exitCode === undefined && result.signal === undefined
      ? result.cause instanceof Error
        ? result.cause.message
        : result.shortMessage
      : undefined;

  return {
    exitCode: result.exitCode,
    signal: result.signal,
    stdout: stdout.value(),
    stderr: stderr.value(),
    timedOut,
    aborted,
    spawnError,
    durationMs: Date.now() - started,
  };
}

class TailBuffer {
  private chunks: string[] = [];
  private length = 0;
  private dropped = false;

  constructor(private readonly max: number) {}

  push(chunk: string): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    while (this.length > this.max && this.chunks.length > 1) {
      const first = this.chunks.shift() ?? '';
      this.length -= first.length;
      this.dropped = true;
    }
  }

  value(): string {
    const text = this.chunks.join('');
    const tail = text.length > this.max ? text.slice(text.length - this.max) : text;
    return this.dropped || text.length > this.max ? `[…truncated…]\n${tail}` : tail;
  }
}
