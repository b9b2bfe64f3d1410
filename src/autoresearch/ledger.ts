// The research ledger (`research-log.jsonl`): one line per iteration, read tolerantly, appended safely.
//
// It is tamper-evident on its own: every line appended by Forge carries `prev`, a hash of the line
// before it, so a line changed or removed after it was written is caught on the next full read with
// the file and line named. (A line that is not an iteration, e.g. a settings change noticed at start,
// has a `kind` and is kept apart from the iterations.)
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { LoopFiles } from '../infra/loop-files.js';
import { AppError, ExitCode } from '../infra/errors.js';
import { describeZodFields } from '../infra/zod-issues.js';
import { plainLedgerLine } from './ledger-fast.js';

/**
 * `tamper`: the doer changed what decides its score (loop files, metric files, history); reverted.
 * `guard_failed`: a guard (or a track's threshold) failed after the doer; reverted without a judge.
 */
export const DECISIONS = ['baseline', 'keep', 'revert', 'crash', 'tamper', 'guard_failed'] as const;
export type Decision = (typeof DECISIONS)[number];

export const TERMINAL_REASONS = ['goal_reached', 'iteration_cap', 'plateau', 'budget', 'wall_clock'] as const;
export type TerminalReason = (typeof TERMINAL_REASONS)[number];

const score = z.number().nullable();

// ledger-fast.ts checks the plain line without zod and mirrors these fields: change both together (its
// test compares the two).
export const ledgerLineSchema = z.object({
  iter: z.number().int().min(0),
  ts: z.string(),
  /** Score of the tree the doer started from (the last kept iteration or the baseline). */
  score_before: score,
  /** Score measured this iteration; null when it crashed. */
  score_after: score,
  /** The bar: best kept score before this iteration (baseline included). */
  best_before: score,
  /** The bar after this decision; also the score of the tree left in the repository. */
  best_after: score,
  /** score_after − best_before (float noise snapped to 0); null without both. */
  delta: score,
  decision: z.enum(DECISIONS),
  base_sha: z.string().nullable(),
  sha: z.string().nullable(),
  findings_count: z.number().int().min(0),
  hypothesis: z.string(),
  cost_usd: z.number().min(0),
  duration_ms: z.number().min(0),
  /** Why a revert or a crash happened, in one sentence. */
  reason: z.string().optional(),
  /** Paths the doer guard restored (outside the doer's scope, or protected metric files). */
  guard_reverted_paths: z.array(z.string()).optional(),
  /** The terminal signal this iteration emitted, so a replay re-emits exactly the same signal. */
  terminal: z.enum(TERMINAL_REASONS).nullable().optional(),
  /** What agents changed that was not theirs to change (put back by the runner), by role. */
  tamper: z.array(tamperRecordSchema()).optional(),
  /** The guard (or track threshold) that failed, on a `guard_failed` line. */
  failed_guard: failedGuardSchema().optional(),
  /** The loop's tracks measured on this iteration's tree (null: no figure could be read). */
  tracks: z.record(z.string(), z.number().nullable()).optional(),
  /** How the score was read off the judge (e.g. `149/153 passed (TAP)`). */
  evidence: z.string().optional(),
  /** Every run's score when the hard metric was measured more than once; `score_after` is their median. */
  samples: z.array(z.number()).optional(),
  /** max − min of `samples`. */
  spread: z.number().min(0).optional(),
  /** ±this around the best kept score was taken as noise when deciding (see noise.ts). */
  noise_band: z.number().min(0).optional(),
  /** A population iteration: how many candidates it had, and the one this line decides (the best). */
  population: z.number().int().min(2).optional(),
  candidate: z.number().int().min(1).optional(),
  /** Hash of the previous line as written (absent on the first line and on lines from before chaining). */
  prev: z.string().optional(),
});
export type LedgerLine = z.output<typeof ledgerLineSchema>;

function tamperRecordSchema() {
  return z.object({ role: z.string(), paths: z.array(z.string()), what: z.string().optional() });
}
export type TamperRecord = z.output<ReturnType<typeof tamperRecordSchema>>;

