// Guards and tracks: commands the runner itself runs after every doer (and once at baseline). A guard
// must exit 0 for the iteration to be kept; a track records a figure beside the score and, with a
// threshold, guards it too. Running goes through the process port; the threshold rules are pure.
import type { Command, ProcessResult } from '../infra/process.js';
import type { GuardConfig, Threshold, TrackConfig } from './config.js';
import type { FailedGuard } from './ledger.js';
import { fewerThanBaseline } from './measure.js';
import { extractScore } from './scorers.js';
import { scoreTolerance } from './score-rules.js';
import { fewerTestsThanBaseline, passedTests, runsSomeTests } from './test-summary.js';

export type TrackValues = Record<string, number | null>;

export interface ChecksConfig {
  guards: readonly GuardConfig[];
  tracks: readonly TrackConfig[];
}

export interface CheckRunOptions {
  cwd: string;
  signal?: AbortSignal;
  /** Each track's baseline figure, for relative thresholds; at baseline, leave it out. */
  baselineTracks?: TrackValues;
  /** The tests each guard passed at baseline, as its runner's summary said: none may pass fewer. */
  baselineGuardTests?: Readonly<Record<string, number>> | undefined;
  /** The tests each test track counted at baseline (ScoreResult.tests): one that counts fewer has no figure. */
  baselineTrackTests?: Readonly<Record<string, number>> | undefined;
}

/** Runs one command (argv, no shell) in `cwd`, killed after `timeoutMs`. */
export type RunCheck = (
  command: Command,
  options: { cwd: string; timeoutMs: number; signal?: AbortSignal | undefined },
) => Promise<ProcessResult>;

export type ChecksOutcome =
  | { aborted: true }
  | {
      aborted: false;
      /** The first guard, or track threshold, that failed; undefined when every one passed. */
      failure?: FailedGuard;
      /** Each track's figure (null: none could be read). Empty when a guard failed first. */
      tracks: TrackValues;
      /** Why a track gave no figure, by name. */
      unreadable: Record<string, string>;
      /** The tests each guard that passed passed, where its runner's summary says (test-summary.ts). */
      guardTests: Record<string, number>;
      /** The tests each track's run counted, passed or failed, where its figure is a test report's. */
      trackTests: Record<string, number>;
    };

/** How much of a failing command's output is kept for the ledger and the strategist. */
const TAIL_CHARS = 800;

/**
 * Runs the guards in order, stopping at the first that fails (the iteration is reverted anyway), then
 * measures every track and checks its thresholds. At baseline (no `baselineTracks`) a relative
 * threshold is checked against the figure just measured.
 */
export async function runChecks(
  config: ChecksConfig,
  run: RunCheck,
  options: CheckRunOptions,
): Promise<ChecksOutcome> {
  const guardTests: Record<string, number> = {};
  for (const guard of config.guards) {
    const result = await runOne(run, guard.argv, guard.timeout_seconds, options);
    if (result.aborted) return { aborted: true };
    const passed = passedTests(withoutColour(`${result.stdout}\n${result.stderr}`));
    if (passed !== undefined) guardTests[guard.name] = passed;
    // A guard that picks its tests by what changed runs fewer by design: no count holds it.
    const floor = runsSomeTests(guard.argv) ? undefined : options.baselineGuardTests?.[guard.name];
    const fewer = fewerTestsThanBaseline(guard.name, passed, floor);
    const failed =
      guardFailure(guard.name, result, guard.timeout_seconds) ??
      (fewer === undefined
        ? undefined
        : {
            name: guard.name,
            kind: 'guard' as const,
            exit_code: 0,
            reason: fewer,
            output_tail: outputTail(result),
          });
    if (failed !== undefined)
      return { aborted: false, failure: failed, tracks: {}, unreadable: {}, guardTests, trackTests: {} };
  }
  const tracks: TrackValues = {};
  const results = new Map<string, ProcessResult>();
  const unreadable = new Map<string, string>();
  const trackTests: Record<string, number> = {};
  for (const track of config.tracks) {
    const result = await runOne(run, track.argv, track.timeout_seconds, options);
    if (result.aborted) return { aborted: true };
    results.set(track.name, result);
    const score = extractScore(track.score, result, track.timeout_seconds);
    if (score.ok && score.tests !== undefined) trackTests[track.name] = score.tests;
    // A test track is a figure over as many tests as its baseline counted (see measureHardMetric).
    const fewer = score.ok
      ? fewerThanBaseline(score.tests, options.baselineTrackTests?.[track.name], `the track's run`)
      : undefined;
    tracks[track.name] = score.ok && fewer === undefined ? score.score : null;
    if (!score.ok) unreadable.set(track.name, score.reason.replace(/the metric command/g, 'the command'));
    else if (fewer !== undefined) unreadable.set(track.name, fewer);
  }
  const baseline = options.baselineTracks ?? tracks;
  for (const track of config.tracks) {
    const reason = unreadable.has(track.name)
      ? hasThreshold(track)
        ? `track ${track.name} gave no figure, so its threshold cannot be checked: ${unreadable.get(track.name) ?? ''}`
        : undefined
      : trackBreach(track, tracks[track.name] ?? null, baseline[track.name]);
    if (reason === undefined) continue;
    const result = results.get(track.name);
    return {
      aborted: false,
      tracks,
      unreadable: Object.fromEntries(unreadable),
      guardTests,
      trackTests,
      failure: {
        name: track.name,
        kind: 'track',
        exit_code: result?.exitCode ?? null,
        reason,
        output_tail: result === undefined ? '' : outputTail(result),
      },
    };
  }
  return { aborted: false, tracks, unreadable: Object.fromEntries(unreadable), guardTests, trackTests };
}

