// The runner's policy as data: after an attempt, whether to close, stop, wait, retry or fail the bead.
import { backoffDelay } from './select.js';
import type { ExecutionResult, StopReason } from './types.js';

/** Consecutive overload answers tolerated for one bead before they count as a failed attempt. */
export const MAX_OVERLOAD_WAITS = 8;
/** Consecutive rate-limit waits for one bead; past this the limit is not lifting and the loop stops. */
export const MAX_RATE_LIMIT_WAITS = 48;
/**
 * The longest wait for a known reset: a plan's window resets within hours; a limit that lifts days
 * away (a weekly cap, or a reset time no CLI would give) ends the run instead of sleeping through it.
 */
export const MAX_RESET_WAIT_MS = 12 * 3_600_000;
/** Margin added to a known reset time, so the first call after it is not refused again. */
export const RESET_MARGIN_MS = 5_000;

/** What one bead has been through so far; a wait spends no attempt and no failure. */
export interface RetryCounters {
  failures: number;
  overloadWaits: number;
  rateLimitWaits: number;
}

export interface AttemptFacts {
  result: Pick<ExecutionResult, 'outcome' | 'message' | 'fatal' | 'environment' | 'resetAt' | 'hint'>;
  /** The bead's true attempt number (waits do not raise it). */
  attempt: number;
  maxAttempts: number;
  counters: RetryCounters;
  backoffMs: number;
  maxBackoffMs: number;
  now: number;
  /** Wall-clock time left after the attempt (Infinity: no cap). */
  wallClockLeft: number;
  /** The attempt's timeout was cut short to fit the wall clock. */
  limitedByWallClock: boolean;
  /** The run was interrupted (SIGINT/SIGTERM). */
  interrupted: boolean;
}

export type AttemptDecision =
  | { kind: 'close' }
  /**
   * Leave the bead open (commenting `why`) and end the run; `failedAttempt`: the attempt failed and
   * is commented as such first (a retry whose wait would pass the wall-clock cap).
   */
  | {
      kind: 'stop';
      reason: StopReason;
      why: string;
      message: string;
      failedAttempt?: true;
      /** The result's own hint (ExecutionResult.hint), when it has one. */
      hint?: string;
    }
  /** Sleep, then run the same attempt again: no attempt or failure is spent. */
  | { kind: 'wait'; delayMs: number; why: string }
  /** Comment the failed attempt, sleep, then run the next attempt. */
  | { kind: 'retry'; delayMs: number; why: string }
  /** Comment the failed attempt, label the bead failed, end the run. */
  | { kind: 'fail'; message: string };

export interface PolicyAnswer {
  decision: AttemptDecision;
  counters: RetryCounters;
}

