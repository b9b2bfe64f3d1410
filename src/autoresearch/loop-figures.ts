// What a loop cost and earned: rates and ratios over its ledger counts, spend and run times. Pure.
import type { Direction } from './config.js';
import { CYCLE_ROLES, type CycleRole } from './loop-beads.js';

/** The roles of the four-bead cycle, whose time per iteration is reported. */
export { CYCLE_ROLES };

export interface FiguresInput {
  direction: Direction;
  /** Doer iterations decided (the baseline is not one). */
  iterations: number;
  kept: number;
  baseline: number | null;
  best: number | null;
  /** Everything the loop's agents spent. */
  costUsd: number;
  /** Time each role's beads took, summed over their attempts (from the run event logs). */
  roleMs: Readonly<Record<string, number>>;
  /** How long the runner ran the loop, summed over its runs; null when no run was recorded. */
  runMs: number | null;
}

export interface LoopFigures {
  iterations: number;
  run_ms: number | null;
  iterations_per_hour: number | null;
  /** kept / iterations. */
  keep_rate: number | null;
  /** Each role's time divided by the iterations decided (null: no iteration, or no time recorded). */
  time_per_iteration_ms: Record<CycleRole, number | null>;
  cost_usd: number;
  cost_per_iteration_usd: number | null;
  cost_per_keep_usd: number | null;
  /** best − baseline in the metric's direction (positive: better). */
  improvement: number | null;
  /** improvement / cost; null when nothing was spent. */
  improvement_per_usd: number | null;
}

const HOUR_MS = 3_600_000;

export function loopFigures(input: FiguresInput): LoopFigures {
  const { iterations, kept, costUsd } = input;
  const per = (value: number, count: number): number | null => (count > 0 ? tidy(value / count) : null);
  const improvement =
    input.baseline === null || input.best === null
      ? null
      : tidy(input.direction === 'maximize' ? input.best - input.baseline : input.baseline - input.best);
  const time = Object.fromEntries(
    CYCLE_ROLES.map((role) => {
      const ms = input.roleMs[role];
      return [role, ms === undefined ? null : per(ms, iterations)];
    }),
  ) as Record<CycleRole, number | null>;
  return {
    iterations,
    run_ms: input.runMs,
    iterations_per_hour:
      input.runMs === null || input.runMs <= 0 ? null : tidy(iterations / (input.runMs / HOUR_MS)),
    keep_rate: per(kept, iterations),
    time_per_iteration_ms: time,
    cost_usd: tidy(costUsd),
    cost_per_iteration_usd: per(costUsd, iterations),
    cost_per_keep_usd: per(costUsd, kept),
    improvement,
    improvement_per_usd: improvement === null || costUsd <= 0 ? null : tidy(improvement / costUsd),
  };
}

function tidy(value: number): number {
  return Number(value.toPrecision(12));
}
