// What guards and tracks left in the ledger, as people and the strategist read it. Plain functions over
// ledger lines (no schema library: `status` imports this on every call).
import type { LedgerLine } from './ledger.js';
import type { LedgerSummary } from './ledger-summary.js';

/** One track as `status` shows it: the baseline figure and the last one measured. */
export interface TrackFigure {
  name: string;
  baseline: number | null;
  last: number | null;
  /** The iteration the last figure is from (null: none since the baseline). */
  last_iter: number | null;
}

/** Every track the baseline or a recent line recorded, baseline → last. */
export function trackFigures(summary: LedgerSummary): TrackFigure[] {
  const baseline = summary.baseline_tracks ?? {};
  const names = new Set(Object.keys(baseline));
  for (const line of summary.recent) for (const name of Object.keys(line.tracks ?? {})) names.add(name);
  return [...names].map((name) => {
    const last = summary.recent.findLast(
      (line) => line.iter > 0 && line.tracks !== undefined && name in line.tracks,
    );
    return {
      name,
      baseline: baseline[name] ?? null,
      last: last?.tracks?.[name] ?? null,
      last_iter: last?.iter ?? null,
    };
  });
}

/** `size 120000, gz 41000`; empty when the line has no tracks. */
export function formatTracks(tracks: Readonly<Record<string, number | null>> | undefined): string {
  return Object.entries(tracks ?? {})
    .map(([name, value]) => `${name} ${value === null ? '—' : String(Number(value.toPrecision(12)))}`)
    .join(', ');
}

/** The failed guard of a line in one sentence, with the last line of its output; empty when none. */
export function describeGuardFailure(line: LedgerLine): string {
  const failure = line.failed_guard;
  if (failure === undefined) return '';
  const last = failure.output_tail.trim().split('\n').pop() ?? '';
  return last === ''
    ? failure.reason
    : `${failure.reason} (its output ends: ${JSON.stringify(last.slice(0, 200))})`;
}
