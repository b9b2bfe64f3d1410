// The Claude Code adapter: `claude -p --output-format stream-json`, prompt on stdin, outcome from the stream.
import { systemClock } from '../infra/clock.js';
import type { Command } from '../infra/process.js';
import { formatDuration, formatResetAt, lastLine, notify } from './agent-process.js';
import type { AgentProcessResult } from './agent-process.js';
import { howItEnded, runAdapter, startVerdict, stopForAuth } from './adapter-run.js';
import type { Verdict } from './adapter-run.js';
import { errorTextOutcome, resultDenials, statusOutcome } from './claude-result.js';
import { ClaudeStream, READ_ONLY_TOOLS } from './claude-stream.js';
import type {
  AgentMode,
  AgentRequest,
  AgentResult,
  AgentRunner,
  AgentRunnerOptions,
  AgentSpec,
} from './types.js';

/**
 * Claude Code retries 429/529/401 itself, 10 times over minutes, where Forge cannot see or bound it.
 * A few quick retries keep a long session alive through a blip (a Forge retry would restart the bead
 * from scratch); anything persistent comes back to Forge fast, which waits it out visibly, until the
 * reset time when it is known.
 */
export const CLAUDE_DEFAULT_MAX_RETRIES = 3;

/**
 * How long Claude Code gets to exit by itself after its first `result` (it normally takes ~50 ms) before
 * Forge stops its process group. Since 2.1.330 it waits for its `run_in_background` tasks instead: a doer
 * that started a dev server or a watcher would otherwise run until the bead's timeout, every attempt.
 */
export const CLAUDE_RESULT_GRACE_MS = 2000;

export interface ClaudeRunnerOptions extends AgentRunnerOptions {
  /** Overrides CLAUDE_RESULT_GRACE_MS. */
  resultGraceMs?: number;
}

export function claudeCommand(mode: AgentMode, model: string | undefined, maxBudgetUsd?: number): Command {
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  if (model !== undefined) args.push('--model', model);
  // Claude stops itself at this spend (seen in 2.1.330: a result `error_max_budget_usd`, exit 1).
  if (maxBudgetUsd !== undefined) args.push('--max-budget-usd', formatBudget(maxBudgetUsd));
  if (mode === 'full') args.push('--dangerously-skip-permissions');
  // Only --tools holds: --allowedTools does not restrict, and dontAsk denies instead of prompting.
  // --restricted keeps Read/Grep/Glob inside the working directory (absolute paths and symlinks too)
  // and ignores user, project and local settings, whose allow rules (`"allow": ["Read"]`) reopen the rest.
  else {
    args.push('--tools', READ_ONLY_TOOLS.join(','), '--permission-mode', 'dontAsk', '--strict-mcp-config');
    args.push('--restricted');
    // A judge works in a checkout removed after it: its session, saved, would be a project of its own
    // in the user's ~/.claude/projects for every judged iteration, holding the artifact and the rubric,
    // that nothing can resume. A doer's session is saved as usual.
    args.push('--no-session-persistence');
  }
  return { file: 'claude', args };
}

/** Dollars with cents to four places, never below what Claude accepts as a limit. */
function formatBudget(usd: number): string {
  return Math.max(0.0001, usd).toFixed(4);
}

/** The request's env plus what Claude needs; values the caller set win, except the memory switch. */
export function claudeEnv(
  request: AgentRequest,
  options: AgentRunnerOptions,
): Record<string, string | undefined> {
  const env = { ...request.env };
  env.CLAUDE_CODE_MAX_RETRIES ??= String(options.claudeMaxRetries ?? CLAUDE_DEFAULT_MAX_RETRIES);
  // Otherwise every request carries recent commit subjects and the status, and a commit subject can carry
  // a score: agents must stay blind to them.
  env.CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS ??= '1';
  // Seen, 2.1.x: a headless run is told of a memory folder under ~/.claude/projects/<dir>/memory/ and
  // loads its MEMORY.md into the next run in that directory. Every run starts fresh, whatever the
  // caller's env or the `autoMemoryEnabled` setting say (the env switch wins over the setting).
  env.CLAUDE_CODE_DISABLE_AUTO_MEMORY = '1';
  // 2.1.330 adds a DeferredToolPlaceholder to `--tools Read,Grep,Glob` to keep deferred tool loading on;
  // a read-only run gets exactly its three tools and no machinery for loading more.
  if (request.mode === 'read-only') env.ENABLE_TOOL_SEARCH ??= 'false';
  // Claude refuses --dangerously-skip-permissions as root unless told it is in a sandbox.
  if (request.mode === 'full' && (options.runningAsRoot ?? process.getuid?.() === 0)) env.IS_SANDBOX ??= '1';
  return env;
}

