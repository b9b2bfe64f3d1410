// Time spent by role and in all, read from a loop's run event logs (`runs/<run>.jsonl`): each attempt's
// `attempt_finished` event carries its role and duration; a run lasts from its first event to its last.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';

export interface RunTimes {
  /** Milliseconds by role, summed over every attempt. */
  role_ms: Record<string, number>;
  /** Milliseconds from first to last event, summed over runs. */
  run_ms: number;
  runs: number;
}

/** Undefined when no run was recorded. Lines that do not parse (a run still writing) are skipped. */
export async function readRunTimes(runsDir: string): Promise<RunTimes | undefined> {
  const names = (await readdir(runsDir).catch(() => [] as string[])).filter((n) => n.endsWith('.jsonl'));
  if (names.length === 0) return undefined;
  const times: RunTimes = { role_ms: {}, run_ms: 0, runs: 0 };
  for (const name of names.sort()) {
    const text = await readFileIfExists(join(runsDir, name));
    if (text === undefined) continue;
    foldRunLog(times, text);
  }
  return times;
}

/** Adds one run's events to the tally. */
export function foldRunLog(times: RunTimes, text: string): void {
  let first: number | undefined;
  let last: number | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let event: { type?: unknown; ts?: unknown; role?: unknown; duration_ms?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      continue;
    }
    const ts = typeof event.ts === 'string' ? Date.parse(event.ts) : Number.NaN;
    if (Number.isFinite(ts)) {
      first ??= ts;
      last = ts;
    }
    if (
      event.type === 'attempt_finished' &&
      typeof event.role === 'string' &&
      typeof event.duration_ms === 'number' &&
      Number.isFinite(event.duration_ms)
    ) {
      const role = event.role === 'arbiter-script' ? 'arbiter' : event.role;
      times.role_ms[role] = (times.role_ms[role] ?? 0) + Math.max(0, event.duration_ms);
    }
  }
  if (first === undefined || last === undefined) return;
  times.runs += 1;
  times.run_ms += Math.max(0, last - first);
}
