// The Gemini CLI adapter: `gemini -o stream-json`, prompt on stdin, outcome from its JSON events.
import type { Command } from '../infra/process.js';
import { formatDuration, formatResetAt, lastLine, notify } from './agent-process.js';
import type { AgentProcessResult } from './agent-process.js';
import { howItEnded, runAdapter, startVerdict, stopForAuth } from './adapter-run.js';
import type { Verdict } from './adapter-run.js';
import { geminiRunHome, type GeminiRunHome } from './gemini-home.js';
import { skippedSettingsPath, systemSettingsEnv } from './gemini-settings.js';
import { GeminiStream } from './gemini-stream.js';
import { apiErrorKind, parseResetTime } from './limits.js';
import { RetryWatch, retriesEnd } from './retry-watch.js';
import type {
  AgentMode,
  AgentRequest,
  AgentResult,
  AgentRunner,
  AgentRunnerOptions,
  AgentSpec,
} from './types.js';

/** Gemini CLI retries 429/5xx itself, up to 10 times with backoff; after this many Forge takes over. */
export const GEMINI_QUIET_RETRIES = 1;

export function geminiCommand(mode: AgentMode, model: string | undefined): Command {
  // The prompt comes on stdin: with stdin not a terminal and no -p, Gemini CLI runs headless (seen, 0.61).
  const args = ['--output-format', 'stream-json', '--skip-trust'];
  if (model !== undefined) args.push('--model', model);
  // `plan` is Gemini CLI's read-only mode: no shell tool, and writes only into its own plans directory
  // outside the tree (seen: write_file and replace in the tree were refused, run_shell_command absent).
  args.push('--approval-mode', mode === 'full' ? 'yolo' : 'plan');
  return { file: 'gemini', args };
}

export function createGeminiRunner(spec: AgentSpec, options: AgentRunnerOptions = {}): AgentRunner {
  return { name: spec.text, run: (request) => runGemini(spec, options, request) };
}

async function runGemini(
  spec: AgentSpec,
  options: AgentRunnerOptions,
  request: AgentRequest,
): Promise<AgentResult> {
  const model = request.model ?? spec.model;
  let home: GeminiRunHome;
  // Gemini CLI reads a system settings file only when root owns it; anyone else gets Forge's settings in
  // the run's own home. Every run gets one, so no run sees the memory an earlier one left.
  const root = options.runningAsRoot ?? process.getuid?.() === 0;
  try {
    home = root
      ? await geminiRunHome(await systemSettingsEnv(request.env, request.mode), request.mode, false)
      : await geminiRunHome(request.env, request.mode, true);
  } catch (error) {
    return settingsFailure(request.mode, model, error instanceof Error ? error.message : String(error));
  }
  try {
    return await runGeminiIn(home.env, root, spec, options, request);
  } finally {
    await home.remove();
  }
}

async function runGeminiIn(
  env: Record<string, string | undefined>,
  root: boolean,
  spec: AgentSpec,
  options: AgentRunnerOptions,
  request: AgentRequest,
): Promise<AgentResult> {
  const model = request.model ?? spec.model;
  // Only the file Forge wrote: a user's own system settings path, skipped, is not Forge's to judge.
  const settingsPath = root ? env.GEMINI_CLI_SYSTEM_SETTINGS_PATH : undefined;
  const stream = new GeminiStream(request.mode === 'read-only', (event) => notify(request, event));
  const retries = new RetryWatch(GEMINI_QUIET_RETRIES);
  return runAdapter({
    request,
    runner: options,
    command: geminiCommand(request.mode, model),
    env: withoutRelaunch(env),
    timeoutMs: request.timeoutMs,
    onLine: (line) => stream.push(line),
    onStderrLine: (line, stop) => {
      // Without Forge's settings the run would see what a blind agent must not: stop before it asks.
      const skipped = skippedSettingsPath(line);
      if (skipped !== undefined && skipped === settingsPath) {
        stop(SETTINGS_SKIPPED, { activity: 'Gemini CLI would not use the settings Forge gave it' });
        return;
      }
      const notice = GeminiStream.retryNotice(line);
      if (notice === undefined) return;
      notify(request, {
        type: 'retry',
        attempt: notice.attempt,
        error: lastLine(notice.text, 200),
        ...(notice.status === undefined ? {} : { status: notice.status }),
      });
      const kind = retries.failed(notice.text);
      if (kind === 'auth') stopForAuth(request, stop);
      else if (kind !== undefined)
        stop(kind, { activity: `it kept retrying (status ${notice.status ?? '?'})` });
    },
    classify: (child, now) =>
      classifyGeminiRun({
        stream,
        retries,
        child,
        mode: request.mode,
        model,
        timeoutMs: request.timeoutMs,
        now,
      }),
  });
}

/**
 * Gemini CLI starts, then starts itself again as a child with a heap of half the machine's memory
 * (seen, 0.61): two loads of its bundle per run, ~0.6 s of CPU here, for a heap a headless bead does
 * not need. Forge asks it not to; a user who sets GEMINI_CLI_NO_RELAUNCH (even to "", which turns it
 * off) keeps their own choice.
 */
export function withoutRelaunch(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return 'GEMINI_CLI_NO_RELAUNCH' in env ? env : { ...env, GEMINI_CLI_NO_RELAUNCH: 'true' };
}

/** The stop reason when Gemini CLI refused Forge's per-run settings file. */
const SETTINGS_SKIPPED = 'settings-skipped';

