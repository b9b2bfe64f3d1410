// `forge-pack loop`: validates a new loop, writes its workspace, creates and registers its epic,
// records the baseline and stamps cycle 1. Takes its ports as arguments; knows no CLI.
import { mkdir, readdir, rename } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { BeadStore } from '../beads/types.js';
import { pathExists, readFileIfExists, writeFileAtomic, writeJsonAtomic } from '../infra/atomic-file.js';
import { AppError, ExitCode, EnvironmentError, UsageError } from '../infra/errors.js';
import type { Git } from '../infra/git.js';
import type { ProcessResult } from '../infra/process.js';
import { decide } from './arbiter.js';
import {
  normalizeRelativePath,
  parseLoopConfig,
  type Direction,
  type LoopConfig,
  type LoopConfigFile,
} from './config.js';
import { writeJudgeOutput, type JudgeOutput } from './judge-output.js';
import { measureHardMetric } from './measure.js';
import type { TrackValues } from './guards.js';
import { checkBaseline, checksConfigFile, type GuardOptions, type TrackOptions } from './guard-setup.js';
import { updateIterationState } from './iteration-state.js';
import { recordLedgerLine } from './ledger-summary.js';
import { isPathInScope } from './keep-revert.js';
import { recordHead } from './loop-head.js';
import { metricFiles } from './state-guard.js';
import { realLocation, staysInside } from '../infra/contained-path.js';
import { writeArbiterSignal, type ArbiterSignal } from './signals.js';
import { LOOP_LABEL, type StampedBead } from './loop-beads.js';
import type { LoopContext } from './loop-context.js';
import { stampIteration, stampSoftBaseline } from './stamp.js';
import {
  configEpicId,
  readLoopsRegistry,
  registerLoop,
  resolveWorkspaceDir,
  workspacePaths,
  type WorkspacePaths,
} from './workspace.js';

type HardMetricFile = Extract<LoopConfigFile['metric'], { type: 'hard' }>;
export type ScoreSourceInput = NonNullable<HardMetricFile['score']>;

export interface HardMetricOptions {
  type: 'hard';
  command: string;
  score?: ScoreSourceInput;
  direction?: Direction;
  artifact?: string;
  timeoutSeconds?: number;
  /** Measure each score this many times and score the median (default 1). */
  repeat?: number;
}

export interface SoftMetricOptions {
  type: 'soft';
  rubric: string;
  artifact: string;
  direction?: Direction;
  /** Refused: a judge agent's score is read once. */
  repeat?: number;
}

export interface LoopSetupOptions {
  subject: string;
  program: string;
  metric: HardMetricOptions | SoftMetricOptions;
  target?: number;
  minDelta?: number;
  maxIterations?: number;
  wallClockSeconds?: number;
  plateau?: number;
  maxCostUsd?: number;
  confirmationRounds?: number;
  /** Paths the doer may change; default: the artifact. */
  scope?: readonly string[];
  /** Agent per role: doer, judge, strategist, retrospective, resume_strategist. */
  agents?: Readonly<Record<string, string>>;
  /** The workspace directory, relative to the repository root (default `.autoresearch`). */
  workspace?: string;
  /** Archive an existing loop in the workspace (into `archive/<time>/`) and start a new one. */
  force?: boolean;
  /** Commands that must pass after every doer for its work to be kept (`guards` in config.json). */
  guards?: readonly GuardOptions[];
  /** Figures recorded beside the score every iteration, with optional thresholds (`tracks`). */
  tracks?: readonly TrackOptions[];
}

export interface SetupPorts {
  store: BeadStore;
  git: Pick<Git, 'headSha' | 'statusPorcelain' | 'currentBranch' | 'topLevel'>;
  /** Runs the hard metric command (argv, no shell) in `cwd`, killed after `timeoutMs`. */
  runMetric(argv: readonly string[], options: { cwd: string; timeoutMs: number }): Promise<ProcessResult>;
  now(): number;
  isProcessAlive(pid: number): boolean;
}

export type BaselineResult =
  | { kind: 'measured'; score: number; signal: ArbiterSignal; judge_output: string }
  | { kind: 'pending'; beads: StampedBead[] };

