// Runs a short helper command (br, git) to completion through node:child_process, with runProcess's
// result and guarantees for such a command: argv only, its own process group, killed whole on a timeout,
// anything left in the group ended once the command exits, and a spawn failure reported, never thrown.
//
// Why not runProcess: execa's per-call setup and result handling cost ~0.6 ms of the runner's CPU per
// child, measured, on the path between one child's exit and the next one's start. A bead makes four
// such calls (ready, claim, close, and the agent), so it came to ~2.5 ms a bead, 1.5 % of a bead at the
// fake br's pace and more against the real br. Agents, gates and metric commands, which stream output,
// take an abort signal and are swept, stay on runProcess.
import { spawn } from 'node:child_process';
import { endGroup } from './pid.js';
import type { Command, ProcessResult } from './process.js';
import { DEFAULT_KEPT_CHARS, TailBuffer } from './tail-buffer.js';

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

  return new Promise((resolve) => {
    const child = spawn(command.file, [...command.args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const endChildGroup = (): void => {
      if (child.pid !== undefined) endGroup(child.pid, killGraceMs);
    };
    const timer =
      options.timeoutMs !== undefined && options.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            endChildGroup();
          }, options.timeoutMs)
        : undefined;
    const finish = (
      result: Omit<ProcessResult, 'stdout' | 'stderr' | 'timedOut' | 'aborted' | 'durationMs'>,
    ) => {
      if (timer !== undefined) clearTimeout(timer);
      resolve({
        ...result,
        stdout: stdout.value(),
        stderr: stderr.value(),
        timedOut,
        aborted: false,
        durationMs: Date.now() - started,
      });
    };

    const onBytes = options.onStdoutBytes;
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
      finish({ exitCode: undefined, signal: undefined, spawnError: error.message });
    });
    child.once('close', (code, signal) => {
      finish({ exitCode: code ?? undefined, signal: signal ?? undefined, spawnError: undefined });
    });
  });
}
