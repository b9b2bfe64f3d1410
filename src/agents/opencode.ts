// The opencode adapter: `opencode run --format json`, prompt on stdin, outcome from its JSON events.
import type { Command } from '../infra/process.js';
import { formatDuration, lastLine, notify } from './agent-process.js';
import type { AgentProcessResult } from './agent-process.js';
import { howItEnded, runAdapter, startVerdict, stopForAuth } from './adapter-run.js';
import type { Verdict } from './adapter-run.js';
import { apiErrorKind, parseResetTime } from './limits.js';
import { OpencodeStream } from './opencode-stream.js';
import { RetryWatch, retriesEnd } from './retry-watch.js';
import type {
  AgentBeadInfo,
  AgentMode,
  AgentRequest,
  AgentResult,
  AgentRunner,
  AgentRunnerOptions,
  AgentSpec,
} from './types.js';

/** opencode retries 429/5xx itself without end; after this many quiet retries Forge takes over. */
export const OPENCODE_QUIET_RETRIES = 2;

/**
 * Read-only: every permission that writes, runs or reaches out is denied, which removes those tools from
 * what the model is offered (seen with 1.18: only glob, grep, read, skill, todowrite remain). The env
 * variable is merged after the user's and the project's config, so their `allow` rules cannot reopen it.
 */
export const OPENCODE_READ_ONLY_PERMISSION = JSON.stringify({
  edit: 'deny',
  bash: 'deny',
  webfetch: 'deny',
  websearch: 'deny',
  task: 'deny',
  external_directory: 'deny',
});

/**
 * The session's title. Without one, opencode (seen with 1.18.33) asks its small model for a title before
 * it starts: one model request more per run, with the whole prompt, that Forge never reads. `run` has
 * taken --title since before --auto, which Forge already needs, so no opencode that works loses by it.
 */
export function opencodeTitle(bead: AgentBeadInfo | undefined): string {
  return bead === undefined ? 'Forge' : `Forge ${bead.id}`;
}

export function opencodeCommand(mode: AgentMode, model: string | undefined, title: string): Command {
  // --print-logs at WARN puts each failed API call on stderr; that is where retries show.
  const args = ['run', '--format', 'json', '--print-logs', '--log-level', 'WARN', `--title=${title}`];
  if (model !== undefined) args.push('-m', model);
  // Full: approve every permission not explicitly denied. Read-only gets no --auto: what is not denied
  // would otherwise be asked, and a headless run refuses what it cannot ask.
  if (mode === 'full') args.push('--auto');
  return { file: 'opencode', args };
}

/**
 * Config Forge gives every opencode run, over the user's (OPENCODE_CONFIG_CONTENT is merged last):
 * no snapshots. With them on, opencode keeps a git object store of the whole working tree per project
 * under ~/.local/share/opencode/snapshot and stages the tree into it at every step (seen with
 * 1.18.33: ~40 git calls for a one-turn run in a two-file repository), for an undo that a headless run
 * never offers. Forge makes and reverts the commits itself.
 */
export const OPENCODE_FORGE_CONFIG = { snapshot: false };

/**
 * The config content for a run: Forge's keys over what the caller's OPENCODE_CONFIG_CONTENT holds.
 * Content that is not a JSON object (opencode also reads JSONC) is left as the caller wrote it.
 */
export function opencodeConfigContent(own: string | undefined): string | undefined {
  if (own === undefined || own.trim() === '') return JSON.stringify(OPENCODE_FORGE_CONFIG);
  try {
    const parsed: unknown = JSON.parse(own);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return own;
    return JSON.stringify({ ...parsed, ...OPENCODE_FORGE_CONFIG });
  } catch {
    return own;
  }
}

/** The request's env plus what opencode needs; values the caller set win, except read-only's settings. */
export function opencodeEnv(request: AgentRequest): Record<string, string | undefined> {
  const env = { ...request.env };
  env.OPENCODE_DISABLE_AUTOUPDATE ??= '1';
  env.OPENCODE_CONFIG_CONTENT = opencodeConfigContent(env.OPENCODE_CONFIG_CONTENT);
  if (request.mode === 'read-only') {
    env.OPENCODE_PERMISSION = OPENCODE_READ_ONLY_PERMISSION;
    // A judge runs in a copy outside any repository, where opencode (1.18) looks for AGENTS.md,
    // CLAUDE.md and opencode.json (with its `instructions` files) in every directory up to `/` and puts
    // them in the system prompt: a file anyone left in /tmp would reach the judge. Only the user's own
    // config (~/.config/opencode) is read then.
    env.OPENCODE_DISABLE_PROJECT_CONFIG = '1';
  }
  return env;
}

export function createOpencodeRunner(spec: AgentSpec, options: AgentRunnerOptions = {}): AgentRunner {
  return { name: spec.text, run: (request) => runOpencode(spec, options, request) };
}