export interface SetupResult {
  epic: string;
  subject: string;
  /** Absolute path of the workspace, and as the registry stores it. */
  workspace: string;
  workspace_relative: string;
  config: LoopConfig;
  baseline: BaselineResult;
  /** The beads of cycle 1 (none when the baseline already ended the loop). */
  beads: StampedBead[];
  /** Where an earlier loop in the same workspace was moved (with --force). */
  archived?: string;
  /** Things the user should know; nothing was refused for them. */
  warnings: string[];
}

const ARCHIVE_DIR = 'archive';
/** Workspace entries that belong to the workspace, not to one loop: kept when a loop is archived. */
const KEPT_ON_ARCHIVE = new Set(['templates', ARCHIVE_DIR]);
const PROTECTED_DIRS = ['.git', '.forge', '.beads'];

export async function setupLoop(
  repo: string,
  options: LoopSetupOptions,
  ports: SetupPorts,
): Promise<SetupResult> {
  const ws = resolveWorkspaceDir(repo, options.workspace);
  const paths = workspacePaths(ws.root);
  const configFile = buildConfigFile(options);
  const config = parseLoopConfig(configFile, `${ws.relative}/config.json`);
  if (options.program.trim() === '') {
    throw new UsageError('The program is empty: it is the stable directive every doer reads.', {
      hint: 'Give it with --program "<text>" or --program-file <file>.',
    });
  }
  checkLayout(ws.relative, config);
  await checkContainment(repo, config);
  const warnings: string[] = [];
  if (config.metric.type === 'soft') {
    if ((await readFileIfExists(resolve(repo, config.metric.rubric_path))) === undefined) {
      throw new UsageError(`The rubric ${config.metric.rubric_path} does not exist.`, {
        hint: 'Write the rubric first: every judge scores the artifact against it.',
      });
    }
    if (!(await pathExists(resolve(repo, config.metric.artifact_path)))) {
      warnings.push(
        `The artifact ${config.metric.artifact_path} does not exist yet: the baseline judge will score its absence.`,
      );
    }
  }

  // A workspace holds a loop when it has a config, or a ledger with lines: neither is overwritten.
  const occupied =
    (await readFileIfExists(paths.config)) !== undefined ||
    ((await readFileIfExists(paths.ledger)) ?? '').trim() !== '';
  if (occupied && options.force !== true) {
    const epic = (await configEpicId(paths.root)) ?? 'an unknown epic';
    throw new AppError(
      `${ws.relative}/ already holds the loop of ${epic}; its ledger is never overwritten.`,
      {
        exitCode: ExitCode.usage,
        hint: `Give a second loop its own workspace (--workspace .autoresearch-<name>), or pass --force to move the old loop to ${ws.relative}/${ARCHIVE_DIR}/ and start over.`,
      },
    );
  }
  if (occupied) await refuseWhenRunning(paths, ports);

  let head: string;
  try {
    head = await ports.git.headSha();
  } catch (error) {
    throw new EnvironmentError('forge-pack loop needs a git repository with at least one commit.', {
      hint: 'Run it in the repository the loop improves (git init && git commit first); the arbiter keeps and reverts with git.',
      cause: error,
    });
  }
  warnings.push(...(await uncommittedInScope(ports.git, config)));

  // A hard baseline is measured before anything is created: a metric that cannot be read fails here,
  // with nothing to clean up, rather than as a loop without a baseline.
  let measured: { output: JudgeOutput; durationMs: number } | undefined;
  if (config.metric.type === 'hard') {
    const metric = config.metric;
    const verdict = await measureHardMetric(metric, metric.repeat ?? 1, () =>
      ports.runMetric(metric.argv, { cwd: repo, timeoutMs: metric.timeout_seconds * 1000 }),
    );
    if (!verdict.ok) {
      const last = verdict.last;
      const tail =
        last === undefined ? '' : `${last.stdout}\n${last.stderr}`.trim().split('\n').slice(-5).join('\n');
      throw new AppError(`The baseline could not be measured: ${verdict.reason}.`, {
        exitCode: ExitCode.failure,
        hint: `Fix the metric command or --score and run again; nothing was created.${tail === '' ? '' : `\nLast output:\n${tail}`}`,
      });
    }
    measured = { output: verdict.output, durationMs: verdict.durationMs };
  }

  // Guards and tracks are measured on the baseline before anything is created, like the metric.
  const baselineTracks = await checkBaseline(config, {
    cwd: repo,
    run: (command, run) => ports.runMetric([command.file, ...command.args], run),
  });

  let archived: string | undefined;
  if (occupied) archived = await archiveLoop(repo, paths, ports.now());

  const epic = await ports.store.create({
    title: `autoresearch: ${config.subject}`,
    type: 'epic',
    labels: [LOOP_LABEL],
    description: epicDescription(config.subject, ws.relative),
  });
  const { epic_id: _ignored, ...rest } = configFile;
  await writeFileAtomic(
    paths.program,
    options.program.endsWith('\n') ? options.program : `${options.program}\n`,
  );
  if ((await readFileIfExists(paths.ledger)) === undefined) await writeFileAtomic(paths.ledger, '');
  // The loop's record (config, program, ledger, signals, directives) may be committed; the runner's
  // working files may not, or a doer's commit or a judge's tree check would trip over them.
  if ((await readFileIfExists(join(paths.root, '.gitignore'))) === undefined) {
    await writeFileAtomic(join(paths.root, '.gitignore'), WORKSPACE_GITIGNORE);
  }
  // config.json last: its presence is what marks the workspace as holding a loop.
  const { subject, ...others } = rest;
  await writeJsonAtomic(paths.config, { subject, epic_id: epic.id, ...others });
  await registerLoop(repo, epic.id, {
    workspace: ws.relative,
    subject: config.subject,
    store: ports.store.kind,
  });
  // The branch and commit the loop starts on: a HEAD moved by anyone but a doer stops it later.
  await recordHead(paths.root, ports.git);

  const ctx: LoopContext = {
    repo,
    paths,
    workspace: ws.relative,
    config: { ...config, epic_id: epic.id },
    epicId: epic.id,
    storeKind: ports.store.kind,
  };
  let baseline: BaselineResult;
  let ended = false;
  if (measured !== undefined) {
    const { output, durationMs } = measured;
    const recorded = await recordHardBaseline(ctx, output, {
      head,
      now: new Date(ports.now()).toISOString(),
      durationMs,
      tracks: baselineTracks,
    });
    baseline = {
      kind: 'measured',
      score: output.score,
      signal: recorded,
      judge_output: paths.judgeOutput(0),
    };
    if (recorded.type === 'terminal') {
      ended = true;
      warnings.push(
        `The baseline ${output.score} already ends the loop (${recorded.reason}); no iteration was stamped.`,
      );
    }
  } else {
    // arbiter-0 records the baseline line later: it takes the tracks measured now from iteration 0's state.
    if (Object.keys(baselineTracks).length > 0) {
      await updateIterationState(paths.root, 0, (s) => ({ ...s, tracks: baselineTracks }));
    }
    baseline = { kind: 'pending', beads: (await stampSoftBaseline(ctx, ports.store)).created };
  }
  const beads = ended ? [] : (await stampIteration(ctx, ports.store, { iter: 1 })).created;

  return {
    epic: epic.id,
    subject: config.subject,
    workspace: paths.root,
    workspace_relative: ws.relative,
    config: ctx.config,
    baseline,
    beads,
    ...(archived === undefined ? {} : { archived }),
    warnings,
  };
}