export function failedGuardSchema() {
  return z.object({
    name: z.string(),
    /** `guard`: its command failed; `track`: a track's figure broke its threshold or could not be read. */
    kind: z.enum(['guard', 'track']),
    exit_code: z.number().int().nullable(),
    /** Why, in one sentence. */
    reason: z.string(),
    /** The end of the command's output. */
    output_tail: z.string(),
  });
}
export type FailedGuard = z.output<ReturnType<typeof failedGuardSchema>>;

/** Lines that are not iterations: things the runner noticed and records so nothing changes silently. */
export const ledgerEventSchema = z.object({
  kind: z.enum(['settings_changed', 'tamper_between_runs', 'head_accepted']),
  ts: z.string(),
  /** Files (relative to the repository) or refs concerned. */
  paths: z.array(z.string()),
  message: z.string(),
  prev: z.string().optional(),
});
export type LedgerEvent = z.output<typeof ledgerEventSchema>;

/**
 * One candidate of a population iteration (`population` > 1), written beside the iteration's own line:
 * `kept` (the iteration kept it), `lost` (another candidate was kept), `reverted` (none was kept).
 */
export const CANDIDATE_DECISIONS = ['kept', 'lost', 'reverted'] as const;
export const candidateLineSchema = z.object({
  kind: z.literal('candidate'),
  ts: z.string(),
  iter: z.number().int().min(1),
  candidate: z.number().int().min(1),
  /** The directive's angle this candidate worked (its first line). */
  angle: z.string(),
  /** Its judged score; null when it crashed, tampered or failed a guard. */
  score: score,
  decision: z.enum(CANDIDATE_DECISIONS),
  /** The iteration's decision (the line with the same `iter`). */
  iteration_decision: z.enum(DECISIONS),
  /** The candidate's commit; null when it made none. */
  sha: z.string().nullable(),
  hypothesis: z.string(),
  cost_usd: z.number().min(0),
  /** Why it was not judged or not kept, in one sentence. */
  reason: z.string().optional(),
  prev: z.string().optional(),
});
export type CandidateLine = z.output<typeof candidateLineSchema>;

/** The chain hash of one line as written (without its newline). */
export function lineHash(raw: string): string {
  return createHash('sha256').update(raw).digest('hex').slice(0, 32);
}

export interface LedgerRead {
  lines: LedgerLine[];
  /** Byte length of the complete lines (a torn tail excluded). */
  bytes: number;
  /** Newline-terminated lines read, blank ones included. */
  terminatedLines: number;
  warnings: string[];
  /** Lines that are not iterations (settings changes, tamper noticed between runs). */
  events: LedgerEvent[];
  /** The candidates of population iterations, in the order written. */
  candidates: CandidateLine[];
}

/**
 * Reads the whole ledger. A torn last line (no trailing newline, not valid JSON: a crash mid-append)
 * is skipped with a warning and repaired by the next append; a bad line anywhere else is an error
 * naming `file:line`. A missing file is an empty ledger.
 */
export async function readLedger(files: LoopFiles, path: string): Promise<LedgerRead> {
  const content = (await files.readIfExists(path)) ?? '';
  return parseLedgerText(content, path, 1);
}

