// Runs a short helper command (br, git) to completion through node:child_process, with runProcess's
// result and guarantees for such a command: argv only, its own process group, killed whole on a timeout,
// anything left in the group ended once the command exits, and a spawn failure reported, never thrown.
//
// Why not runProcess: execa's per-call setup and result handling cost ~0.6 ms of the runner's CPU per
// child, measured, on the path between one child's exit and the next one's start. A bead makes four
// such calls (ready, claim, close, and the agent), so it came to ~2.5 ms a bead, 1.5 % of a bead at the
// fake br's pace and more against the real br. Agents, gates and metric commands, which stream output,
// take an abort signal and are swept, stay on runProcess.
//
// Its output is caught in files in memory, not pipes, where the machine has them (/dev/shm): pipes
// cost the parent two sockets and their streams, and a call took 6.5 ms of its CPU with them against
// 4.1 ms with the files (git rev-parse, 200 calls, measured here), on a path that runs ~100 git calls
// an iteration. Each file is unlinked as soon as it is open, so nothing is left behind, even after
// kill -9; it is not on disk, so a full disk fails no read. Where there is no such place, or it has
// less than 1 GiB free when a call starts, pipes serve. A pipe bounds what a runaway command costs to
// the tail kept; a file in memory does not, so a command whose output passes what could be kept of it
// is stopped (see outputCapBytes) before it fills the memory the machine's other programs share.
import { timerDelay } from './clock.js';
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync, statfsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fifoWaitOf, type FifoWait } from './fifo-wait.js';
import { endGroup } from './pid.js';
import { spawnErrorText } from './spawn-failures.js';
import type { Command, ProcessResult } from './process.js';
import { DEFAULT_KEPT_CHARS, keptTail, TailBuffer } from './tail-buffer.js';

/** Where output files go: memory, on Linux. */
let memoryDir = '/dev/shm';
/** Cleared for the rest of the process the first time a file cannot be made there. */
let memoryFiles = process.platform === 'linux';
/**
 * The room the place must have free when a call starts, or the call uses pipes (Docker's /dev/shm has
 * 64 MB; other programs can fill it during a night's run). Asked at every call: a statfs costs ~5 µs.
 */
export const OUTPUT_ROOM_BYTES = 1024 ** 3;
let roomBytes = OUTPUT_ROOM_BYTES;
let made = 0;

/**
 * Tests: catch output in files in `dir` from now on (a place where none can be made: pipes), when it
 * has `room` bytes free (default: any room).
 */
export function catchOutputIn(dir: string, room = 0): void {
  memoryDir = dir;
  memoryFiles = true;
  roomBytes = room;
}

function hasRoom(dir: string): boolean {
  if (roomBytes <= 0) return true;
  try {
    const { bavail, bsize } = statfsSync(dir);
    return bavail * bsize >= roomBytes;
  } catch {
    return false;
  }
}