/** The config file as written: what the options say, defaults left to the schema. */
const WORKSPACE_GITIGNORE = [
  "# Written by Forge: the runner's working files, not the loop's record.",
  'ralph-loop.lock',
  'stop',
  'runs/',
  'logs/',
  'iterations/',
  'archive/',
  'spend.json',
  'ledger-summary.json',
  'head.json',
  '*.tmp',
  '',
].join('\n');

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
    ...(options.maxIterations === undefined ? {} : { max_iterations: options.maxIterations }),
    ...(options.wallClockSeconds === undefined ? {} : { wall_clock_seconds: options.wallClockSeconds }),
    ...(options.plateau === undefined ? {} : { plateau_threshold: options.plateau }),
    ...(options.maxCostUsd === undefined ? {} : { max_cost_usd: options.maxCostUsd }),
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
          ...(artifact === undefined ? {} : { artifact_path: artifact }),
          ...(metric.timeoutSeconds === undefined ? {} : { timeout_seconds: metric.timeoutSeconds }),
          ...(metric.repeat === undefined ? {} : { repeat: metric.repeat }),
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
    ...(options.minDelta === undefined ? {} : { min_delta: options.minDelta }),
    caps,
    scope: {
      doer_paths: scope ?? [artifact ?? ''],
      judge_paths: artifact === undefined ? [] : [artifact],
    },
    ...(options.agents === undefined ? {} : { agents: { ...options.agents } }),
    ...(options.confirmationRounds === undefined ? {} : { confirmation_rounds: options.confirmationRounds }),
    ...checksConfigFile(options.guards, options.tracks),
  };
}

