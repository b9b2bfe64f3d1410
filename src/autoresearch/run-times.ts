// Time spent by role and in all, read from a loop's run event logs (`runs/<run>.jsonl`): each attempt's
// `attempt_finished` event carries its role and duration; a run lasts from its first event to its last.
import { join } from 'node:path';
import type { LoopFiles } from '../infra/loop-files.js';

export interface RunTimes {
  /** Milliseconds by role, summed over every attempt. */
  role_ms: Record<string, number>;
  /** Milliseconds from first to last event, summed over runs. */
  run_ms: number;
  runs: number;
}

/** Undefined when no run was recorded. Lines that do not parse (a run still writing) are skipped. */
export async function readRunTimes(files: LoopFiles, runsDir: string): Promise<RunTimes | undefined> {
  const names = ((await files.list(runsDir)) ?? []).filter((n) => n.endsWith('.jsonl'));
  if (names.length === 0) return undefined;
  const times: RunTimes = { role_ms: {}, run_ms: 0, runs: 0 };
  for (const name of names.sort()) {
    const text = await files.readIfExists(join(runsDir, name));
    if (text === undefined) continue;
    foldRunLog(times, text);
  }
  return times;
}

/**
 * Adds one run's events to the tally. This is on the `status` path, over logs of thousands of events:
 * only `attempt_finished` lines are read, and the run's span is read off its first and last events.
 */
export function foldRunLog(times: RunTimes, text: string): void {
  const lines = text.split('\n');
  for (const line of lines) {
    if (!line.includes('"type":"attempt_finished"')) continue;
    // Keys read by pattern, not by parsing the whole event: inside a JSON string value a quote is
    // escaped, so `"role":"` can only be the key itself.
    const role = ROLE.exec(line)?.[1];
    const duration = Number(DURATION.exec(line)?.[1]);
    if (role === undefined || !Number.isFinite(duration)) continue;
    const key = role === 'arbiter-script' ? 'arbiter' : role;
    times.role_ms[key] = (times.role_ms[key] ?? 0) + Math.max(0, duration);
  }
  let first: number | undefined;
  for (let i = 0; first === undefined && i < lines.length; i += 1) first = timeOf(lines[i]);
  let last: number | undefined;
  for (let i = lines.length - 1; last === undefined && i >= 0; i -= 1) last = timeOf(lines[i]);
  if (first === undefined || last === undefined) return;
  times.runs += 1;
  times.run_ms += Math.max(0, last - first);
}

const ROLE = /"role":"([^"\\]*)"/;
const DURATION = /"duration_ms":(-?[\d.eE+-]+)/;

/** The time of an event line; undefined for a blank line or one that does not parse (still being written). */
function timeOf(line: string | undefined): number | undefined {
  if (line === undefined || line.trim() === '') return undefined;
  let ts: unknown;
  try {
    ts = (JSON.parse(line) as { ts?: unknown } | null)?.ts;
  } catch {
    return undefined;
  }
  const time = typeof ts === 'string' ? Date.parse(ts) : Number.NaN;
  return Number.isFinite(time) ? time : undefined;
}
