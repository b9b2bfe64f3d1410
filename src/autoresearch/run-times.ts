// Time spent by role and in all, read from a loop's run event logs (`runs/<run>.jsonl`): each attempt's
// `attempt_finished` event carries its role and duration; a run lasts from its first event to its last.
import { join } from 'node:path';
import type { LogQuery, LoopFiles } from '../infra/loop-files.js';

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
    // Only the attempts' ends and the first and last events are read: a long loop's logs are mostly
    // its agents' activity (a line per tool call), tens of MB.
    const scan = await files.scanLog(join(runsDir, name), RUN_LOG_QUERY);
    if (scan === undefined) continue;
    // The last line may be one still being written: then the one before it ends the run so far.
    const [beforeLast, last] = scan.last.length === 2 ? scan.last : [undefined, scan.last[0]];
    const attempts = scan.matches.filter((line) => line.includes(ATTEMPT_FINISHED));
    foldRun(times, attempts, timeOf(scan.first), timeOf(last) ?? timeOf(beforeLast));
  }
  return times;
}

/** An attempt's end as Forge writes its events (compact JSON): these lines are read by pattern, not parsed. */
const ATTEMPT_FINISHED = '"type":"attempt_finished"';

/**
 * What status and the report read of a run log: the lines that may be attempts' ends (however spaced:
 * the report parses them), the first event with a time, and the last two lines. One query for both:
 * where scans are remembered (the dashboard, see rememberingScans), a log is then read once, each poll
 * going on from where the last stopped.
 */
export const RUN_LOG_QUERY: LogQuery = Object.freeze({
  needle: '"attempt_finished"',
  first: (line: string) => timeOf(line) !== undefined,
  last: 2,
});

/**
 * Adds one run to the tally: its attempts' ends (lines holding ATTEMPT_FINISHED) by role, and its span
 * from the times of its first and last events.
 */
function foldRun(times: RunTimes, attempts: readonly string[], first?: number, last?: number): void {
  for (const line of attempts) {
    // Keys read by pattern, not by parsing the whole event: inside a JSON string value a quote is
    // escaped, so `"role":"` can only be the key itself.
    const role = ROLE.exec(line)?.[1];
    const duration = Number(DURATION.exec(line)?.[1]);
    if (role === undefined || !Number.isFinite(duration)) continue;
    const key = role === 'arbiter-script' ? 'arbiter' : role;
    times.role_ms[key] = (times.role_ms[key] ?? 0) + Math.max(0, duration);
  }
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