/** `exit-code`, `regex:<pattern>`, `json:<path>`, `tap`, `junit` → the config's score source. */
export function parseScoreOption(text: string): ScoreSourceInput {
  if (text === 'exit-code' || text === 'tap' || text === 'junit') return { from: text };
  const colon = text.indexOf(':');
  const kind = colon === -1 ? text : text.slice(0, colon);
  const rest = colon === -1 ? '' : text.slice(colon + 1);
  if (kind === 'regex' && rest !== '') return { from: 'regex', pattern: rest };
  if (kind === 'json' && rest !== '') return { from: 'json', path: rest };
  throw new UsageError(
    `--score: expected exit-code, regex:<pattern>, json:<path>, tap or junit, got ${JSON.stringify(text)}.`,
    { hint: 'Examples: --score "regex:Score: ([0-9.]+)", --score json:numPassedTests' },
  );
}

/**
 * The doer's scope must not reach the loop's own files (workspace, bead store, Forge's config, git)
 * nor, for a soft metric, the rubric: a doer that can edit what judges it is not blind.
 */
function checkLayout(workspace: string, config: LoopConfig): void {
  const inside = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);
  const overlaps = (a: string, b: string) => inside(a, b) || inside(b, a);
  for (const raw of config.scope.doer_paths) {
    const path = normalizeRelativePath(raw);
    for (const dir of [workspace, ...PROTECTED_DIRS]) {
      if (overlaps(path, dir)) {
        throw new UsageError(`The scope ${raw} overlaps ${dir}/, which the doer must never change.`, {
          hint: 'Give the directories of the work itself, e.g. --scope src/ --scope docs/spec.md.',
        });
      }
    }
    if (config.metric.type === 'soft' && inside(normalizeRelativePath(config.metric.rubric_path), path)) {
      throw new UsageError(`The rubric ${config.metric.rubric_path} is inside the doer's scope ${raw}.`, {
        hint: 'Move the rubric out of the scope (e.g. into the workspace), or narrow --scope: the doer must not edit what judges it.',
      });
    }
  }
}

/**
 * Scope and artifact paths must stay inside the repository once links are followed (a doer writing
 * through `linkdir -> /elsewhere` would change files no guard sees), and the doer's scope must not
 * hold a file the metric command reads: every change to it would be put back, so the loop could
 * never improve, and a doer that could change it would be scoring itself.
 */
async function checkContainment(repo: string, config: LoopConfig): Promise<void> {
  const paths = [
    ...config.scope.doer_paths.map((path) => ['scope', path] as const),
    ...config.scope.judge_paths.map((path) => ['judge path', path] as const),
    ...(config.metric.artifact_path === undefined
      ? []
      : [['artifact', config.metric.artifact_path] as const]),
  ];
  for (const [what, path] of paths) {
    if (!(await staysInside(repo, path))) {
      throw new UsageError(
        `The ${what} ${path} leads out of the repository (through a symbolic link, to ${await realLocation(repo, path)}).`,
        {
          hint: 'Give a path that is really inside the repository: the loop only guards and reverts files there.',
        },
      );
    }
  }
  for (const file of await metricFiles(config, repo)) {
    const scope = config.scope.doer_paths.find((path) => isPathInScope(file, [path]));
    if (scope === undefined) continue;
    throw new UsageError(
      `The scope ${scope} holds ${file}, a metric file (the metric command, a guard or a track reads it), which the doer must never change.`,
      {
        hint: 'Narrow --scope so it leaves out the files the metric command reads (its script, its tests), or move them out of the scope.',
      },
    );
  }
}

