// br versions: parsing `br version` output and the feature gates the adapter keys its call protocol on.

/** A parsed `major.minor.patch`; anything after the patch number (`-rc1`, `+sha`) is ignored. */
export type BrVersion = readonly [number, number, number];

/** What a given br can do, as far as the adapter cares. */
export interface BrFeatures {
  version: string;
  /** `br ready --parent EPIC [-r]` (0.1.13+); v0.1.12 answers a usage error. */
  readyParent: boolean;
  /** `br ready --epic EPIC` (= `--parent -r`), 0.2.12+. */
  readyEpic: boolean;
  /** ready rows carry `labels` (0.2.12+). */
  readyLabels: boolean;
}

/**
 * Reads a version out of `br version --json` (`{"version":"0.1.12",…}`, or a bd-style `{data:{version}}`)
 * or out of plain text such as `br 0.1.12`. Undefined when there is none.
 */
export function parseBrVersion(output: unknown): string | undefined {
  if (typeof output === 'string') return /(\d+\.\d+\.\d+)/.exec(output)?.[1];
  if (typeof output !== 'object' || output === null) return undefined;
  const record = output as Record<string, unknown>;
  if (typeof record.version === 'string') return parseBrVersion(record.version);
  return record.data === undefined ? undefined : parseBrVersion(record.data);
}

export function toVersionTuple(version: string): BrVersion | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  if (match === null) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** -1, 0 or 1, comparing `a` with the `[major, minor, patch]` in `b`. */
export function compareVersions(a: BrVersion, b: BrVersion): number {
  for (let i = 0; i < 3; i += 1) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff < 0 ? -1 : 1;
  }
  return 0;
}

function atLeast(version: BrVersion | undefined, minimum: BrVersion): boolean {
  return version !== undefined && compareVersions(version, minimum) >= 0;
}

/**
 * Features of a br version. An unknown version gets the oldest protocol: it costs more calls but is
 * correct on every br, where guessing "new" would send flags an old br rejects.
 */
export function featuresOf(version: string | undefined): BrFeatures {
  const tuple = version === undefined ? undefined : toVersionTuple(version);
  return {
    version: version ?? 'unknown',
    readyParent: atLeast(tuple, [0, 1, 13]),
    readyEpic: atLeast(tuple, [0, 2, 12]),
    readyLabels: atLeast(tuple, [0, 2, 12]),
  };
}