export function createClaudeRunner(spec: AgentSpec, options: ClaudeRunnerOptions = {}): AgentRunner {
  return { name: spec.text, run: (request) => runClaude(spec, options, request) };
}

async function runClaude(
  spec: AgentSpec,
  options: ClaudeRunnerOptions,
  request: AgentRequest,
): Promise<AgentResult> {
  const clock = options.clock ?? systemClock;
  const model = request.model ?? spec.model;
  const stream = new ClaudeStream({
    readOnly: request.mode === 'read-only',
    now: () => clock.now(),
    onActivity: (event) => notify(request, event),
  });
  return runAdapter({
    request,
    runner: options,
    command: claudeCommand(request.mode, model, request.maxBudgetUsd),
    env: claudeEnv(request, options),
    timeoutMs: request.timeoutMs,
    onLine: (line, stop) => {
      const signal = stream.push(line);
      if (signal === 'auth') stopForAuth(request, stop);
      else if (signal === 'answered') {
        // The first result ends the run; a later one only comes after waiting for background tasks.
        stop('answered', {
          afterMs: options.resultGraceMs ?? CLAUDE_RESULT_GRACE_MS,
          activity: 'it answered but kept running (background tasks)',
        });
      }
    },
    classify: (child, now) =>
      classifyClaudeRun({ stream, child, mode: request.mode, model, timeoutMs: request.timeoutMs, now }),
  });
}

export interface ClaudeRunFacts {
  stream: ClaudeStream;
  child: AgentProcessResult;
  mode: AgentMode;
  model: string | undefined;
  timeoutMs: number | undefined;
  now: number;
}

export function classifyClaudeRun(facts: ClaudeRunFacts): AgentResult {
  const { stream, child, mode } = facts;
  const result = stream.result;
  const verdict = decide(facts);
  return {
    ...verdict,
    // The answer to the task is the first result's (a doer's HYPOTHESIS line); a later result answers
    // "your background task ended".
    finalText: result?.result ?? stream.lastAssistantText,
    // Stopped after its answer, Claude exits 143 on Forge's SIGTERM: that says nothing about the run.
    exitCode: child.stoppedFor === 'answered' ? null : (child.exitCode ?? null),
    durationMs: child.durationMs,
    // Over every result; without one (timeout, crash) the assistant messages' own usage is the estimate.
    usage: stream.usage(),
    costUsd: stream.costUsd(),
    numTurns: stream.numTurns(),
    permissionDenials: resultDenials(result),
    toolErrors: [...stream.toolErrors],
    agent: 'claude',
    model: stream.model ?? facts.model,
    scripted: false,
    ...(mode === 'read-only'
      ? { readOnly: { enforcement: 'tools', attempts: [...stream.readOnlyAttempts] } }
      : {}),
  };
}