async function uncommittedInScope(git: SetupPorts['git'], config: LoopConfig): Promise<string[]> {
  const scope = config.scope.doer_paths.map(normalizeRelativePath);
  const dirty = (await git.statusPorcelain()).filter((entry) =>
    scope.some((dir) => entry.path === dir || entry.path.startsWith(`${dir}/`)),
  );
  if (dirty.length === 0) return [];
  const named = dirty
    .slice(0, 3)
    .map((entry) => entry.path)
    .join(', ');
  return [
    `Uncommitted changes in scope (${named}${dirty.length > 3 ? ', …' : ''}): commit them so the baseline matches HEAD; the arbiter keeps or reverts relative to commits.`,
  ];
}

async function refuseWhenRunning(paths: WorkspacePaths, ports: SetupPorts): Promise<void> {
  const text = await readFileIfExists(paths.lock);
  if (text === undefined) return;
  let pid: unknown;
  try {
    pid = (JSON.parse(text) as { pid?: unknown }).pid;
  } catch {
    return;
  }
  if (typeof pid === 'number' && ports.isProcessAlive(pid)) {
    throw new AppError(
      `A ralph-loop (pid ${pid}) is running the loop in ${paths.root}; it is not replaced.`,
      {
        exitCode: ExitCode.locked,
        hint: 'Stop it first (ralph-loop stop <epic>), or give the new loop its own --workspace.',
      },
    );
  }
}

/**
 * Moves every file of the old loop into `archive/<time>/` (user templates stay), and points the old
 * epic's registry entry there, so its status and history stay readable.
 */
async function archiveLoop(repo: string, paths: WorkspacePaths, now: number): Promise<string> {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  const target = join(paths.root, ARCHIVE_DIR, stamp);
  const oldEpic = await configEpicId(paths.root);
  await mkdir(target, { recursive: true });
  for (const name of await readdir(paths.root)) {
    if (!KEPT_ON_ARCHIVE.has(name)) await rename(join(paths.root, name), join(target, name));
  }
  if (oldEpic !== undefined && (await readLoopsRegistry(repo))[oldEpic] !== undefined) {
    const entry = (await readLoopsRegistry(repo))[oldEpic];
    await registerLoop(repo, oldEpic, {
      workspace: relative(repo, target).split('\\').join('/'),
      ...(entry?.subject === undefined ? {} : { subject: entry.subject }),
      ...(entry?.store === undefined ? {} : { store: entry.store }),
    });
  }
  return target;
}

async function recordHardBaseline(
  ctx: LoopContext,
  output: JudgeOutput,
  at: { head: string; now: string; durationMs: number; tracks: TrackValues },
): Promise<ArbiterSignal> {
  const { config, paths } = ctx;
  await writeJudgeOutput(paths.judgeOutput(0), output);
  const result = decide({
    config,
    ledger: [],
    iter: 0,
    judge: { ok: true, output },
    baseSha: at.head,
    now: at.now,
    durationMs: at.durationMs,
    hypothesis: '',
    ...(output.samples === undefined ? {} : { samples: output.samples }),
    tracks: at.tracks,
  });
  await recordLedgerLine(paths.ledger, result.line, {
    direction: config.metric.direction,
    target: config.target,
  });
  await writeArbiterSignal(paths.root, result.signal);
  return result.signal;
}

function epicDescription(subject: string, workspace: string): string {
  return [
    `Autoresearch loop: ${subject}.`,
    '',
    `Workspace: ${workspace}/ (config.json, program.md, research-log.jsonl). Created by forge-pack loop;`,
    'its beads are stamped cycle by cycle (doer, judge, arbiter, strategist).',
    '',
    'Run it with `ralph-loop <this epic>`; see where it stands with `ralph-loop status <this epic>`.',
  ].join('\n');
}
