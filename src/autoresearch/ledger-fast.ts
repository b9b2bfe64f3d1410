// The common ledger line checked without zod: reading a long ledger spent a fifth of `ralph-loop report` in
// `ledgerLineSchema.safeParse`, one plain line at a time.
//
// `ledgerLineSchema` stays the one definition of a line. This only answers "certainly valid, and here is
// what zod would have returned" or "not sure": it returns `undefined` for anything unusual (an unknown key,
// a tamper record, a failed guard, any value of another type or range) and the caller asks zod, which also
// words every error. So it must never accept what zod rejects, and what it returns must equal zod's output:
// a fresh object holding the present keys of the schema, in the schema's order (test/autoresearch/
// ledger-fast.test.ts checks both against zod). It mirrors zod 4 exactly: `z.number()` is a finite number
// (NaN and ±Infinity rejected), `.int()` a safe integer, `.min(0)` takes -0, an optional key is present
// when `key in input` (an explicit `undefined` is left to zod).
import type { Decision, LedgerLine, TerminalReason } from './ledger.js';

// Written out rather than imported from ledger.ts, which imports this module: a value read at load time
// across that cycle would not exist yet. `satisfies` keeps each list equal to the schema's, both ways.
const DECISION_NAMES = {
  baseline: true,
  keep: true,
  revert: true,
  crash: true,
  tamper: true,
  guard_failed: true,
} as const satisfies Record<Decision, true>;
const TERMINAL_NAMES = {
  goal_reached: true,
  iteration_cap: true,
  plateau: true,
  budget: true,
  wall_clock: true,
} as const satisfies Record<TerminalReason, true>;

const hasOwn = (object: object, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

/** `z.number().nullable()`. */
function isScore(value: unknown): value is number | null {
  return value === null || (typeof value === 'number' && Number.isFinite(value));
}

/** `z.number().min(0)` (-0 included, as `>=` takes it). */
function isNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** `z.number().int().min(least)`: zod 4's `.int()` is a safe integer. */
function isCount(value: unknown, least: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= least;
}

function isNullableString(value: unknown): value is string | null {
  return value === null || typeof value === 'string';
}

function isDecision(value: unknown): value is Decision {
  return typeof value === 'string' && hasOwn(DECISION_NAMES, value);
}

function isTerminal(value: unknown): value is TerminalReason | null {
  return value === null || (typeof value === 'string' && hasOwn(TERMINAL_NAMES, value));
}

/** `z.array(z.string())` as zod returns it: a new array read by index up to `length`. */
function stringArray(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: string[] = [];
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item !== 'string') return undefined;
    out.push(item);
  }
  return out;
}

/** `z.array(z.number())`, likewise. */
function numberArray(value: unknown): number[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item !== 'number' || !Number.isFinite(item)) return undefined;
    out.push(item);
  }
  return out;
}

/**
 * `z.record(z.string(), z.number().nullable())` as zod returns it: a new object of the own enumerable
 * string keys in their own order. Left to zod: any other prototype, a symbol key (zod rejects it), a
 * non-enumerable key (zod skips it) and `__proto__` (zod drops it).
 */
function trackFigures(value: unknown): Record<string, number | null> | undefined {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) {
    return undefined;
  }
  const record = value as Record<string, unknown>;
  const out: Record<string, number | null> = {};
  for (const key of Reflect.ownKeys(record)) {
    if (typeof key !== 'string' || key === '__proto__') return undefined;
    if (!Object.prototype.propertyIsEnumerable.call(record, key)) return undefined;
    const figure = record[key];
    if (!isScore(figure)) return undefined;
    out[key] = figure;
  }
  return out;
}

/**
 * The line zod's `ledgerLineSchema` would return for `value`, when `value` is a plain line; `undefined`
 * when it is not sure (then zod decides, and words the error).
 */
export function plainLedgerLine(value: unknown): LedgerLine | undefined {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) {
    return undefined;
  }
  const input = value as Record<string, unknown>;
  // Required keys: an absent one reads as `undefined`, which no check below takes.
  const { iter, ts, score_before, score_after, best_before, best_after, delta, decision } = input;
  const { base_sha, sha, findings_count, hypothesis, cost_usd, duration_ms } = input;
  if (
    !isCount(iter, 0) ||
    typeof ts !== 'string' ||
    !isScore(score_before) ||
    !isScore(score_after) ||
    !isScore(best_before) ||
    !isScore(best_after) ||
    !isScore(delta) ||
    !isDecision(decision) ||
    !isNullableString(base_sha) ||
    !isNullableString(sha) ||
    !isCount(findings_count, 0) ||
    typeof hypothesis !== 'string' ||
    !isNonNegative(cost_usd) ||
    !isNonNegative(duration_ms)
  ) {
    return undefined;
  }
  const line: LedgerLine = {
    iter,
    ts,
    score_before,
    score_after,
    best_before,
    best_after,
    delta,
    decision,
    base_sha,
    sha,
    findings_count,
    hypothesis,
    cost_usd,
    duration_ms,
  };
  let keys = 14;
  // Optional keys in the schema's order; present as zod sees it (`in`), so an unusual value is refused.
  if ('reason' in input) {
    const reason = input.reason;
    if (typeof reason !== 'string') return undefined;
    line.reason = reason;
    keys++;
  }
  if ('guard_reverted_paths' in input) {
    const paths = stringArray(input.guard_reverted_paths);
    if (paths === undefined) return undefined;
    line.guard_reverted_paths = paths;
    keys++;
  }
  if ('terminal' in input) {
    const terminal = input.terminal;
    if (!isTerminal(terminal)) return undefined;
    line.terminal = terminal;
    keys++;
  }
  if ('tamper' in input || 'failed_guard' in input) return undefined;
  if ('tracks' in input) {
    const tracks = trackFigures(input.tracks);
    if (tracks === undefined) return undefined;
    line.tracks = tracks;
    keys++;
  }
  if ('evidence' in input) {
    const evidence = input.evidence;
    if (typeof evidence !== 'string') return undefined;
    line.evidence = evidence;
    keys++;
  }
  if ('samples' in input) {
    const samples = numberArray(input.samples);
    if (samples === undefined) return undefined;
    line.samples = samples;
    keys++;
  }
  if ('spread' in input) {
    const spread = input.spread;
    if (!isNonNegative(spread)) return undefined;
    line.spread = spread;
    keys++;
  }
  if ('noise_band' in input) {
    const band = input.noise_band;
    if (!isNonNegative(band)) return undefined;
    line.noise_band = band;
    keys++;
  }
  if ('population' in input) {
    const population = input.population;
    if (!isCount(population, 2)) return undefined;
    line.population = population;
    keys++;
  }
  if ('candidate' in input) {
    const candidate = input.candidate;
    if (!isCount(candidate, 1)) return undefined;
    line.candidate = candidate;
    keys++;
  }
  if ('prev' in input) {
    const prev = input.prev;
    if (typeof prev !== 'string') return undefined;
    line.prev = prev;
    keys++;
  }
  // Any other own key (zod would drop it silently) or a known key zod finds off the object itself: ask zod.
  if (Object.keys(input).length !== keys) return undefined;
  return line;
}
