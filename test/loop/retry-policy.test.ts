// The runner's retry policy, one line per case: what an attempt's outcome and the counters so far lead to.
import { describe, expect, it } from 'vitest';
import {
  decideAfterAttempt,
  MAX_OVERLOAD_WAITS,
  MAX_RATE_LIMIT_WAITS,
  MAX_RESET_WAIT_MS,
  RESET_MARGIN_MS,
  type AttemptDecision,
  type AttemptFacts,
  type RetryCounters,
} from '../../src/loop/retry-policy.js';
import type { ExecutionResult } from '../../src/loop/types.js';

const NOW = 1_000_000;
const zero: RetryCounters = { failures: 0, overloadWaits: 0, rateLimitWaits: 0 };

interface Case {
  name: string;
  result: Partial<ExecutionResult> & Pick<ExecutionResult, 'outcome'>;
  facts?: Partial<Omit<AttemptFacts, 'result'>>;
  decision: AttemptDecision | Pick<AttemptDecision, 'kind'> | { kind: 'stop'; reason: string };
  counters?: Partial<RetryCounters>;
}

// Defaults: attempt 1 of 3, backoff 1s capped at 60s, no wall-clock cap, nothing counted yet.
// prettier-ignore
const cases: Case[] = [
  { name: 'ok closes', result: { outcome: 'ok' }, decision: { kind: 'close' } },
  { name: 'auth stops', result: { outcome: 'auth' }, decision: { kind: 'stop', reason: 'auth' } },
  { name: 'needs_human stops', result: { outcome: 'needs_human' }, decision: { kind: 'stop', reason: 'needs_human' } },
  { name: 'budget stops as terminal', result: { outcome: 'budget' }, decision: { kind: 'stop', reason: 'terminal' } },
  { name: 'aborted by a signal is interrupted', result: { outcome: 'aborted' }, facts: { interrupted: true }, decision: { kind: 'stop', reason: 'interrupted' } },
  { name: 'aborted with the wall clock spent is the wall clock', result: { outcome: 'aborted' }, facts: { wallClockLeft: 0 }, decision: { kind: 'stop', reason: 'wall_clock' } },
  { name: 'aborted by nothing of the run’s (a queue worker shut down) is a lost attempt, retried', result: { outcome: 'aborted' }, decision: { kind: 'retry' }, counters: { failures: 1 } },
  { name: 'environment error stops, no failure counted', result: { outcome: 'error', environment: true }, decision: { kind: 'stop', reason: 'environment' }, counters: { failures: 0 } },
  { name: 'first error retries after the base backoff', result: { outcome: 'error' }, decision: { kind: 'retry', delayMs: 1_000, why: 'retrying after a failed attempt' }, counters: { failures: 1 } },
  { name: 'second error backs off twice as long', result: { outcome: 'error' }, facts: { attempt: 2, counters: { ...zero, failures: 1 } }, decision: { kind: 'retry', delayMs: 2_000, why: 'retrying after a failed attempt' }, counters: { failures: 2 } },
  { name: 'failure backoff is capped', result: { outcome: 'error' }, facts: { maxAttempts: 20, counters: { ...zero, failures: 10 } }, decision: { kind: 'retry', delayMs: 60_000, why: 'retrying after a failed attempt' } },
  { name: 'last attempt fails the bead', result: { outcome: 'error', message: 'boom' }, facts: { attempt: 3, counters: { ...zero, failures: 2 } }, decision: { kind: 'fail', message: 'Bead b-1 failed 3 time(s); last: boom' }, counters: { failures: 3 } },
  { name: 'fatal fails at once, naming the attempt', result: { outcome: 'error', fatal: true, message: 'no agent' }, decision: { kind: 'fail', message: 'Bead b-1 failed on attempt 1, and retrying cannot help: no agent' }, counters: { failures: 3 } },
  { name: 'timeout is a failed attempt', result: { outcome: 'timeout' }, decision: { kind: 'retry', delayMs: 1_000, why: 'retrying after a failed attempt' } },
  { name: 'timeout cut by the spent wall clock stops', result: { outcome: 'timeout' }, facts: { limitedByWallClock: true, wallClockLeft: 0 }, decision: { kind: 'stop', reason: 'wall_clock' } },
  { name: 'retry past the wall clock stops, the attempt counted', result: { outcome: 'error' }, facts: { wallClockLeft: 999 }, decision: { kind: 'stop', reason: 'wall_clock', failedAttempt: true } },
  { name: 'rate limit with a reset waits until it, plus a margin', result: { outcome: 'rate_limited', resetAt: NOW + 60_000 }, decision: { kind: 'wait', delayMs: 60_000 + RESET_MARGIN_MS, why: 'rate limited' }, counters: { rateLimitWaits: 1, failures: 0 } },
  { name: 'a reset days away ends the run, the bead open, instead of sleeping through it', result: { outcome: 'rate_limited', resetAt: NOW + 20 * 86_400_000 }, decision: { kind: 'stop', reason: 'environment' }, counters: { rateLimitWaits: 1, failures: 0 } },
  { name: 'a reset within the longest wait is waited for', result: { outcome: 'rate_limited', resetAt: NOW + MAX_RESET_WAIT_MS - RESET_MARGIN_MS }, decision: { kind: 'wait', delayMs: MAX_RESET_WAIT_MS }, counters: { rateLimitWaits: 1 } },
  { name: 'rate limit with no reset backs off by waits so far', result: { outcome: 'rate_limited' }, facts: { counters: { ...zero, rateLimitWaits: 2 } }, decision: { kind: 'wait', delayMs: 4_000, why: 'rate limited' }, counters: { rateLimitWaits: 3 } },
  { name: 'rate limit spends no failure', result: { outcome: 'rate_limited' }, facts: { attempt: 2, counters: { ...zero, failures: 1 } }, decision: { kind: 'wait' }, counters: { failures: 1 } },
  { name: 'rate limit with a past reset backs off', result: { outcome: 'rate_limited', resetAt: NOW - 1 }, decision: { kind: 'wait', delayMs: 1_000, why: 'rate limited' } },
  { name: 'last rate-limit wait still waits', result: { outcome: 'rate_limited' }, facts: { counters: { ...zero, rateLimitWaits: MAX_RATE_LIMIT_WAITS - 1 } }, decision: { kind: 'wait' } },
  { name: 'rate limit past its bound stops as failed', result: { outcome: 'rate_limited' }, facts: { counters: { ...zero, rateLimitWaits: MAX_RATE_LIMIT_WAITS } }, decision: { kind: 'stop', reason: 'failed' }, counters: { rateLimitWaits: MAX_RATE_LIMIT_WAITS + 1 } },
  { name: 'rate-limit wait past the wall clock stops', result: { outcome: 'rate_limited', resetAt: NOW + 3_600_000 }, facts: { wallClockLeft: 60_000 }, decision: { kind: 'stop', reason: 'wall_clock' } },
  { name: 'overload backs off, ignoring any reset', result: { outcome: 'overloaded', resetAt: NOW + 3_600_000 }, decision: { kind: 'wait', delayMs: 1_000, why: 'overloaded' }, counters: { overloadWaits: 1, failures: 0 } },
  { name: 'overload backoff grows', result: { outcome: 'overloaded' }, facts: { counters: { ...zero, overloadWaits: 3 } }, decision: { kind: 'wait', delayMs: 8_000, why: 'overloaded' } },
  { name: 'last overload wait still waits', result: { outcome: 'overloaded' }, facts: { counters: { ...zero, overloadWaits: MAX_OVERLOAD_WAITS - 1 } }, decision: { kind: 'wait' } },
  { name: 'overload past its bound is a failed attempt', result: { outcome: 'overloaded' }, facts: { counters: { ...zero, overloadWaits: MAX_OVERLOAD_WAITS } }, decision: { kind: 'retry' }, counters: { failures: 1, overloadWaits: MAX_OVERLOAD_WAITS + 1 } },
  { name: 'overload past its bound on the last attempt fails', result: { outcome: 'overloaded' }, facts: { attempt: 3, counters: { failures: 2, rateLimitWaits: 0, overloadWaits: MAX_OVERLOAD_WAITS } }, decision: { kind: 'fail' } },
];

describe('decideAfterAttempt', () => {
  it.each(cases)('$name', ({ result, facts, decision, counters }) => {
    const answer = decideAfterAttempt('b-1', {
      result: { message: 'm', ...result },
      attempt: 1,
      maxAttempts: 3,
      counters: zero,
      backoffMs: 1_000,
      maxBackoffMs: 60_000,
      now: NOW,
      wallClockLeft: Number.POSITIVE_INFINITY,
      limitedByWallClock: false,
      interrupted: false,
      ...facts,
    });
    expect(answer.decision).toMatchObject(decision);
    if (counters !== undefined) expect(answer.counters).toMatchObject(counters);
  });
});
