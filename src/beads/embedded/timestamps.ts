// RFC 3339 UTC timestamps with nanosecond digits like br's: milliseconds from the clock plus a counter.
import type { Clock } from '../../infra/clock.js';

export interface Timestamp {
  /** e.g. `2026-01-21T21:46:54.405000001Z` */
  iso: string;
  ms: number;
}

const PER_MS = 1_000_000;

/**
 * A source of strictly increasing timestamps: the clock's milliseconds, and within one millisecond
 * (or when the clock stands still or steps back) a counter in the sub-millisecond digits, so records
 * created in a burst keep their creation order.
 */
export function createTimestampSource(clock: Clock): () => Timestamp {
  let lastMs = Number.NEGATIVE_INFINITY;
  let counter = 0;
  return () => {
    const now = Math.floor(clock.now());
    if (now > lastMs) {
      lastMs = now;
      counter = 0;
    } else {
      counter += 1;
      if (counter >= PER_MS) {
        lastMs += 1;
        counter = 0;
      }
    }
    return { iso: formatTimestamp(lastMs, counter), ms: lastMs };
  };
}

/** `ms` as RFC 3339 UTC with nine fractional digits, the last six being `subMs` (0–999999). */
export function formatTimestamp(ms: number, subMs = 0): string {
  const base = new Date(ms).toISOString(); // 2026-01-21T21:46:54.405Z
  return `${base.slice(0, -1)}${String(subMs).padStart(6, '0')}Z`;
}

/**
 * The smallest timestamp this source could write that is after `iso` (one nanosecond later), for a
 * change that must read as newer than the version it replaces when the clock has not moved past it.
 */
export function timestampAfter(iso: string): string {
  const ms = Date.parse(iso);
  const fraction = (/\.(\d+)/.exec(iso)?.[1] ?? '').padEnd(9, '0').slice(0, 9);
  const wholeMs = Math.floor(ms / 1000) * 1000 + Number(fraction.slice(0, 3));
  const subMs = Number(fraction.slice(3)) + 1;
  return subMs >= PER_MS ? formatTimestamp(wholeMs + 1, 0) : formatTimestamp(wholeMs, subMs);
}