function runOpencode(
  spec: AgentSpec,
  options: AgentRunnerOptions,
  request: AgentRequest,
): Promise<AgentResult> {
  const model = request.model ?? spec.model;
  const stream = new OpencodeStream(request.mode === 'read-only', (event) => notify(request, event));
  const retries = new RetryWatch(OPENCODE_QUIET_RETRIES);
  return runAdapter({
    request,
    runner: options,
    command: opencodeCommand(request.mode, model, opencodeTitle(request.bead)),
    env: opencodeEnv(request),
    timeoutMs: request.timeoutMs,
    onLine: (line) => stream.push(line),
    onStderrLine: (line, stop) => {
      const failure = OpencodeStream.streamError(line);
      if (failure === undefined) return;
      notify(request, { type: 'retry', error: failure, attempt: retries.count + 1 });
      const kind = retries.failed(failure);
      if (kind === 'auth') stopForAuth(request, stop);
      else if (kind !== undefined) stop(kind, { activity: `it kept retrying: ${lastLine(failure, 120)}` });
    },
    classify: (child, now) =>
      classifyOpencodeRun({
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

export interface OpencodeRunFacts {
  stream: OpencodeStream;
  retries: RetryWatch;
  child: AgentProcessResult;
  mode: AgentMode;
  model: string | undefined;
  timeoutMs: number | undefined;
  now: number;
}

export function classifyOpencodeRun(facts: OpencodeRunFacts): AgentResult {
  const { stream, child, mode } = facts;
  return {
    ...decide(facts),
    finalText: stream.finalText,
    exitCode: child.stoppedFor === undefined ? (child.exitCode ?? null) : null,
    durationMs: child.durationMs,
    usage: { ...stream.usage },
    ...(stream.sawCost ? { costUsd: stream.costUsd } : {}),
    numTurns: stream.steps,
    permissionDenials: [],
    toolErrors: [...stream.toolErrors],
    agent: 'opencode',
    ...(facts.model === undefined ? {} : { model: facts.model }),
    scripted: false,
    ...(mode === 'read-only'
      ? { readOnly: { enforcement: 'tools', attempts: [...stream.readOnlyAttempts] } }
      : {}),
  };
}

function decide(facts: OpencodeRunFacts): Verdict {
  const { stream, retries, child, now } = facts;
  const started = startVerdict('opencode', 'opencode', child);
  if (started !== undefined) return started;
  const failure = stream.error?.message ?? retries.last?.text;
  const kind =
    (stream.error?.status === 401 ? 'auth' : undefined) ??
    (stream.error?.status === 429 ? 'rate_limited' : undefined) ??
    (child.stoppedFor === 'auth' ? 'auth' : undefined) ??
    (failure === undefined ? undefined : apiErrorKind(failure));
  const detail = lastLine(failure ?? '') || lastLine(child.stderr);

  if (kind === 'auth') {
    return {
      outcome: 'auth',
      message: `opencode could not authenticate${detail ? ` (${detail})` : ''}; check the provider's API key (opencode auth login).`,
    };
  }
  const stoppedRetrying = child.stoppedFor === 'rate_limited' || child.stoppedFor === 'overloaded';
  if (stoppedRetrying || (child.timedOut && retries.last !== undefined) || stream.error !== undefined) {
    if (kind === 'rate_limited') {
      const resetAt = failure === undefined ? undefined : parseResetTime(failure, now);
      return {
        outcome: 'rate_limited',
        message: `opencode was rate-limited (${detail}); ${retriesEnd(child, retries)}.`,
        ...(resetAt === undefined ? {} : { resetAt, retryAfterMs: Math.max(0, resetAt - now) }),
      };
    }
    if (kind === 'overloaded') {
      return {
        outcome: 'overloaded',
        message: `The model API was overloaded (${detail}); ${retriesEnd(child, retries)}.`,
      };
    }
  }
  if (child.timedOut) {
    const within = facts.timeoutMs === undefined ? '' : ` within ${formatDuration(facts.timeoutMs)}`;
    return {
      outcome: 'timeout',
      message: `opencode did not finish${within}; it was stopped with everything it started.`,
    };
  }
  if (stream.error !== undefined) {
    return { outcome: 'error', message: `opencode failed: ${detail}.` };
  }
  if (child.exitCode === 0 && stream.finished) {
    const cost = stream.sawCost ? ` for $${stream.costUsd.toFixed(4)}` : '';
    const tried =
      facts.mode === 'read-only' && stream.readOnlyAttempts.length > 0
        ? `, after trying ${stream.readOnlyAttempts.length} tool call(s) a read-only run does not allow`
        : '';
    return { outcome: 'ok', message: `opencode finished in ${stream.steps} step(s)${cost}${tried}.` };
  }
  const what =
    stream.steps === 0 ? ' before its first step' : stream.finished ? '' : ' in the middle of a step';
  return { outcome: 'error', message: `opencode ${howItEnded(child)}${what}${detail ? `: ${detail}` : ''}.` };
}
