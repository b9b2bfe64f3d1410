// The arbiter's decision as a pure function: judge result + ledger + config → ledger line, decision, signal.
import { AppError } from '../infra/errors.js';
import type { CapsConfig, Direction } from './config.js';
import type { JudgeVerdict } from './judge-output.js';
import type { Decision, FailedGuard, LedgerLine, TamperRecord, TerminalReason } from './ledger.js';
import { foldLedgerLine, summarizeLedger, type LedgerSummary, type SummaryParams } from './ledger-summary.js';
import { isImprovement, scoreTolerance } from './score-rules.js';
import { noiseVerdict, spread } from './noise.js';
import type { ArbiterSignal } from './signals.js';

/** The parts of the loop config the decision reads. */
export interface ArbiterConfig {
  metric: { direction: Direction };
  target: number | null;
  min_delta: number;
  caps: CapsConfig;
  confirmation_rounds: number;
}

export interface DecideInput {
  config: ArbiterConfig;
  /** The whole ledger, or its summary (which must have been folded with this config's direction and target). */
  ledger: readonly LedgerLine[] | LedgerSummary;
  iter: number;
  judge: JudgeVerdict;
  /** Set when the doer failed (after its retries): the iteration is a crash whatever the judge says. */
  doerFailure?: string | undefined;
  /** HEAD before the doer ran (for iteration 0: the measured commit). */
  baseSha: string | null;
  /** ISO time of the decision; passed in so the function stays pure. */
  now: string;
  hypothesis?: string | undefined;
  /** Spend attributed to this iteration, recorded in its line. */
  iterationCostUsd?: number | undefined;
  /** The loop's total spend including this iteration; default: the ledger's total plus this iteration. */
  costSoFarUsd?: number | undefined;
  wallClockElapsedSeconds?: number | undefined;
  durationMs?: number | undefined;
  guardRevertedPaths?: readonly string[] | undefined;
  /** What agents changed that was not theirs, put back by the runner; a doer's entry decides `tamper`. */
  tamper?: readonly TamperRecord[] | undefined;
  /**
   * Every run of a hard metric measured more than once (`metric.repeat`), pooled after a re-measure;
   * the judge's score is their median. An improvement within the noise band is not kept (noise.ts).
   */
  samples?: readonly number[] | undefined;
  /** The samples include a second round, taken because the first was within the noise band. */
  remeasured?: boolean | undefined;
  /** The guard, or track threshold, that failed after the doer: decides `guard_failed` (no judge ran). */
  guardFailure?: FailedGuard | undefined;
  /** The loop's tracks measured on this iteration's tree, recorded in its line. */
  tracks?: Readonly<Record<string, number | null>> | undefined;
}

export interface DecideResult {
  decision: Decision;
  /** The ledger line; `sha` is null until the git step fills it (a baseline's is its base_sha). */
  line: LedgerLine;
  signal: ArbiterSignal;
  /** Iteration `iter` was already in the ledger: append nothing, touch no file, re-emit `signal`. */
  replayed: boolean;
  /** The ledger summary with this line folded in. */
  summary: LedgerSummary;
}

/**
 * Decides iteration `iter` (DESIGN §4). The bar is the best kept score (baseline included), never the
 * last line. A crash (doer failure, judge failure, or a score that is not a finite number) reverts and
 * counts as a non-improvement. Terminal checks, in order: goal, iteration cap, plateau, budget, wall
 * clock. Idempotent: for an iteration already in the ledger it returns the recorded line and signal.
 */
