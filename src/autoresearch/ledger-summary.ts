// The ledger folded into what the arbiter and `status` need, cached beside the ledger and checked against it.
//
// The fold is the single definition of "best kept score", the non-improvement streak and the goal
// streak: the arbiter decides by folding its candidate line, and status reads the same numbers. The
// cache (`ledger-summary.json`) records how many bytes of the ledger it covers and a hash of the last
// of them, so a reader trusts it only for the ledger it was made from, catches up by reading just the
// appended tail, and falls back to a full scan when the ledger was rewritten.
import { dirname, join } from 'node:path';
import type { LoopFiles, RangeReader } from '../infra/loop-files.js';
import type { Direction } from './config.js';
import type { CandidateLine, LedgerLine } from './ledger.js';
import { isImprovement, meetsTarget } from './score-rules.js';

// ---- the fold ----

export interface SummaryParams {
  direction: Direction;
  /** null: no target, the goal streak stays 0. */
  target: number | null;
}

export const RECENT_LINES = 20;

export interface LedgerSummary {
  params: SummaryParams;
  lines: number;
  /** -1 for an empty ledger. */
  last_iter: number;
  baseline_score: number | null;
  /** The bar: best score among kept iterations and the baseline. */
  best_score: number | null;
  best_iter: number | null;
  /** The best kept score's samples, when its metric was measured more than once: its noise band. */
  best_samples?: number[];
  /** Score of the tree in the repository: the last kept iteration or the baseline. */
  current_score: number | null;
  kept: number;
  reverted: number;
  crashed: number;
  /** Iterations whose doer tampered with what decides its score (reverted). */
  tampered: number;
  /** Iterations a guard or a track's threshold refused (reverted); absent in summaries from before guards. */
  guard_failed?: number;
  /** The tracks measured on the baseline (absent: none recorded, or a summary from before tracks). */
  baseline_tracks?: Record<string, number | null>;
  /** Consecutive reverts and crashes at the end of the ledger (the baseline is not a doer iteration). */
  non_improvement_streak: number;
  /** Consecutive iterations at the end that met the target (see `lineMeetsGoal`). */
  goal_streak: number;
  total_cost_usd: number;
  total_duration_ms: number;
  first_ts: string | null;
  last_ts: string | null;
  /** The last RECENT_LINES lines, oldest first. */
  recent: LedgerLine[];
  /** The candidates of population iterations among the recent ones (absent: none, or an older cache). */
  recent_candidates?: CandidateLine[];
}

export function emptySummary(params: SummaryParams): LedgerSummary {
  return {
    params: { ...params },
    lines: 0,
    last_iter: -1,
    baseline_score: null,
    best_score: null,
    best_iter: null,
    current_score: null,
    kept: 0,
    reverted: 0,
    crashed: 0,
    tampered: 0,
    non_improvement_streak: 0,
    goal_streak: 0,
    total_cost_usd: 0,
    total_duration_ms: 0,
    first_ts: null,
    last_ts: null,
    recent: [],
  };
}

/** Adds candidate lines to `summary` (in place), keeping those of its recent iterations; returns it. */
export function foldCandidates(summary: LedgerSummary, candidates: readonly CandidateLine[]): LedgerSummary {
  if (candidates.length === 0 && summary.recent_candidates === undefined) return summary;
  const oldest = summary.recent[0]?.iter ?? 0;
  const all = [...(summary.recent_candidates ?? []), ...candidates].filter((c) => c.iter >= oldest);
  summary.recent_candidates = all.slice(-RECENT_LINES * 8);
  return summary;
}

/** Returns the summary with one more line; the input is left unchanged. */
export function foldLedgerLine(summary: LedgerSummary, line: LedgerLine): LedgerSummary {
  const next = { ...summary, params: { ...summary.params }, recent: [...summary.recent] };
  foldInto(next, line);
  return next;
}

export function summarizeLedger(lines: readonly LedgerLine[], params: SummaryParams): LedgerSummary {
  const summary = emptySummary(params);
  for (const line of lines) foldInto(summary, line);
  return summary;
}

