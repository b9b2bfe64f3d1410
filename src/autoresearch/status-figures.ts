// The noise band and the cost/earnings figures that `ralph-loop status` adds for a loop (the CLI renders them).
import { join } from 'node:path';
import type { LoopFiles } from '../infra/loop-files.js';
import type { Direction } from './config.js';
import type { LedgerSummary } from './ledger-summary.js';
import { loopFigures, type LoopFigures } from './loop-figures.js';
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
  files: LoopFiles,
  workspace: string,
  summary: LedgerSummary,
  direction: Direction,
  costUsd: number,
): Promise<LoopFigures> {
  const times = await readRunTimes(files, join(workspace, 'runs'));
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
