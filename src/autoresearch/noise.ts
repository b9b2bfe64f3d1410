// Repeated measurements of a hard metric: the median that is scored, the spread that is recorded, and
// the noise band that decides whether an improvement is real or a lucky run.
//
// Spread is the range of a set of samples (max − min). The noise band of a candidate against the best
// kept score is ±(spread(best) + spread(candidate)) / 2: each median sits inside its own samples, so a
// gain no larger than the two half-ranges together is one the two sets of samples could show by chance
// (their ranges, centred on their medians, overlap). With one sample each (`repeat` 1) the band is 0 and
// nothing differs from a single measurement.
import type { Direction } from './config.js';
import { isImprovement, scoreTolerance } from './score-rules.js';

/** The middle sample; the mean of the two middle ones for an even count. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new Error('median of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const value =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return tidy(value);
}

/** max − min; 0 for one sample or none. */
export function spread(samples: readonly number[]): number {
  if (samples.length < 2) return 0;
  return tidy(Math.max(...samples) - Math.min(...samples));
}

/** The half-width of the noise band: (spread(best) + spread(candidate)) / 2. */
export function noiseBand(bestSamples: readonly number[] | undefined, samples: readonly number[]): number {
  return tidy((spread(bestSamples ?? []) + spread(samples)) / 2);
}

export interface NoiseInput {
  score: number;
  best: number | null;
  bestSamples: readonly number[] | undefined;
  samples: readonly number[];
  minDelta: number;
  direction: Direction;
}

export interface NoiseVerdict {
  /** ±band around the best kept score. */
  band: number;
  /** An improvement by the usual rule, but no larger than the band: not distinguishable from noise. */
  within: boolean;
}

/**
 * Where a measured score stands against the noise band of the best kept score; undefined when no noise
 * was measured (both sides one sample, or no best yet), so the usual rule alone decides.
 */
export function noiseVerdict(input: NoiseInput): NoiseVerdict | undefined {
  const { score, best, direction } = input;
  if (best === null) return undefined;
  const band = noiseBand(input.bestSamples, input.samples);
  if (band === 0) return undefined;
  const gain = direction === 'maximize' ? score - best : best - score;
  const improves = isImprovement(score, best, input.minDelta, direction);
  return { band, within: improves && gain <= band + scoreTolerance(score, best, band) };
}

/** A first measurement within the noise band is measured again before it is decided. */
export function needsRemeasure(input: NoiseInput): boolean {
  return noiseVerdict(input)?.within === true;
}

/** Rounds away float noise (0.1 + 0.2) so recorded numbers read as measured. */
function tidy(value: number): number {
  return Number(value.toPrecision(12));
}