function foldInto(s: LedgerSummary, line: LedgerLine): void {
  const { direction, target } = s.params;
  s.lines++;
  s.last_iter = line.iter;
  s.first_ts ??= line.ts;
  s.last_ts = line.ts;
  s.total_cost_usd += line.cost_usd;
  s.total_duration_ms += line.duration_ms;
  const score = line.score_after;
  switch (line.decision) {
    case 'baseline':
    case 'keep':
      if (line.decision === 'keep') s.kept++;
      else {
        s.baseline_score = score;
        if (line.tracks !== undefined) s.baseline_tracks = { ...line.tracks };
      }
      s.non_improvement_streak = 0;
      if (score !== null) {
        s.current_score = score;
        if (s.best_score === null || isImprovement(score, s.best_score, 0, direction)) {
          s.best_score = score;
          s.best_iter = line.iter;
          if (line.samples === undefined) delete s.best_samples;
          else s.best_samples = [...line.samples];
        }
      }
      break;
    case 'revert':
      s.reverted++;
      s.non_improvement_streak++;
      break;
    case 'crash':
      s.crashed++;
      if (line.iter > 0) s.non_improvement_streak++;
      break;
    case 'tamper':
      s.tampered++;
      s.non_improvement_streak++;
      break;
    case 'guard_failed':
      s.guard_failed = (s.guard_failed ?? 0) + 1;
      s.non_improvement_streak++;
      break;
  }
  const met = target !== null && lineMeetsGoal(line, s.best_score, target, direction);
  s.goal_streak = met ? s.goal_streak + 1 : 0;
  s.recent.push(line);
  if (s.recent.length > RECENT_LINES) s.recent.shift();
}

/**
 * An iteration meets the goal when it did not crash, its own measurement meets the target, and the
 * tree it leaves behind (the best kept score) meets it too. A reverted iteration can therefore confirm
 * a goal the kept tree already reached, but never reach it on its own.
 */
export function lineMeetsGoal(
  line: LedgerLine,
  bestAfter: number | null,
  target: number,
  direction: Direction,
): boolean {
  return (
    line.decision !== 'crash' &&
    line.decision !== 'tamper' &&
    line.decision !== 'guard_failed' &&
    line.score_after !== null &&
    bestAfter !== null &&
    meetsTarget(line.score_after, target, direction) &&
    meetsTarget(bestAfter, target, direction)
  );
}

// ---- the cache file ----

interface SummaryCache {
  version: 2;
  /** The summary covers exactly the first `ledger_bytes` bytes of the ledger (complete lines). */
  ledger_bytes: number;
  /** Newline-terminated lines in those bytes, to number lines read after them. */
  ledger_line_count: number;
  /**
   * The last TAIL_BYTES of those bytes, base64: a rewritten ledger no longer matches. The bytes
   * themselves, not a hash of them: hashing loaded node:crypto, ~5 ms of every status.
   */
  tail: string;
  summary: LedgerSummary;
}

const COUNTS = [
  'lines',
  'last_iter',
  'kept',
  'reverted',
  'crashed',
  'tampered',
  'non_improvement_streak',
  'goal_streak',
  'total_cost_usd',
  'total_duration_ms',
] as const;
const NULLABLE_SCORES = ['baseline_score', 'best_score', 'best_iter', 'current_score'] as const;

/**
 * A shape check instead of zod: this file is our own, written atomically, and this is the path
 * `status` takes on every call, where loading zod would cost more than everything else together.
 * Anything unexpected only means "rebuild from the ledger".
 */
