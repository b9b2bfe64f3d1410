// `forge-pack loop`'s part of guards and tracks: the config entries its options make, and the check
// on the baseline that refuses a loop whose guards already fail.
import { AppError, ExitCode } from '../infra/errors.js';
import type { LoopConfigFile } from './config.js';
import { runChecks, type ChecksConfig, type RunCheck, type TrackValues } from './guards.js';

export interface GuardOptions {
  name?: string;
  command: string;
  timeoutSeconds?: number;
}

export interface TrackOptions {
  name: string;
  command: string;
  score?: ScoreSourceInput;
  /** `120000` (absolute) or `"+5%"` (relative to the baseline figure). */
  max?: number | string;
  min?: number | string;
  timeoutSeconds?: number;
}

type ScoreSourceInput = NonNullable<NonNullable<LoopConfigFile['tracks']>[number]['score']>;

/** The `guards` and `tracks` of config.json, as the options give them (nothing when none). */
export function checksConfigFile(
  guards: readonly GuardOptions[] = [],
  tracks: readonly TrackOptions[] = [],
): Pick<LoopConfigFile, 'guards' | 'tracks'> {
  return {
    ...(guards.length === 0 ? {} : { guards: guards.map(guardFile) }),
    ...(tracks.length === 0 ? {} : { tracks: tracks.map(trackFile) }),
  };
}

function guardFile(guard: GuardOptions): NonNullable<LoopConfigFile['guards']>[number] {
  return {
    name: guard.name,
    command: guard.command,
    timeout_seconds: guard.timeoutSeconds,
  };
}

function trackFile(track: TrackOptions): NonNullable<LoopConfigFile['tracks']>[number] {
  return {
    name: track.name,
    command: track.command,
    score: track.score ?? { from: 'exit-code' },
    max: track.max,
    min: track.min,
    timeout_seconds: track.timeoutSeconds,
  };
}

/**
 * Runs the guards and tracks on the untouched tree. A guard that fails there, a track that gives no
 * figure or already breaks its threshold would fail every iteration: refused, with nothing created.
 */
export async function checkBaseline(
  config: ChecksConfig,
  options: { cwd: string; run: RunCheck },
): Promise<{ tracks: TrackValues; guardTests: Record<string, number>; trackTests: Record<string, number> }> {
  if (config.guards.length === 0 && config.tracks.length === 0)
    return { tracks: {}, guardTests: {}, trackTests: {} };
  const outcome = await runChecks(config, options.run, { cwd: options.cwd });
  if (outcome.aborted) throw new AppError('The guards were interrupted; nothing was created.');
  const refuse = (message: string, fix: string, tail: string) =>
    new AppError(message, {
      exitCode: ExitCode.failure,
      hint: `${fix}; nothing was created.${tail === '' ? '' : `\nLast output:\n${tail}`}`,
    });
  const failure = outcome.failure;
  if (failure?.kind === 'guard') {
    throw refuse(
      `The ${failure.reason} on the baseline, before any change: every iteration would be reverted.`,
      `Make the guard pass on the current code (or fix its command) and run again`,
      failure.output_tail,
    );
  }
  if (failure !== undefined) {
    throw refuse(
      `On the baseline, ${failure.reason}: every iteration would be reverted.`,
      'Loosen --track-max/--track-min or fix the track and run again',
      failure.output_tail,
    );
  }
  const [name, why] = Object.entries(outcome.unreadable)[0] ?? [];
  if (name !== undefined) {
    throw refuse(
      `The track ${name} gave no figure on the baseline: ${why ?? ''}.`,
      'Fix its command or --track-score and run again',
      '',
    );
  }
  return { tracks: outcome.tracks, guardTests: outcome.guardTests, trackTests: outcome.trackTests };
}
