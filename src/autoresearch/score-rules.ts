// When one score beats another or meets the target, with float noise (0.1 + 0.2 vs 0.3) tolerated:
// the single definition the arbiter, the ledger fold, noise and guards all use.
import type { Direction } from './config.js';

const RELATIVE_EPSILON = 1e-9;

/** Differences below this are float noise (0.1 + 0.2 vs 0.3), not a change in the metric. */
export function scoreTolerance(...values: number[]): number {
  return RELATIVE_EPSILON * Math.max(1, ...values.map(Math.abs));
}

/** maximize: `score > best + minDelta`; minimize: `score < best − minDelta`; equal is never better. */
export function isImprovement(
  score: number,
  best: number | null,
  minDelta: number,
  direction: Direction,
): boolean {
  if (best === null) return true;
  const gain = direction === 'maximize' ? score - best : best - score;
  return gain - minDelta > scoreTolerance(score, best, minDelta);
}

export function meetsTarget(score: number, target: number, direction: Direction): boolean {
  const slack = scoreTolerance(score, target);
  return direction === 'maximize' ? score >= target - slack : score <= target + slack;
}
