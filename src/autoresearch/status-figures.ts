// The noise band and the cost/earnings figures that `ralph-loop status` adds for a loop, and their text.
import { join } from 'node:path';
import type { Direction } from './config.js';
import type { LedgerSummary } from './ledger-summary.js';
import { CYCLE_ROLES, loopFigures, type LoopFigures } from './loop-figures.js';
import { spread } from './noise.js';
import { readRunTimes } from './run-times.js';

/** The best kept score's own samples: it is the median of them, give or take half their spread. */
export interface BestNoise {
  samples: number[];
  spread: number;
  /** ±spread / 2: the best's share of the noise band a candidate is measured against. */
  band: number;
}

export function bestNoise(summary: Pick<LedgerSummary, 'best_samples'>): BestNoise | null {
  const samples = summary.best_samples;
  if (samples === undefined || samples.length < 2) return null;
  const range = spread(samples);
  return { samples: [...samples], spread: range, band: Number((range / 2).toPrecision(12)) };
}

/** The loop's figures from its summary, its total spend and its run logs (in `<workspace>/runs/`). */
export async function figuresFor(
  workspace: string,
  summary: LedgerSummary,
  direction: Direction,
  costUsd: number,
): Promise<LoopFigures> {
  const times = await readRunTimes(join(workspace, 'runs'));
  return loopFigures({
    direction,
    iterations: Math.max(0, summary.last_iter),
    kept: summary.kept,
    baseline: summary.baseline_score,
    best: summary.best_score,
    costUsd,
    roleMs: times?.role_ms ?? {},
    runMs: times?.run_ms ?? null,
  });
}

/** The status lines for the noise band and the figures, under the `score` line. */
export function renderFiguresLines(
  noise: BestNoise | null,
  figures: LoopFigures,
  format: { number(value: number | null): string; duration(ms: number): string },
): string[] {
  const out: string[] = [];
  if (noise !== null) {
    out.push(
      `noise     best ±${format.number(noise.band)} (median of ${noise.samples.length} samples, spread ${format.number(noise.spread)})`,
    );
  }
  if (figures.iterations === 0) return out;
  const rate = figures.keep_rate === null ? '—' : `${Math.round(figures.keep_rate * 100)}%`;
  const perHour =
    figures.iterations_per_hour === null
      ? '—'
      : format.number(Number(figures.iterations_per_hour.toFixed(2)));
  const roles = CYCLE_ROLES.map((role) => {
    const ms = figures.time_per_iteration_ms[role];
    return `${role} ${ms === null ? '—' : format.duration(ms)}`;
  }).join(', ');
  const usd = (value: number | null) => (value === null ? '—' : `$${value.toFixed(2)}`);
  out.push(
    `pace      ${perHour} iterations/hour · keep rate ${rate} · per iteration: ${roles}`,
    `earned    ${usd(figures.cost_per_iteration_usd)} per iteration, ${usd(figures.cost_per_keep_usd)} per kept improvement · improvement ${format.number(figures.improvement)}${figures.improvement_per_usd === null ? '' : ` (${format.number(figures.improvement_per_usd)} per $)`}`,
  );
  return out;
}