/** A file in memory, already unlinked, open for the child to write and for us to read; undefined: use a pipe. */
function memoryFile(): number | undefined {
  if (!memoryFiles || !hasRoom(memoryDir)) return undefined;
  // A name nobody can have made first ('wx': O_EXCL, so not a link planted there either).
  for (let tries = 0; memoryFiles && tries < 3; tries += 1) {
    made += 1;
    const path = join(memoryDir, `forge-out-${process.pid}-${made}-${Math.random().toString(36).slice(2)}`);
    let fd: number;
    try {
      fd = openSync(path, 'wx+', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') memoryFiles = false;
      continue;
    }
    try {
      unlinkSync(path);
      return fd;
    } catch {
      closeSync(fd);
      memoryFiles = false;
    }
  }
  return undefined;
}

/** How often a running command's output files are measured against their cap. */
const WATCH_MS = 100;
/**
 * How long a command runs before it is first asked whether it waits on a FIFO (fifo-wait.ts), and how
 * often after: a git or br call takes milliseconds, and one that waits on a FIFO waits for ever.
 */
const FIFO_CHECK_MS = 1000;
const FIFO_RECHECK_MS = 250;
/** What is kept of each stream of a command stopped for its output. */
const STOPPED_KEPT_CHARS = 64 * 1024;

/**
 * The most a command may write to one output file: the bytes its kept tail can come from (4 per
 * character), and 1 MiB more. Past it, nothing more of the output can be kept, and the file only takes
 * memory, so the command is stopped and its call fails saying so.
 */
export function outputCapBytes(maxChars: number): number {
  return 4 * maxChars + 1024 ** 2;
}

/** The file's size; 0 when it cannot be told (the watch then waits for the next look, or the exit). */
function sizeOf(fd: number): number {
  try {
    return fstatSync(fd).size;
  } catch {
    return 0;
  }
}

/** What a child wrote to an output file, its tail when longer than `maxChars`. */
function readOutput(fd: number, maxChars: number): string {
  const size = fstatSync(fd).size;
  // A character is at most 4 bytes: the last maxChars characters are within the last 4 × maxChars bytes.
  const start = Math.max(0, size - 4 * maxChars);
  const bytes = Buffer.allocUnsafe(size - start);
  let read = 0;
  while (read < bytes.length) {
    const n = readSync(fd, bytes, read, bytes.length - read, start + read);
    if (n === 0) break;
    read += n;
  }
  return keptTail(bytes.toString('utf8', 0, read), maxChars, start > 0);
}

export interface ShortProcessOptions {
  cwd: string;
  /** The child's whole environment (nothing is inherited). */
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; without it stdin is ignored. */
  input?: string | undefined;
  /** Kill the whole process group after this many milliseconds (0 or undefined: no limit). */
  timeoutMs?: number | undefined;
  /** Time between SIGTERM and SIGKILL of the group. */
  killGraceMs?: number | undefined;
  /** Keep at most this many characters of each stream (the tail is kept). */
  maxBufferChars?: number | undefined;
  /** Each chunk of stdout as the bytes it is, in place of keeping it (the result's stdout is empty). */
  onStdoutBytes?: ((chunk: Buffer) => void) | undefined;
}

export function runShortProcess(command: Command, options: ShortProcessOptions): Promise<ProcessResult> {
  const started = Date.now();
  const maxChars = options.maxBufferChars ?? DEFAULT_KEPT_CHARS;
  const killGraceMs = options.killGraceMs ?? 2000;
  const stdout = new TailBuffer(maxChars);
  const stderr = new TailBuffer(maxChars);
  let timedOut = false;
  /** The stream whose file passed its cap, when one did. */
  let overflowed: 'stdout' | 'stderr' | undefined;

  const onBytes = options.onStdoutBytes;
  // Streamed stdout stays a pipe: its caller takes it chunk by chunk, however long it is.
  const outFile = onBytes === undefined ? memoryFile() : undefined;
  const errFile = memoryFile();
  const closeFiles = (): void => {
    for (const fd of [outFile, errFile]) if (fd !== undefined) closeSync(fd);
  };

  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(command.file, [...command.args], {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: [options.input === undefined ? 'ignore' : 'pipe', outFile ?? 'pipe', errFile ?? 'pipe'],
      });
    } catch (error) {
      // spawn throws only on arguments it refuses (a NUL in one); a missing program is an 'error' event.
      closeFiles();
      throw error;
    }
    const endChildGroup = (): void => {
      if (child.pid !== undefined) endGroup(child.pid, killGraceMs);
    };
    const timer =
      options.timeoutMs !== undefined && options.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            endChildGroup();
          }, timerDelay(options.timeoutMs))
        : undefined;
    // A FIFO where the command reads (an agent's `mkfifo src/.gitignore`) holds it for ever: it is
    // stopped, and the result names the FIFO.
    let fifoWait: FifoWait | undefined;
    let fifoTimer: NodeJS.Timeout | undefined;
    const checkFifo = (): void => {
      const pid = child.pid;
      fifoWait = pid === undefined ? undefined : fifoWaitOf(pid);
      if (fifoWait !== undefined) endChildGroup();
      else fifoTimer = setTimeout(checkFifo, FIFO_RECHECK_MS);
    };
    fifoTimer = setTimeout(checkFifo, FIFO_CHECK_MS);
    const cap = outputCapBytes(maxChars);
    const watch =
      outFile === undefined && errFile === undefined
        ? undefined
        : setInterval(() => {
            for (const [stream, fd] of [
              ['stdout', outFile],
              ['stderr', errFile],
            ] as const) {
              if (fd === undefined || sizeOf(fd) <= cap) continue;
              overflowed = stream;
              clearInterval(watch);
              endChildGroup();
              return;
            }
          }, WATCH_MS);
    let settled = false;
    const finish = (
      result: Omit<ProcessResult, 'stdout' | 'stderr' | 'timedOut' | 'aborted' | 'durationMs'>,
    ) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      clearTimeout(fifoTimer);
      if (watch !== undefined) clearInterval(watch);
      // A call stopped for its output fails: what is read of it is for the message only.
      const readChars = overflowed === undefined ? maxChars : Math.min(maxChars, STOPPED_KEPT_CHARS);
      let caught: { stdout: string; stderr: string; readError?: string };
      try {
        caught = {
          stdout: outFile === undefined ? stdout.value() : readOutput(outFile, readChars),
          stderr: errFile === undefined ? stderr.value() : readOutput(errFile, readChars),
        };
      } catch (error) {
        caught = { stdout: '', stderr: '', readError: (error as Error).message };
      } finally {
        closeFiles();
      }
      const outputError =
        overflowed !== undefined
          ? `its ${overflowed} passed ${mebibytes(cap)} MiB, more than the ${maxChars.toLocaleString('en-US')} characters kept of it, so it was stopped`
          : caught.readError === undefined
            ? undefined
            : `its output could not be read: ${caught.readError}`;
      resolve({
        ...result,
        ...(outputError === undefined ? {} : { outputError }),
        ...(fifoWait === undefined ? {} : { fifoWait }),
        stdout: caught.stdout,
        stderr: caught.stderr,
        timedOut,
        aborted: false,
        durationMs: Date.now() - started,
      });
    };

    if (onBytes === undefined)
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk));
    else child.stdout?.on('data', (chunk: Buffer) => onBytes(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
    // A command that exits before reading all its input closes the pipe: that is its business.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input);

    // What the leader leaves in its group (a backgrounded helper) would hold the pipes open and keep
    // the call from ending: it goes when the leader does, as under runProcess.
    child.once('exit', endChildGroup);
    child.once('error', (error) => {
      finish({ exitCode: undefined, signal: undefined, spawnError: spawnErrorText(error, options.cwd) });
    });
    child.once('close', (code, signal) => {
      finish({ exitCode: code ?? undefined, signal: signal ?? undefined, spawnError: undefined });
    });
  });
}

function mebibytes(bytes: number): string {
  return (bytes / 1024 ** 2).toFixed(1).replace(/\.0$/, '');
}