/** A run that never started because Forge could not give Gemini CLI its settings. */
function settingsFailure(mode: AgentMode, model: string | undefined, why: string): AgentResult {
  return {
    outcome: 'error',
    message: `Gemini CLI was not started: ${why}`,
    fatal: true,
    finalText: '',
    exitCode: null,
    durationMs: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    numTurns: 0,
    permissionDenials: [],
    toolErrors: [],
    agent: 'gemini',
    ...(model === undefined ? {} : { model }),
    scripted: false,
    ...(mode === 'read-only' ? { readOnly: { enforcement: 'tools', attempts: [] } } : {}),
  };
}

export interface GeminiRunFacts {
  stream: GeminiStream;
  retries: RetryWatch;
  child: AgentProcessResult;
  mode: AgentMode;
  model: string | undefined;
  timeoutMs: number | undefined;
  now: number;
}

export function classifyGeminiRun(facts: GeminiRunFacts): AgentResult {
  const { stream, child, mode } = facts;
  const model = stream.model ?? facts.model;
  return {
    ...decide(facts),
    finalText: stream.finalText,
    exitCode: child.stoppedFor === undefined ? (child.exitCode ?? null) : null,
    durationMs: child.durationMs,
    // Gemini CLI reports tokens, never a price.
    usage: { ...stream.usage },
    numTurns: stream.toolCalls + 1,
    permissionDenials: [],
    toolErrors: [...stream.toolErrors],
    agent: 'gemini',
    ...(model === undefined ? {} : { model }),
    scripted: false,
    ...(mode === 'read-only'
      ? { readOnly: { enforcement: 'tools', attempts: [...stream.readOnlyAttempts] } }
      : {}),
  };
}

/** Google's quota errors say `Please retry in 37.5s`; the reset parser knows other phrasings. */
function resetOf(text: string, now: number): number | undefined {
  const seconds = /retry in (\d+(?:\.\d+)?)\s*s\b/i.exec(text)?.[1];
  if (seconds !== undefined) return now + Math.ceil(Number(seconds) * 1000);
  return parseResetTime(text, now);
}

function decide(facts: GeminiRunFacts): Verdict {
  const { stream, retries, child, now } = facts;
  const started = startVerdict('Gemini CLI', 'gemini', child);
  if (started !== undefined) return started;
  if (child.stoppedFor === SETTINGS_SKIPPED) {
    const warning = child.stderr.split('\n').find((line) => skippedSettingsPath(line) !== undefined) ?? '';
    return {
      outcome: 'error',
      message:
        `Gemini CLI would not use the settings Forge writes for every run (${lastLine(warning, 300)}). ` +
        'It reads a system settings file only when the file and every directory above it are owned by root ' +
        'and writable by no one else; without it the agent would be shown the working tree, so Forge stopped it.',
      fatal: true,
      environment: true,
    };
  }
  const failed = stream.result !== undefined && stream.result.status !== 'success';
  const failure = (failed ? stream.result?.error : undefined) ?? retries.last?.text;
  const kind =
    child.stoppedFor === 'auth' ? 'auth' : failure === undefined ? undefined : apiErrorKind(failure);
  const detail = lastLine(failure ?? '') || lastLine(child.stderr);

  if (kind === 'auth') {
    return {
      outcome: 'auth',
      message: `Gemini CLI could not authenticate${detail ? ` (${detail})` : ''}; check GEMINI_API_KEY or log in again.`,
    };
  }
  const gaveUp = child.stoppedFor !== undefined || failed || (child.timedOut && retries.last !== undefined);
  if (gaveUp && kind === 'rate_limited') {
    const resetAt = failure === undefined ? undefined : resetOf(failure, now);
    const until = resetAt === undefined ? '' : `; it resets at ${formatResetAt(resetAt)}`;
    return {
      outcome: 'rate_limited',
      message: `Gemini CLI was rate-limited (${lastLine(detail, 160)})${until}; ${retriesEnd(child, retries)}.`,
      ...(resetAt === undefined ? {} : { resetAt, retryAfterMs: Math.max(0, resetAt - now) }),
    };
  }
  if (gaveUp && kind === 'overloaded') {
    return {
      outcome: 'overloaded',
      message: `The Gemini API was overloaded (${lastLine(detail, 160)}); ${retriesEnd(child, retries)}.`,
    };
  }
  if (child.timedOut) {
    const within = facts.timeoutMs === undefined ? '' : ` within ${formatDuration(facts.timeoutMs)}`;
    return {
      outcome: 'timeout',
      message: `Gemini CLI did not finish${within}; it was stopped with everything it started.`,
    };
  }
  if (stream.result?.status === 'success' && child.exitCode === 0) {
    const tried =
      facts.mode === 'read-only' && stream.readOnlyAttempts.length > 0
        ? `, after trying ${stream.readOnlyAttempts.length} tool call(s) a read-only run does not allow`
        : '';
    return { outcome: 'ok', message: `Gemini CLI finished after ${stream.toolCalls} tool call(s)${tried}.` };
  }
  if (stream.result === undefined) {
    return {
      outcome: 'error',
      message: `Gemini CLI ${howItEnded(child)} without a result${detail ? `: ${detail}` : ''}.`,
    };
  }
  return {
    outcome: 'error',
    message: `Gemini CLI failed (${howItEnded(child)})${detail ? `: ${detail}` : ''}.`,
  };
}
