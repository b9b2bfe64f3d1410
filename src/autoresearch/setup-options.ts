// The options of `forge-pack loop` as setup takes them, and the config file they make: what the options
// say, defaults left to the schema.
import { UsageError } from '../infra/errors.js';
import type { Direction, LoopConfigFile } from './config.js';
import { checksConfigFile, type GuardOptions, type TrackOptions } from './guard-setup.js';

type HardMetricFile = Extract<LoopConfigFile['metric'], { type: 'hard' }>;
export type ScoreSourceInput = NonNullable<HardMetricFile['score']>;

export interface HardMetricOptions {
  type: 'hard';
  command: string;
  score?: ScoreSourceInput | undefined;
  direction?: Direction | undefined;
  artifact?: string | undefined;
  timeoutSeconds?: number | undefined;
  /** Measure each score this many times and score the median (default 1). */
  repeat?: number | undefined;
}

export interface SoftMetricOptions {
  type: 'soft';
  rubric: string;
  artifact: string;
  direction?: Direction | undefined;
  /** Refused: a judge agent's score is read once. */
  repeat?: number | undefined;
}

export interface LoopSetupOptions {
  subject: string;
  program: string;
  metric: HardMetricOptions | SoftMetricOptions;
  target?: number | undefined;
  minDelta?: number | undefined;
  maxIterations?: number | undefined;
  wallClockSeconds?: number | undefined;
  plateau?: number | undefined;
  maxCostUsd?: number | undefined;
  confirmationRounds?: number | undefined;
  /** Candidates per iteration (`population` in config.json; default 1). */
  population?: number | undefined;
  /** Paths the doer may change; default: the artifact. */
  scope?: readonly string[] | undefined;
  /** Ignored paths the metric command writes again itself (`scope.rebuilt_paths`). */
  rebuilt?: readonly string[] | undefined;
  /** The doer may change test files in its scope (`scope.doer_may_change_tests`). */
  doerMayChangeTests?: boolean | undefined;
  /** The doer may add checker suppressions and change checkers' settings (`scope.doer_may_silence_checks`). */
  doerMaySilenceChecks?: boolean | undefined;
  /** The doer's code may patch the runtime the metric runs it in (`scope.doer_may_patch_runtime`). */
  doerMayPatchRuntime?: boolean | undefined;
  /** What the soft judge reads may hold text for it (`scope.doer_may_address_judge`). */
  doerMayAddressJudge?: boolean | undefined;
  /** The largest file a doer's change may hold, in bytes (`scope.max_file_bytes`; 0 = no limit). */
  maxFileBytes?: number | undefined;
  /** All of a doer's changed files together, in bytes (`scope.max_change_bytes`; 0 = no limit). */
  maxChangeBytes?: number | undefined;
  /** How many files a doer's change may hold (`scope.max_change_files`; 0 = no limit). */
  maxChangeFiles?: number | undefined;
  /** Agent per role: doer, judge, strategist, retrospective, resume_strategist. */
  agents?: Readonly<Record<string, string>> | undefined;
  /** The workspace directory, relative to the repository root (default `.autoresearch`). */
  workspace?: string | undefined;
  /** Archive an existing loop in the workspace (into `archive/<time>/`) and start a new one. */
  force?: boolean | undefined;
  /**
   * Run the hard metric once more at setup on the scope's code answering nothing, to say whether it
   * checks the answers it times (answer-probe.ts); default on, `--no-answer-probe` to skip it.
   */
  answerProbe?: boolean | undefined;
  /** Commands that must pass after every doer for its work to be kept (`guards` in config.json). */
  guards?: readonly GuardOptions[] | undefined;
  /** Figures recorded beside the score every iteration, with optional thresholds (`tracks`). */
  tracks?: readonly TrackOptions[] | undefined;
  /** The spec this loop serves (specs/<slug>/): its retrospective records the outcome in the run state. */
  spec?: string | undefined;
}

