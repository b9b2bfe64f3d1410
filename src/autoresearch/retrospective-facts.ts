// What the retrospective is told beyond the ledger digest: the keeps that were marginal against the
// measured noise, and what the loop cost and earned, as text ready for its template.
import type { LoopFiles } from '../infra/loop-files.js';
import type { LoopConfig } from './config.js';
import { readLedger, type LedgerLine } from './ledger.js';
import type { LedgerSummary } from './ledger-summary.js';
import { CYCLE_ROLES, type LoopFigures } from './loop-figures.js';
import { readSpend } from './spend.js';
import { figuresFor } from './status-figures.js';

/** A keep is marginal when its gain is at most this many noise bands, or it had to be measured again. */
export const MARGINAL_BANDS = 2;

export interface MarginalKeep {
  iter: number;
  score: number;
  delta: number;
  /** ±band it was decided against. */
  band: number;
  samples: number;
  remeasured: boolean;
  hypothesis: string;
}

export interface RetrospectiveNoise {
  /** Runs per measurement (`metric.repeat`). */
  repeat: number;
  /** Improvements not kept because they were within the noise band. */
  within_noise: number;
  marginal_keeps: MarginalKeep[];
}

export interface RetrospectiveFigures {
  iterations: number;
  iterations_per_hour: string;
  keep_rate: string;
  time_per_iteration: string;
  cost: string;
  cost_per_iteration: string;
  cost_per_keep: string;
  improvement: string;
  improvement_per_usd: string;
}

/** Null when no score was measured more than once (`repeat` 1): there is no noise to speak of. */
export function retrospectiveNoise(lines: readonly LedgerLine[], repeat: number): RetrospectiveNoise | null {
  if (repeat < 2 && !lines.some((line) => line.samples !== undefined)) return null;
  let withinNoise = 0;
  const marginal: MarginalKeep[] = [];
  for (const line of lines) {
    if (line.decision === 'revert' && line.reason?.startsWith('within the noise band') === true)
      withinNoise++;
    if (line.decision !== 'keep' || line.noise_band === undefined) continue;
    if (line.score_after === null || line.delta === null) continue;
    const samples = line.samples?.length ?? 1;
    const remeasured = samples > repeat;
    const gain = Math.abs(line.delta);
    if (!remeasured && gain > MARGINAL_BANDS * line.noise_band) continue;
    marginal.push({
      iter: line.iter,
      score: line.score_after,
      delta: line.delta,
      band: line.noise_band,
      samples,
      remeasured,
      hypothesis: line.hypothesis,
    });
  }
  return { repeat, within_noise: withinNoise, marginal_keeps: marginal };
}

export function retrospectiveFigures(figures: LoopFigures): RetrospectiveFigures {
  const num = (value: number | null, digits = 2) =>
    value === null ? 'n/a' : String(Number(value.toFixed(digits)));
  const usd = (value: number | null) => (value === null ? 'n/a' : `$${value.toFixed(2)}`);
  const seconds = (ms: number | null) => (ms === null ? 'n/a' : `${Number((ms / 1000).toFixed(1))}s`);
  return {
    iterations: figures.iterations,
    iterations_per_hour: num(figures.iterations_per_hour),
    keep_rate: figures.keep_rate === null ? 'n/a' : `${Math.round(figures.keep_rate * 100)}%`,
    time_per_iteration: CYCLE_ROLES.map(
      (role) => `${role} ${seconds(figures.time_per_iteration_ms[role])}`,
    ).join(', '),
    cost: usd(figures.cost_usd),
    cost_per_iteration: usd(figures.cost_per_iteration_usd),
    cost_per_keep: usd(figures.cost_per_keep_usd),
    improvement: num(figures.improvement, 6),
    improvement_per_usd:
      figures.improvement_per_usd === null ? 'n/a (nothing spent)' : num(figures.improvement_per_usd, 4),
  };
}

/** Reads the whole ledger (once per loop), the spend and the run logs for the retrospective's view. */
export async function gatherRetrospectiveFacts(
  files: LoopFiles,
  paths: { root: string; ledger: string },
  config: Pick<LoopConfig, 'metric'>,
  summary: LedgerSummary,
): Promise<{ noise: RetrospectiveNoise | null; figures: RetrospectiveFigures }> {
  const [{ lines }, spend] = await Promise.all([
    readLedger(files, paths.ledger),
    readSpend(files, paths.root),
  ]);
  const repeat = config.metric.type === 'hard' ? (config.metric.repeat ?? 1) : 1;
  const cost = Math.max(spend.cost_usd, summary.total_cost_usd);
  const figures = await figuresFor(files, paths.root, summary, config.metric.direction, cost);
  return { noise: retrospectiveNoise(lines, repeat), figures: retrospectiveFigures(figures) };
}