/** The decision after one attempt of `beadId`, and the counters it leaves. Pure: no clock, no I/O. */
export function decideAfterAttempt(beadId: string, facts: AttemptFacts): PolicyAnswer {
  const { result, counters } = facts;
  const stop = (reason: StopReason, why: string, message: string): PolicyAnswer => ({
    decision: {
      kind: 'stop',
      reason,
      why,
      message,
      ...(result.hint === undefined ? {} : { hint: result.hint }),
    },
    counters,
  });
  switch (result.outcome) {
    case 'ok':
      return { decision: { kind: 'close' }, counters };
    case 'auth':
      return stop('auth', 'authentication failed', `The agent could not authenticate: ${result.message}`);
    case 'needs_human':
      return stop('needs_human', 'a human is needed', result.message);
    case 'budget':
      return stop('terminal', 'the budget is spent', result.message);
    case 'aborted':
      if (facts.interrupted)
        return stop('interrupted', 'interrupted', 'Interrupted; the bead was left open.');
      if (facts.wallClockLeft <= 0)
        return stop('wall_clock', 'interrupted', 'The wall-clock cap was reached.');
      // Stopped by nothing of this run's (a queue worker shut down under it): a lost attempt, retried
      // within --max-attempts, not a cap that was never set.
      return failedAttempt(beadId, facts);
    case 'rate_limited': {
      const next = { ...counters, rateLimitWaits: counters.rateLimitWaits + 1 };
      const why = 'rate limited';
      if (next.rateLimitWaits > MAX_RATE_LIMIT_WAITS) {
        return {
          decision: {
            kind: 'stop',
            reason: 'failed',
            why: `${why} ${next.rateLimitWaits} times in a row`,
            message: `The agent stayed ${why} after ${next.rateLimitWaits} waits: ${result.message}`,
          },
          counters: next,
        };
      }
      const untilReset =
        result.resetAt !== undefined && result.resetAt > facts.now
          ? result.resetAt - facts.now + RESET_MARGIN_MS
          : undefined;
      if (untilReset !== undefined && untilReset > MAX_RESET_WAIT_MS) {
        const at = new Date(result.resetAt ?? facts.now).toISOString();
        return {
          decision: {
            kind: 'stop',
            reason: 'environment',
            why: `${why} until ${at}`,
            message: `The agent's usage limit resets at ${at}, more than ${MAX_RESET_WAIT_MS / 3_600_000} hours away: the run stops rather than wait for it, the bead left open. Run again after the reset (or with another agent).`,
          },
          counters: next,
        };
      }
      const delay = untilReset ?? backoffDelay(next.rateLimitWaits, facts.backoffMs, facts.maxBackoffMs);
      return { decision: withinWallClock({ kind: 'wait', delayMs: delay, why }, facts), counters: next };
    }
    case 'overloaded': {
      const next = { ...counters, overloadWaits: counters.overloadWaits + 1 };
      if (next.overloadWaits <= MAX_OVERLOAD_WAITS) {
        const delay = backoffDelay(next.overloadWaits, facts.backoffMs, facts.maxBackoffMs);
        const wait = { kind: 'wait', delayMs: delay, why: 'overloaded' } as const;
        return { decision: withinWallClock(wait, facts), counters: next };
      }
      return failedAttempt(beadId, { ...facts, counters: next });
    }
    case 'timeout':
      if (facts.limitedByWallClock && facts.wallClockLeft <= 0) {
        return stop(
          'wall_clock',
          'the wall-clock cap was reached',
          'The wall-clock cap was reached mid-bead.',
        );
      }
      return failedAttempt(beadId, facts);
    case 'error':
      if (result.environment === true) {
        // Nothing is wrong with the bead: no label, no retry; the run stops until the machine is fixed.
        return stop('environment', 'the environment lacks what it needs', result.message);
      }
      return failedAttempt(beadId, facts);
  }
}

/** An attempt that spends one of the bead's attempts (all of them when retrying cannot help). */
function failedAttempt(beadId: string, facts: AttemptFacts): PolicyAnswer {
  const { result, attempt, maxAttempts } = facts;
  const failures = result.fatal === true ? maxAttempts : facts.counters.failures + 1;
  const counters = { ...facts.counters, failures };
  if (failures >= maxAttempts) {
    const message =
      result.fatal === true
        ? `Bead ${beadId} failed on attempt ${attempt}, and retrying cannot help: ${result.message}`
        : `Bead ${beadId} failed ${failures} time(s); last: ${result.message}`;
    return { decision: { kind: 'fail', message }, counters };
  }
  const delay = backoffDelay(failures, facts.backoffMs, facts.maxBackoffMs);
  const retry = { kind: 'retry', delayMs: delay, why: 'retrying after a failed attempt' } as const;
  return { decision: withinWallClock(retry, facts), counters };
}

/** A wait that would pass the wall-clock cap stops the run instead. */
function withinWallClock(
  decision: Extract<AttemptDecision, { kind: 'wait' | 'retry' }>,
  facts: AttemptFacts,
): AttemptDecision {
  if (decision.delayMs < facts.wallClockLeft) return decision;
  return {
    kind: 'stop',
    reason: 'wall_clock',
    why: `${decision.why}; the wait would pass the wall-clock cap`,
    message: `Stopped: ${decision.why}, and the wait would pass the wall-clock cap.`,
    ...(decision.kind === 'retry' ? { failedAttempt: true as const } : {}),
  };
}