/** The config file as written: what the options say, defaults left to the schema. */
export function buildConfigFile(options: LoopSetupOptions): LoopConfigFile {
  const { metric } = options;
  const artifact = metric.artifact;
  const scope = options.scope !== undefined && options.scope.length > 0 ? [...options.scope] : undefined;
  if (scope === undefined && artifact === undefined) {
    throw new UsageError('Say which files the doer may change: --scope <path> (repeatable).', {
      hint: 'The doer only works inside its scope; anything it changes elsewhere is reverted. With --artifact the scope defaults to the artifact.',
    });
  }
  const caps: NonNullable<LoopConfigFile['caps']> = {
    max_iterations: options.maxIterations,
    wall_clock_seconds: options.wallClockSeconds,
    plateau_threshold: options.plateau,
    max_cost_usd: options.maxCostUsd,
  };
  if (metric.type === 'soft' && metric.repeat !== undefined) {
    throw new UsageError(
      '--repeat measures a hard metric (--metric-command) several times; a soft metric is judged once.',
      {
        hint: 'Drop --repeat, or measure with a command: --metric-command <cmd> --repeat 3.',
      },
    );
  }
  const metricFile: LoopConfigFile['metric'] =
    metric.type === 'hard'
      ? {
          type: 'hard',
          command: metric.command,
          score: metric.score ?? { from: 'exit-code' },
          direction: metric.direction ?? 'maximize',
          artifact_path: artifact,
          timeout_seconds: metric.timeoutSeconds,
          repeat: metric.repeat,
        }
      : {
          type: 'soft',
          rubric_path: metric.rubric,
          artifact_path: metric.artifact,
          direction: metric.direction ?? 'maximize',
        };
  return {
    subject: options.subject,
    metric: metricFile,
    target: options.target ?? null,
    min_delta: options.minDelta,
    caps,
    scope: {
      doer_paths: scope ?? [artifact ?? ''],
      judge_paths: artifact === undefined ? [] : [artifact],
      ...(options.rebuilt === undefined ? {} : { rebuilt_paths: [...options.rebuilt] }),
      ...(options.doerMayChangeTests === true ? { doer_may_change_tests: true } : {}),
      ...(options.doerMaySilenceChecks === true ? { doer_may_silence_checks: true } : {}),
      ...(options.doerMayPatchRuntime === true ? { doer_may_patch_runtime: true } : {}),
      ...(options.doerMayAddressJudge === true ? { doer_may_address_judge: true } : {}),
      ...(options.maxFileBytes === undefined ? {} : { max_file_bytes: options.maxFileBytes }),
      ...(options.maxChangeBytes === undefined ? {} : { max_change_bytes: options.maxChangeBytes }),
      ...(options.maxChangeFiles === undefined ? {} : { max_change_files: options.maxChangeFiles }),
    },
    agents: options.agents === undefined ? undefined : { ...options.agents },
    confirmation_rounds: options.confirmationRounds,
    population: options.population,
    spec: options.spec,
    ...checksConfigFile(options.guards, options.tracks),
  };
}

/** `exit-code`, `regex:<pattern>`, `regex-stderr:<pattern>`, `json:<path>`, `tap`, `junit` → the config's score source. */
export function parseScoreOption(text: string): ScoreSourceInput {
  if (text === 'exit-code' || text === 'tap' || text === 'junit') return { from: text };
  const colon = text.indexOf(':');
  const kind = colon === -1 ? text : text.slice(0, colon);
  const rest = colon === -1 ? '' : text.slice(colon + 1);
  if (kind === 'regex' && rest !== '') return { from: 'regex', pattern: rest };
  if (kind === 'regex-stderr' && rest !== '') return { from: 'regex', pattern: rest, stream: 'stderr' };
  if (kind === 'json' && rest !== '') return { from: 'json', path: rest };
  throw new UsageError(
    `--score: expected exit-code, regex:<pattern>, regex-stderr:<pattern>, json:<path>, tap or junit, got ${JSON.stringify(text)}.`,
    { hint: 'Examples: --score "regex:Score: ([0-9.]+)", --score json:numPassedTests' },
  );
}
