// What every CLI adapter does around its own stream parser: open the transcript, run the agent (argv,
// its own process group, the request's env, timeout, stop on a line), classify, note the end, close.
import { systemClock } from '../infra/clock.js';
import type { Command } from '../infra/process.js';
import { notify, runAgentProcess, spawnFailureMessage } from './agent-process.js';
import type { AgentProcessResult, StopAgent } from './agent-process.js';
import { openTranscript } from './transcript.js';
import type { AgentRequest, AgentResult, AgentRunnerOptions } from './types.js';

/** The part of a result an adapter decides from the run: what happened, and what to do about it. */
export type Verdict = Pick<AgentResult, 'outcome' | 'message'> &
  Partial<Pick<AgentResult, 'resetAt' | 'retryAfterMs' | 'fatal' | 'environment'>>;

export interface AdapterRunOptions {
  request: AgentRequest;
  runner: AgentRunnerOptions;
  command: Command;
  /** The child's whole environment (adapters start from `request.env` and add their own). */
  env: Readonly<Record<string, string | undefined>>;
  timeoutMs: number | undefined;
  /** Each stdout line as it arrives; `stop` ends the agent's process group. */
  onLine?: (line: string, stop: StopAgent) => void;
  /** Each stderr line as it arrives (some CLIs report their retries only there). */
  onStderrLine?: (line: string, stop: StopAgent) => void;
  keepStdoutChars?: number;
  /** Builds the result once the process is gone; `now` is the runner's clock. */
  classify: (child: AgentProcessResult, now: number) => AgentResult;
}

export async function runAdapter(options: AdapterRunOptions): Promise<AgentResult> {
  const { request } = options;
  const clock = options.runner.clock ?? systemClock;
  const transcript = await openTranscript(request.transcriptPath, request.transcriptRoot);
  const child = await runAgentProcess({
    command: options.command,
    request,
    env: options.env,
    transcript,
    timeoutMs: options.timeoutMs,
    killGraceMs: options.runner.killGraceMs,
    ...(options.onLine === undefined ? {} : { onLine: options.onLine }),
    ...(options.onStderrLine === undefined ? {} : { onStderrLine: options.onStderrLine }),
    ...(options.keepStdoutChars === undefined ? {} : { keepStdoutChars: options.keepStdoutChars }),
  });
  const result = options.classify(child, clock.now());
  transcript.note('end', { outcome: result.outcome, message: result.message, exitCode: result.exitCode });
  await transcript.close();
  return result;
}

/** Stops the agent at its first 401, so the CLI does not retry a key that will never work. */
export function stopForAuth(request: AgentRequest, stop: StopAgent): void {
  notify(request, { type: 'stopping', reason: 'the API rejected the credentials (401)' });
  stop('auth');
}

/**
 * The verdicts every adapter reaches the same way: the caller aborted, or the binary never started.
 * Undefined when the run itself has to be looked at.
 */
export function startVerdict(label: string, file: string, child: AgentProcessResult): Verdict | undefined {
  if (child.abortedByCaller)
    return { outcome: 'aborted', message: `${label} was stopped before it finished.` };
  if (child.spawnError !== undefined) {
    return {
      outcome: 'error',
      message: spawnFailureMessage(label, file, child.spawnError),
      fatal: true,
      environment: true,
    };
  }
  return undefined;
}

/** `exited N` or `was killed by SIGX`, for messages about a run that ended without an answer. */
export function howItEnded(child: AgentProcessResult): string {
  return child.exitCode === undefined
    ? `was killed by ${child.signal ?? 'a signal'}`
    : `exited ${child.exitCode}`;
}