function decide(facts: ClaudeRunFacts): Verdict {
  const { stream, child, now } = facts;
  const result = stream.result;

  const started = startVerdict('Claude Code', 'claude', child);
  if (started !== undefined) return started;
  if (child.stoppedFor === 'auth') {
    return {
      outcome: 'auth',
      message:
        'The API rejected Claude Code’s credentials (401), so Forge stopped it instead of letting it retry; check ANTHROPIC_API_KEY or log in again.',
    };
  }

  // The usage-limit message can come with exit 0; it still means nothing was done. (A rejected
  // rate_limit_event alone does not: the run may go on, e.g. on another model; it counts on failure.)
  if (stream.usageLimitText !== undefined) return usageLimited(stream, now);

  // A timeout after the answer cut short only what came after it (a wait for background tasks).
  if (child.timedOut && result === undefined) {
    const within = facts.timeoutMs === undefined ? '' : ` within ${formatDuration(facts.timeoutMs)}`;
    if (stream.rateLimitRejected !== undefined) return usageLimited(stream, now);
    const retrying = stream.lastRetry && statusOutcome(stream.lastRetry.status, stream.lastRetry.error);
    if (retrying === 'rate_limited' || retrying === 'overloaded') {
      return {
        outcome: retrying,
        message: `Claude Code was still retrying a ${retrying === 'rate_limited' ? 'rate-limited (429)' : 'overloaded (529)'} request when its timeout stopped it.`,
        retryAfterMs: stream.lastRetry?.delayMs,
      };
    }
    return {
      outcome: 'timeout',
      message: `Claude Code did not finish${within}; it was stopped with everything it started.`,
    };
  }

  // The exit code counts only when Claude ended by itself right after its answer. Stopped by Forge (or
  // its timeout) after the answer, or ending after a later turn, the answer stands on its own.
  const exitCounts = child.stoppedFor === undefined && !child.timedOut && stream.results.length === 1;
  if (result?.subtype === 'error_max_budget_usd' || result?.terminal_reason === 'budget_exhausted') {
    return {
      outcome: 'budget',
      message: `Claude Code stopped at the budget it was given (${lastLine(result.errors?.join(' ') ?? '') || 'budget exhausted'}).`,
    };
  }
  const failed = result === undefined || result.is_error === true || (exitCounts && child.exitCode !== 0);
  if (failed) {
    const text = [result?.result, ...(result?.errors ?? [])].filter((part) => part !== undefined).join(' ');
    const kind =
      statusOutcome(result?.api_error_status ?? undefined, stream.assistantError) ??
      (stream.rateLimitRejected !== undefined ? 'rate_limited' : undefined) ??
      (result === undefined && stream.lastRetry
        ? statusOutcome(stream.lastRetry.status, stream.lastRetry.error)
        : undefined) ??
      errorTextOutcome(text);
    const detail = lastLine(text) || lastLine(child.stderr);
    if (kind === 'auth') {
      return {
        outcome: 'auth',
        message: `Claude Code could not authenticate${detail ? ` (${detail})` : ''}; check ANTHROPIC_API_KEY or log in again.`,
      };
    }
    if (kind === 'rate_limited') {
      if (stream.resetAt() !== undefined) return usageLimited(stream, now);
      return {
        outcome: 'rate_limited',
        message: `Claude Code was rate-limited${detail ? ` (${detail})` : ''}.`,
        retryAfterMs: stream.lastRetry?.delayMs,
      };
    }
    if (kind === 'overloaded') {
      return {
        outcome: 'overloaded',
        message: `The Claude API was overloaded${detail ? ` (${detail})` : ''}.`,
      };
    }
    if (result === undefined) {
      return {
        outcome: 'error',
        message: `Claude Code ${howItEnded(child)} without a result${detail ? `: ${detail}` : ''}.`,
      };
    }
    const reason = result.terminal_reason ?? result.subtype;
    return {
      outcome: 'error',
      message: `Claude Code failed (${reason}${child.exitCode ? `, exit ${child.exitCode}` : ''})${detail ? `: ${detail}` : ''}.`,
    };
  }

  return { outcome: 'ok', message: successMessage(facts) };
}

function successMessage(facts: ClaudeRunFacts): string {
  const { stream, mode } = facts;
  const result = stream.result;
  const denials = resultDenials(result);
  if (mode === 'full' && denials.length > 0) {
    const tools = [...new Set(denials.map((denial) => denial.tool))].join(', ');
    return `Claude Code exited 0, but ${denials.length} tool call(s) were denied (${tools}), so it may not have done the work.`;
  }
  if (mode === 'read-only' && stream.readOnlyAttempts.length > 0) {
    return `Claude Code finished, after trying ${stream.readOnlyAttempts.length} tool call(s) a read-only run does not allow (${stream.readOnlyAttempts.join('; ')}).`;
  }
  const cost = stream.costUsd();
  const turnCount = stream.numTurns();
  const turns = turnCount === undefined ? '' : ` in ${turnCount} turn(s)`;
  const stopped =
    facts.child.stoppedFor === 'answered'
      ? '; it kept running after its answer (background tasks), so Forge stopped it'
      : '';
  return `Claude Code finished${turns}${cost === undefined ? '' : ` for $${cost.toFixed(4)}`}${stopped}.`;
}

function usageLimited(stream: ClaudeStream, now: number): Verdict {
  const resetAt = stream.resetAt();
  if (resetAt === undefined) return { outcome: 'rate_limited', message: 'Claude Code hit a usage limit.' };
  return {
    outcome: 'rate_limited',
    message: `Claude Code hit a usage limit; it resets at ${formatResetAt(resetAt)}.`,
    resetAt,
    retryAfterMs: Math.max(0, resetAt - now),
  };
}