export function decide(input: DecideInput): DecideResult {
  const { config } = input;
  const params: SummaryParams = { direction: config.metric.direction, target: config.target };
  const summary = toSummary(input.ledger, params);

  if (input.iter <= summary.last_iter) return replay(input, summary);
  if (input.iter !== summary.last_iter + 1) {
    const expected = summary.last_iter + 1;
    throw new ArbiterError(
      summary.last_iter === -1
        ? `iteration ${input.iter} cannot be decided: the ledger is empty, so the next iteration is the baseline (0)`
        : `iteration ${input.iter} cannot be decided: the ledger ends at iteration ${summary.last_iter}, so the next is ${expected}`,
    );
  }

  const measured = measuredScore(input);
  const best = summary.best_score;
  const samples = input.samples !== undefined && input.samples.length > 1 ? [...input.samples] : [];
  const noise =
    measured.ok && input.iter > 0 && samples.length > 0
      ? noiseVerdict({
          score: measured.score,
          best,
          bestSamples: summary.best_samples,
          samples,
          minDelta: config.min_delta,
          direction: config.metric.direction,
        })
      : undefined;
  let decision: Decision;
  let reason: string | undefined;
  const doerTamper = input.iter === 0 ? undefined : input.tamper?.find((record) => record.role === 'doer');
  // The loop's tree changed after it was measured: what a keep would commit is not what was judged.
  const treeTamper = input.iter === 0 ? undefined : input.tamper?.find((record) => record.role === 'loop');
  if (doerTamper !== undefined) {
    // Whatever the judge said, a doer that changed what decides its score is not kept.
    decision = 'tamper';
    reason = `the doer changed ${doerTamper.paths.join(', ')}${doerTamper.what === undefined ? '' : ` (${doerTamper.what})`}, which decide its score; put back and reverted`;
  } else if (treeTamper !== undefined) {
    decision = 'tamper';
    reason = `${treeTamper.what ?? `the loop's tree changed (${treeTamper.paths.join(', ')})`}: not what was judged; reverted`;
  } else if (input.guardFailure !== undefined && input.iter > 0) {
    // The tree broke something the user guards: not kept whatever it scores, and the judge was not run.
    decision = 'guard_failed';
    reason = `${input.guardFailure.reason}; reverted without judging`;
  } else if (!measured.ok) {
    decision = 'crash';
    reason = measured.reason;
  } else if (input.iter === 0) {
    decision = 'baseline';
  } else if (isImprovement(measured.score, best, config.min_delta, config.metric.direction)) {
    decision = 'keep';
    reason = best === null ? 'no measured baseline: the first measured iteration sets the bar' : undefined;
    if (noise?.within === true) {
      // A lucky run must not raise the bar: the gain is no larger than what the samples vary by.
      decision = 'revert';
      reason = `within the noise band ±${noise.band} of the best kept score ${String(best)}${input.remeasured === true ? `, also after measuring again (median of ${samples.length} samples)` : ''}`;
    }
  } else {
    decision = 'revert';
    reason = `not an improvement on the best kept score ${String(best)} (${config.metric.direction}, min_delta ${config.min_delta})`;
  }
  const score = measured.ok && decision !== 'tamper' && decision !== 'guard_failed' ? measured.score : null;
  const evidence = input.judge.ok ? (input.judge.output as { evidence?: unknown }).evidence : undefined;

  const line: LedgerLine = {
    iter: input.iter,
    ts: input.now,
    score_before: summary.current_score,
    score_after: score,
    best_before: best,
    best_after: best,
    delta: score === null || best === null ? null : scoreDelta(score, best),
    decision,
    base_sha: input.baseSha,
    sha: decision === 'baseline' ? input.baseSha : null,
    findings_count: input.judge.ok ? input.judge.output.findings.length : 0,
    hypothesis: input.hypothesis ?? '',
    cost_usd: input.iterationCostUsd ?? 0,
    duration_ms: input.durationMs ?? 0,
    reason,
    ...(input.guardRevertedPaths !== undefined && input.guardRevertedPaths.length > 0
      ? { guard_reverted_paths: [...input.guardRevertedPaths] }
      : {}),
    ...(input.tamper !== undefined && input.tamper.length > 0
      ? { tamper: input.tamper.map((record) => ({ ...record, paths: [...record.paths] })) }
      : {}),
    ...(typeof evidence === 'string' && evidence !== '' && decision !== 'guard_failed' ? { evidence } : {}),
    ...(score === null || samples.length === 0 ? {} : { samples, spread: spread(samples) }),
    ...(score === null || noise === undefined ? {} : { noise_band: noise.band }),
    ...(decision === 'guard_failed' && input.guardFailure !== undefined
      ? { failed_guard: { ...input.guardFailure } }
      : {}),
    ...(input.tracks !== undefined && Object.keys(input.tracks).length > 0
      ? { tracks: { ...input.tracks } }
      : {}),
  };
  const folded = foldLedgerLine(summary, line);
  const terminal = terminalReason(input, folded);
  const final: LedgerLine = { ...line, best_after: folded.best_score, terminal };
  folded.recent[folded.recent.length - 1] = final;
  return { decision, line: final, signal: signalForLine(final), replayed: false, summary: folded };
}

