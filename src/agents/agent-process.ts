// Runs an agent CLI as a child process: prompt on stdin, transcript as it streams, early stop, abort, and
// nothing it started left running afterwards, nor anything it left in its temp directory.
import { timerDelay } from '../infra/clock.js';
import { runProcess } from '../infra/process.js';
import type { Command, ProcessResult, SweptProcess } from '../infra/process.js';
import type { z } from 'zod';
import { makeAgentTemp } from './agent-temp.js';
import type { Transcript } from './transcript.js';
import type { AgentActivity, AgentRequest, TokenUsage } from './types.js';

export interface AgentProcessOptions {
  command: Command;
  request: AgentRequest;
  /** The child's environment: the request's, plus whatever the adapter adds. */
  env: Readonly<Record<string, string | undefined>>;
  transcript: Transcript;
  timeoutMs: number | undefined;
  killGraceMs: number | undefined;
  /** Each stdout line as it arrives; `stop` ends the agent's process group (see StopAgent). */
  onLine?: (line: string, stop: StopAgent) => void;
  /** Each stderr line as it arrives (it is in the transcript either way). */
  onStderrLine?: (line: string, stop: StopAgent) => void;
  /** How much of stdout to keep in memory (stream parsers need none of it). */
  keepStdoutChars?: number;
}

export interface StopOptions {
  /** Stop only if the agent has not exited by itself within this many ms (default: now). */
  afterMs?: number | undefined;
  /** Told to the caller as a `stopping` activity when the stop takes effect. */
  activity?: string | undefined;
}

/** Kills the agent's whole process group; the first stop that takes effect names the reason. */
export type StopAgent = (reason: string, options?: StopOptions) => void;

export interface AgentProcessResult extends ProcessResult {
  /** Why the adapter stopped the agent early, when it did. */
  stoppedFor: string | undefined;
  /** The caller's signal aborted (not the adapter's own stop). */
  abortedByCaller: boolean;
}

export async function runAgentProcess(options: AgentProcessOptions): Promise<AgentProcessResult> {
  const { request, transcript } = options;
  transcript.note('start', {
    argv: [options.command.file, ...options.command.args],
    cwd: request.cwd,
    mode: request.mode,
    bead: request.bead?.id,
    prompt: request.prompt,
  });
  if (request.signal?.aborted) {
    return {
      exitCode: undefined,
      signal: undefined,
      stdout: '',
      stderr: '',
      timedOut: false,
      aborted: true,
      spawnError: undefined,
      durationMs: 0,
      stoppedFor: undefined,
      abortedByCaller: true,
    };
  }

  const controller = new AbortController();
  let stoppedFor: string | undefined;
  let delayedStop: NodeJS.Timeout | undefined;
  const stop: StopAgent = (reason, { afterMs = 0, activity } = {}) => {
    if (stoppedFor !== undefined || controller.signal.aborted) return;
    if (afterMs > 0) {
      delayedStop ??= setTimeout(() => stop(reason, { activity }), timerDelay(afterMs));
      return;
    }
    stoppedFor = reason;
    transcript.note('stopping', { reason });
    if (activity !== undefined) notify(request, { type: 'stopping', reason: activity });
    controller.abort();
  };
  const temp = await makeAgentTemp(options.env);
  if (temp.problem !== undefined) transcript.note('temp', { problem: temp.problem });
  const onCallerAbort = () => controller.abort();
  request.signal?.addEventListener('abort', onCallerAbort, { once: true });

  try {
    const result = await runProcess(options.command, {
      cwd: request.cwd,
      env: temp.env,
      input: request.prompt,
      timeoutMs: options.timeoutMs,
      signal: controller.signal,
      killGraceMs: options.killGraceMs,
      maxBufferChars: options.keepStdoutChars ?? 64 * 1024,
      onStdoutLine: (line) => {
        transcript.raw(line);
        options.onLine?.(line, stop);
      },
      onStderrLine: (line) => {
        transcript.note('stderr', { line });
        options.onStderrLine?.(line, stop);
      },
      onSpawn: request.onSpawn,
      sweep: true,
      contain: true,
    });
    transcript.note('containment', { pid_namespace: result.contained === true });
    reportSwept(request, transcript, result.swept ?? []);
    return { ...result, stoppedFor, abortedByCaller: result.aborted && stoppedFor === undefined };
  } finally {
    if (delayedStop !== undefined) clearTimeout(delayedStop);
    request.signal?.removeEventListener('abort', onCallerAbort);
    // After the sweep: nothing the agent started is left to write there.
    const problem = await temp.remove();
    if (problem !== undefined) transcript.note('temp', { problem });
  }
}

/** Says which processes the agent left running outside its process group, now ended. */
function reportSwept(request: AgentRequest, transcript: Transcript, swept: readonly SweptProcess[]): void {
  if (swept.length === 0) return;
  transcript.note('swept', { processes: swept });
  const commands = swept.map((entry) => entry.command || `pid ${entry.pid}`);
  notify(request, {
    type: 'stopping',
    reason: `ended ${swept.length} process(es) it left running outside its process group: ${commands.join('; ').slice(0, 300)}`,
  });
}

/** Tells the caller about activity; a throwing listener must not break the run. */
export function notify(request: AgentRequest, event: AgentActivity): void {
  try {
    request.onActivity?.(event);
  } catch {
    // The listener's problem, not the agent's.
  }
}

export function emptyUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** The last non-empty line of a text, shortened, for one-sentence messages. */
export function lastLine(text: string, max = 200): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('[…truncated…]'));
  const line = lines.at(-1) ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

export function formatResetAt(resetAt: number): string {
  return new Date(resetAt).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

/** The message for a binary that could not be started. */
export function spawnFailureMessage(label: string, file: string, spawnError: string): string {
  const reason = /ENOENT/.test(spawnError)
    ? `\`${file}\` was not found on the PATH given to it`
    : /EACCES/.test(spawnError)
      ? `\`${file}\` is not executable`
      : spawnError;
  return `Could not start ${label}: ${reason}; install it or fix PATH.`;
}

/** One line of an agent's JSON event stream, when it is JSON and `schema` takes it; otherwise undefined. */
export function parseStreamEvent<S extends z.ZodType>(line: string, schema: S): z.output<S> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
