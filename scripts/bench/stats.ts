// Small statistics for timing samples: median, p95 and friends, rounded for printing.

export interface Summary {
  n: number;
  median: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

/** Linear interpolation between closest ranks (p in 0..1) over an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (sorted.length - 1) * Math.min(1, Math.max(0, p));
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const a = sorted[low] ?? Number.NaN;
  const b = sorted[high] ?? Number.NaN;
  return a + (b - a) * (rank - low);
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    n: sorted.length,
    median: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

export function median(samples: readonly number[]): number {
  return summarize(samples).median;
}

/** Rounds for results.json: enough digits to compare runs, no float noise. */
export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function roundSummary(summary: Summary, digits = 2): Summary {
  return {
    n: summary.n,
    median: round(summary.median, digits),
    p95: round(summary.p95, digits),
    mean: round(summary.mean, digits),
    min: round(summary.min, digits),
    max: round(summary.max, digits),
  };
}

/** Differences of consecutive values: [b − a, c − b, …]. */
export function gaps(values: readonly number[]): number[] {
  const result: number[] = [];
  for (let i = 1; i < values.length; i += 1) result.push(values[i]! - values[i - 1]!);
  return result;
}