/** The signal a recorded line emitted: a replay re-emits exactly this. */
export function signalForLine(line: LedgerLine): ArbiterSignal {
  if (line.terminal !== undefined && line.terminal !== null) {
    return {
      type: 'terminal',
      reason: line.terminal,
      iter: line.iter,
      final_score: line.score_after,
      best_score: line.best_after,
      decision: line.decision,
    };
  }
  return {
    type: 'continue',
    iter: line.iter,
    next_iter: line.iter + 1,
    current_score: line.score_after,
    best_score: line.best_after,
    decision: line.decision,
    delta: line.delta,
  };
}

export class ArbiterError extends AppError {
  constructor(message: string) {
    super(message, {
      hint: 'Check .autoresearch/research-log.jsonl: the arbiter only appends the next iteration.',
    });
    this.name = 'ArbiterError';
  }
}

function toSummary(ledger: DecideInput['ledger'], params: SummaryParams): LedgerSummary {
  if (isLineArray(ledger)) return summarizeLedger(ledger, params);
  if (ledger.params.direction !== params.direction || ledger.params.target !== params.target) {
    throw new ArbiterError('the ledger summary was folded with another direction or target than the config');
  }
  return ledger;
}

function isLineArray(ledger: DecideInput['ledger']): ledger is readonly LedgerLine[] {
  return Array.isArray(ledger);
}

function replay(input: DecideInput, summary: LedgerSummary): DecideResult {
  const lines = isLineArray(input.ledger) ? input.ledger : summary.recent;
  const line = lines.findLast((candidate) => candidate.iter === input.iter);
  if (line === undefined) {
    throw new ArbiterError(
      `iteration ${input.iter} is already in the ledger but not among the recent lines of its summary; pass the whole ledger to replay it`,
    );
  }
  return { decision: line.decision, line, signal: signalForLine(line), replayed: true, summary };
}

type Measured = { ok: true; score: number } | { ok: false; reason: string };

function measuredScore(input: DecideInput): Measured {
  if (input.doerFailure !== undefined) return { ok: false, reason: `the doer failed: ${input.doerFailure}` };
  if (!input.judge.ok) return { ok: false, reason: `the judge failed: ${input.judge.reason}` };
  // Validated upstream, but a NaN or a string here would poison every later comparison: check again.
  const score: unknown = input.judge.output.score;
  if (typeof score !== 'number' || !Number.isFinite(score)) {
    return {
      ok: false,
      reason: `the judge's score is not a finite number: ${JSON.stringify(score) ?? String(score)}`,
    };
  }
  return { ok: true, score };
}

/** `score − best`, with float noise snapped to 0 and rounded to 12 significant digits (0.8 − 0.7 → 0.1). */
function scoreDelta(score: number, best: number): number {
  const delta = score - best;
  if (Math.abs(delta) <= scoreTolerance(score, best)) return 0;
  return Number(delta.toPrecision(12));
}

function terminalReason(input: DecideInput, after: LedgerSummary): TerminalReason | null {
  const { caps, confirmation_rounds: rounds, target } = input.config;
  if (target !== null && after.goal_streak >= rounds) return 'goal_reached';
  if (caps.max_iterations > 0 && input.iter >= caps.max_iterations) return 'iteration_cap';
  if (caps.plateau_threshold > 0 && after.non_improvement_streak >= caps.plateau_threshold) return 'plateau';
  const spent = input.costSoFarUsd ?? after.total_cost_usd;
  if (caps.max_cost_usd > 0 && spent >= caps.max_cost_usd) return 'budget';
  const elapsed = input.wallClockElapsedSeconds;
  if (caps.wall_clock_seconds > 0 && elapsed !== undefined && elapsed >= caps.wall_clock_seconds)
    return 'wall_clock';
  return null;
}