function runOne(
  run: RunCheck,
  argv: readonly string[],
  timeoutSeconds: number,
  options: CheckRunOptions,
): Promise<ProcessResult> {
  const [file = '', ...args] = argv;
  return run(
    { file, args },
    {
      cwd: options.cwd,
      timeoutMs: timeoutSeconds * 1000,
      signal: options.signal,
    },
  );
}

/** Undefined when the guard passed (exit 0). */
export function guardFailure(
  name: string,
  result: ProcessResult,
  timeoutSeconds: number,
): FailedGuard | undefined {
  let reason: string | undefined;
  if (result.spawnError !== undefined) reason = `could not start: ${result.spawnError}`;
  else if (result.timedOut) reason = `timed out after ${timeoutSeconds}s`;
  else if (result.exitCode === undefined) reason = `was killed by ${result.signal ?? 'a signal'}`;
  else if (result.exitCode !== 0) reason = `exited with code ${result.exitCode}`;
  if (reason === undefined) return undefined;
  return {
    name,
    kind: 'guard',
    exit_code: result.exitCode ?? null,
    reason: `guard ${name} ${reason}`,
    output_tail: outputTail(result),
  };
}

/** `text` without the terminal's colour codes, which a runner prints where it is told to (FORCE_COLOR). */
function withoutColour(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

export function outputTail(result: ProcessResult): string {
  const text = `${result.stdout}${result.stderr === '' ? '' : `\n${result.stderr}`}`.trim();
  return text.length > TAIL_CHARS ? `…${text.slice(text.length - TAIL_CHARS)}` : text;
}

// ---- thresholds (pure) ----

function hasThreshold(track: TrackConfig): boolean {
  return track.max !== undefined || track.min !== undefined;
}

/** The bound a threshold sets; undefined when it is relative and there is no baseline figure. */
export function thresholdLimit(
  threshold: Threshold,
  baseline: number | null | undefined,
): number | undefined {
  if ('absolute' in threshold) return threshold.absolute;
  if (baseline === null || baseline === undefined) return undefined;
  return baseline + (Math.abs(baseline) * threshold.relative_percent) / 100;
}

/** Why `value` breaks the track's `max` or `min`, or undefined when it keeps within both. */
export function trackBreach(
  track: Pick<TrackConfig, 'name' | 'max' | 'min'>,
  value: number | null,
  baseline: number | null | undefined,
): string | undefined {
  const bounds = [
    ['max', track.max],
    ['min', track.min],
  ] as const;
  for (const [bound, threshold] of bounds) {
    if (threshold === undefined) continue;
    if (value === null) return `track ${track.name} gave no figure, so its ${bound}imum cannot be checked`;
    const limit = thresholdLimit(threshold, baseline);
    const of =
      'absolute' in threshold ? '' : ` (${threshold.text} of the baseline ${format(baseline ?? null)})`;
    if (limit === undefined) {
      return `track ${track.name} has no baseline figure for its relative ${bound}imum ${'text' in threshold ? threshold.text : ''}`;
    }
    const slack = scoreTolerance(value, limit);
    if (bound === 'max' && value > limit + slack) {
      return `track ${track.name} is ${format(value)}, above its maximum ${format(limit)}${of}`;
    }
    if (bound === 'min' && value < limit - slack) {
      return `track ${track.name} is ${format(value)}, below its minimum ${format(limit)}${of}`;
    }
  }
  return undefined;
}

function format(value: number | null): string {
  return value === null ? '—' : String(Number(value.toPrecision(12)));
}

/** One line for people: `guard tests exited with code 1` and the last line of its output. */
export function describeFailedGuard(failure: FailedGuard): string {
  const last = failure.output_tail.trim().split('\n').pop() ?? '';
  return last === '' ? failure.reason : `${failure.reason}: ${last.slice(0, 200)}`;
}
