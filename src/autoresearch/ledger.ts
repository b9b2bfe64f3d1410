// The research ledger (`research-log.jsonl`): one line per iteration, read tolerantly, appended safely.
import { z } from 'zod';
import { appendJsonLine, readFileIfExists } from '../infra/atomic-file.js';
import { AppError } from '../infra/errors.js';
import { formatPath } from './config.js';

export const DECISIONS = ['baseline', 'keep', 'revert', 'crash'] as const;
export type Decision = (typeof DECISIONS)[number];

export const TERMINAL_REASONS = ['goal_reached', 'iteration_cap', 'plateau', 'budget', 'wall_clock'] as const;
export type TerminalReason = (typeof TERMINAL_REASONS)[number];

const score = z.number().nullable();

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
});
export type LedgerLine = z.output<typeof ledgerLineSchema>;

export interface LedgerRead {
  lines: LedgerLine[];
  /** Byte length of the complete lines (a torn tail excluded). */
  bytes: number;
  /** Newline-terminated lines read, blank ones included. */
  terminatedLines: number;
  warnings: string[];
}

/**
 * Reads the whole ledger. A torn last line (no trailing newline, not valid JSON: a crash mid-append)
 * is skipped with a warning and repaired by the next append; a bad line anywhere else is an error
 * naming `file:line`. A missing file is an empty ledger.
 */
export async function readLedger(path: string): Promise<LedgerRead> {
  const content = (await readFileIfExists(path)) ?? '';
  return parseLedgerText(content, path, 1);
}

/** Parses ledger text; `firstLine` numbers the lines when the text is a tail of the file. */
export function parseLedgerText(content: string, path: string, firstLine: number): LedgerRead {
  const lines: LedgerLine[] = [];
  const warnings: string[] = [];
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
    const parsed = ledgerLineSchema.safeParse(value);
    if (!parsed.success) {
      const problems = parsed.error.issues.map(
        (issue) => `${formatPath(issue.path) || '(line)'}: ${issue.message}`,
      );
      throw new LedgerError(`${path}:${number}: not a ledger line (${problems.join('; ')})`);
    }
    lines.push(parsed.data);
  }
  return { lines, bytes, terminatedLines, warnings };
}

export class LedgerError extends AppError {
  constructor(message: string) {
    super(message, { hint: 'Fix or remove that line by hand; the ledger is plain JSONL.' });
    this.name = 'LedgerError';
  }
}

/** Appends one line (repairing a torn tail first). Prefer `recordLedgerLine`, which also keeps the summary. */
export async function appendLedgerLine(path: string, line: LedgerLine): Promise<void> {
  await appendJsonLine(path, ledgerLineSchema.parse(line));
}