/** Parses ledger text; `firstLine` numbers the lines when the text is a tail of the file. */
export function parseLedgerText(content: string, path: string, firstLine: number): LedgerRead {
  const lines: LedgerLine[] = [];
  const events: LedgerEvent[] = [];
  const candidates: CandidateLine[] = [];
  const warnings: string[] = [];
  // The chain is checked from the first line this text holds; a tail's first line cannot be checked here.
  let previousRaw: string | undefined;
  let chained = false;
  let bytes = Buffer.byteLength(content);
  let start = 0;
  let lineNumber = firstLine;
  let terminatedLines = 0;
  while (start < content.length) {
    const newline = content.indexOf('\n', start);
    const terminated = newline !== -1;
    const raw = content.slice(start, terminated ? newline : content.length);
    start = terminated ? newline + 1 : content.length;
    const number = lineNumber++;
    if (terminated) terminatedLines++;
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      if (!terminated) {
        warnings.push(
          `${path}:${number}: ignoring a torn last line (an interrupted write); the next append repairs it`,
        );
        bytes -= Buffer.byteLength(raw);
        break;
      }
      throw new LedgerError(`${path}:${number}: not valid JSON`);
    }
    const prev = (value as { prev?: unknown } | null)?.prev;
    if (typeof prev === 'string') {
      if (previousRaw !== undefined && prev !== lineHash(previousRaw)) {
        throw new LedgerTamperError(
          `${path}:${number - 1}: this line was changed or removed after it was written (line ${number} records a different hash for the line before it)`,
        );
      }
      chained = true;
    } else if (chained) {
      throw new LedgerTamperError(
        `${path}:${number}: this line has no chain hash although the lines before it do: it was not written by Forge`,
      );
    }
    previousRaw = raw;
    if ((value as { kind?: unknown } | null)?.kind === 'candidate') {
      const candidate = candidateLineSchema.safeParse(value);
      if (!candidate.success) {
        throw new LedgerError(
          `${path}:${number}: not a candidate line (${describeZodFields(candidate.error)})`,
        );
      }
      const { prev: _chain, ...rest } = candidate.data;
      candidates.push(rest);
      continue;
    }
    if (typeof (value as { kind?: unknown } | null)?.kind === 'string') {
      const event = ledgerEventSchema.safeParse(value);
      if (!event.success) throw new LedgerError(`${path}:${number}: not a ledger event line`);
      const { prev: _chain, ...rest } = event.data;
      events.push(rest);
      continue;
    }
    // The common plain line skips zod (a fifth of a long report's time); anything else is zod's to judge.
    const data = plainLedgerLine(value) ?? ledgerLineFromZod(value, path, number);
    // The chain hash belongs to the file, not to the iteration: readers never see it.
    const { prev: _chain, ...line } = data;
    lines.push(line);
  }
  return { lines, bytes, terminatedLines, warnings, events, candidates };
}

function ledgerLineFromZod(value: unknown, path: string, number: number): LedgerLine {
  const parsed = ledgerLineSchema.safeParse(value);
  if (!parsed.success) {
    throw new LedgerError(`${path}:${number}: not a ledger line (${describeZodFields(parsed.error)})`);
  }
  return parsed.data;
}

export class LedgerError extends AppError {
  // Bad input, named by file and line, as a malformed config is (exit 4): not an unexpected failure.
  constructor(message: string, hint = 'Fix or remove that line by hand; the ledger is plain JSONL.') {
    super(message, { hint, exitCode: ExitCode.config });
    this.name = 'LedgerError';
  }
}

export class LedgerTamperError extends LedgerError {
  constructor(message: string) {
    super(
      message,
      'Put the ledger back as Forge wrote it (git checkout or git show of a committed copy); the runner also restores it from its own copy when it starts.',
    );
    this.name = 'LedgerTamperError';
  }
}

/** Appends one line chained to the last (repairing a torn tail first). Prefer `recordLedgerLine`. */
export async function appendLedgerLine(files: LoopFiles, path: string, line: LedgerLine): Promise<void> {
  const { prev: _ignored, ...rest } = ledgerLineSchema.parse(line);
  await appendChained(files, path, rest);
}

/** Appends an event line (settings changed, tamper noticed between runs), chained like any other. */
export async function appendLedgerEvent(
  files: LoopFiles,
  path: string,
  event: Omit<LedgerEvent, 'prev'>,
): Promise<void> {
  await appendChained(files, path, ledgerEventSchema.parse(event));
}

async function appendChained(files: LoopFiles, path: string, value: Record<string, unknown>): Promise<void> {
  const last = await files.readLastLine(path);
  await files.appendJsonLine(path, last === undefined ? value : { ...value, prev: lineHash(last) });
}

/** Appends a candidate line, chained like any other. */
export async function appendCandidateLine(
  files: LoopFiles,
  path: string,
  line: Omit<CandidateLine, 'prev'>,
): Promise<void> {
  const { prev: _ignored, ...rest } = candidateLineSchema.parse(line);
  await appendChained(files, path, rest);
}