function isSummaryCache(value: unknown): value is SummaryCache {
  const v = value as Partial<SummaryCache> | null;
  if (typeof v !== 'object' || v === null || v.version !== 2) return false;
  if (!isCount(v.ledger_bytes) || !isCount(v.ledger_line_count) || typeof v.tail !== 'string') return false;
  const s = v.summary;
  if (typeof s !== 'object' || s === null || typeof s.params !== 'object' || s.params === null) return false;
  if (s.params.direction !== 'maximize' && s.params.direction !== 'minimize') return false;
  if (s.params.target !== null && typeof s.params.target !== 'number') return false;
  if (!COUNTS.every((key) => typeof s[key] === 'number')) return false;
  if (!NULLABLE_SCORES.every((key) => s[key] === null || typeof s[key] === 'number')) return false;
  return (
    Array.isArray(s.recent) &&
    s.recent.every((line) => typeof line === 'object' && line !== null && typeof line.iter === 'number')
  );
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

const TAIL_BYTES = 256;

export const SUMMARY_FILE = 'ledger-summary.json';

export function summaryPathFor(ledgerPath: string): string {
  return join(dirname(ledgerPath), SUMMARY_FILE);
}

export type SummarySource = 'cache' | 'tail' | 'scan';

export interface LoadedSummary {
  summary: LedgerSummary;
  /** cache: used as is; tail: cache plus the lines appended since; scan: rebuilt from the whole ledger. */
  source: SummarySource;
  warnings: string[];
}

export interface LoadSummaryOptions {
  /** Write the refreshed cache back when it was stale (default true). */
  persist?: boolean;
}

/** The ledger's summary, from the cache when it still describes the ledger, else caught up or rebuilt. */
export async function loadLedgerSummary(
  files: LoopFiles,
  ledgerPath: string,
  params: SummaryParams,
  options: LoadSummaryOptions = {},
): Promise<LoadedSummary> {
  const cachePath = summaryPathFor(ledgerPath);
  const cache = await readCache(files, cachePath, params);
  const handle = await files.openRange(ledgerPath);
  if (handle === undefined) return { summary: emptySummary(params), source: 'scan', warnings: [] };

  let loaded: LoadedSummary & { bytes: number; lineCount: number };
  try {
    const size = await handle.size();
    const cacheValid =
      cache !== undefined &&
      cache.ledger_bytes <= size &&
      (await tailOf(handle, cache.ledger_bytes)) === cache.tail;
    if (cacheValid && cache.ledger_bytes === size) {
      return { summary: cache.summary, source: 'cache', warnings: [] };
    }
    // Only now is the ledger parsed, so only now are its schema (and zod) loaded.
    const { parseLedgerText, readLedger } = await import('./ledger.js');
    if (cacheValid) {
      const tail = (await handle.read(cache.ledger_bytes, size)).toString('utf8');
      const read = parseLedgerText(tail, ledgerPath, cache.ledger_line_count + 1);
      const summary = { ...cache.summary, recent: [...cache.summary.recent] };
      for (const line of read.lines) foldInto(summary, line);
      foldCandidates(summary, read.candidates);
      loaded = {
        summary,
        source: 'tail',
        warnings: read.warnings,
        bytes: cache.ledger_bytes + read.bytes,
        lineCount: cache.ledger_line_count + read.terminatedLines,
      };
    } else {
      const read = await readLedger(files, ledgerPath);
      loaded = {
        summary: foldCandidates(summarizeLedger(read.lines, params), read.candidates),
        source: 'scan',
        warnings: read.warnings,
        bytes: read.bytes,
        lineCount: read.terminatedLines,
      };
    }
    if (options.persist ?? true) {
      const fresh: SummaryCache = {
        version: 2,
        ledger_bytes: loaded.bytes,
        ledger_line_count: loaded.lineCount,
        tail: await tailOf(handle, loaded.bytes),
        summary: loaded.summary,
      };
      await files.writeJson(cachePath, fresh);
    }
  } finally {
    await handle.close();
  }
  return { summary: loaded.summary, source: loaded.source, warnings: loaded.warnings };
}

/**
 * The cached summary if it describes the ledger exactly as it is now, whatever direction and target it
 * was folded with (they are in `summary.params`); undefined otherwise. Reads a few hundred bytes of the
 * ledger and loads no schema library: the fast path for `status`, which falls back to loadLedgerSummary.
 */
export async function readCachedSummary(
  files: LoopFiles,
  ledgerPath: string,
): Promise<LedgerSummary | undefined> {
  const cache = await readCache(files, summaryPathFor(ledgerPath), undefined);
  if (cache === undefined) return undefined;
  const handle = await files.openRange(ledgerPath).catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const size = await handle.size();
    if (size !== cache.ledger_bytes || (await tailOf(handle, size)) !== cache.tail) return undefined;
    return cache.summary;
  } finally {
    await handle.close();
  }
}

/** Appends a line and brings the cached summary up to date; returns the summary including the line. */
export async function recordLedgerLine(
  files: LoopFiles,
  ledgerPath: string,
  line: LedgerLine,
  params: SummaryParams,
): Promise<LedgerSummary> {
  const { appendLedgerLine } = await import('./ledger.js');
  await appendLedgerLine(files, ledgerPath, line);
  return (await loadLedgerSummary(files, ledgerPath, params)).summary;
}

async function readCache(
  files: LoopFiles,
  path: string,
  params: SummaryParams | undefined,
): Promise<SummaryCache | undefined> {
  const content = await files.readIfExists(path);
  if (content === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (!isSummaryCache(value)) return undefined;
  const cached = value.summary.params;
  // A summary folded for another direction or target has the wrong best and goal streak.
  if (params !== undefined && (cached.direction !== params.direction || cached.target !== params.target)) {
    return undefined;
  }
  return value;
}

async function tailOf(handle: RangeReader, end: number): Promise<string> {
  return (await handle.read(Math.max(0, end - TAIL_BYTES), end)).toString('base64');
}
