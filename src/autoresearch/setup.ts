// `forge-pack loop`: validates a new loop, writes its workspace, creates and registers its epic,
// records the baseline and stamps cycle 1. Takes its ports as arguments; knows no CLI.
import { join, resolve } from 'node:path';
import type { BeadStore } from '../beads/types.js';
import { AppError, ExitCode, EnvironmentError, UsageError } from '../infra/errors.js';
import type { Git } from '../infra/git.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { parseLoopConfig, type LoopConfig } from './config.js';
import { snapshotIgnored } from './dependency-guard.js';
import { fingerprintOutside, namedOutsidePaths } from './outside-data.js';
import { watchOutputs } from './run-outputs.js';
import { watchBaselineExits, type WatchedRun } from './baseline-exits.js';
import { runAnswerProbe, type AnswerProbe, type StubbedCheckout } from './answer-probe.js';
import { artifactSpeaksToModels } from './judge-address.js';
import { checkBaseline } from './guard-setup.js';
import { updateIterationState } from './iteration-state.js';
import { LOOP_LABEL, type StampedBead } from './loop-beads.js';
import type { LoopContext } from './loop-context.js';
import { recordHead } from './loop-head.js';
import { ARCHIVE_DIR, archiveLoop } from './setup-archive.js';
import { measureHardBaseline, recordHardBaseline, type MeasuredBaseline } from './setup-baseline.js';
import {
  checkContainment,
  checkLayout,
  checkTestsOutOfScope,
  ignoredInScope,
  refuseWhenRunning,
  uncommittedInScope,
} from './setup-checks.js';
import { buildConfigFile, type LoopSetupOptions } from './setup-options.js';
import type { ArbiterSignal } from './signals.js';
import { stampIteration, stampSoftBaseline } from './stamp.js';
import { configEpicId, registerLoop, resolveWorkspaceDir, workspacePaths } from './workspace.js';

export interface SetupPorts {
  store: BeadStore;
  git: Pick<Git, 'headSha' | 'statusPorcelain' | 'headState' | 'topLevel' | 'ignoredPaths' | 'listTree'>;
  /**
   * Runs the hard metric command (argv, no shell) in `cwd`, killed after `timeoutMs`; with
   * `watchExits`, under the exit watch's preload, as the loop's runs will be (what it costs a Node
   * process to start is then in the baseline too), with the exits it logged.
   */
  runMetric: WatchedRun;
  /** A throwaway checkout of HEAD with some files replaced, for the answer probe; none: no probe. */
  checkout?: StubbedCheckout | undefined;
  /** Where a line on what setup is doing goes as it starts a step that takes time (a person's terminal). */
  progress?: ((line: string) => void) | undefined;
  now(): number;
  /** This machine's host name: a runner's lock taken on another host cannot be checked by pid. */
  host: string;
  isProcessAlive(pid: number): boolean;
  /** The loop's state files (its workspace, `.forge/loops.json`): on disk, or in memory in tests. */
  files: LoopFiles;
  /** The environment the commands run with: a script's `~/data` or `$DATA_DIR/x` is read from it (outside-data.ts). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
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
  archived?: string | undefined;
  /** Things the user should know; nothing was refused for them. */
  warnings: string[];
  /**
   * The files the baseline's runs made or wrote that git ignores, or outside the repository (a build's
   * output, a results file): later runs may write them; every other such file is held (measured-data.ts).
   */
  run_outputs: string[];
  /** The answer probe's finding, when it ran (answer-probe.ts). */
  answer_probe?: AnswerProbe;
}

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
  await checkTestsOutOfScope(repo, config);
  const warnings: string[] = [];
  const { files } = ports;
  if (config.metric.type === 'soft') {
    if ((await files.readIfExists(resolve(repo, config.metric.rubric_path))) === undefined) {
      throw new UsageError(`The rubric ${config.metric.rubric_path} does not exist.`, {
        hint: 'Write the rubric first: every judge scores the artifact against it.',
      });
    }
    if (!(await files.exists(resolve(repo, config.metric.artifact_path)))) {
      warnings.push(
        `The artifact ${config.metric.artifact_path} does not exist yet: the baseline judge will score its absence.`,
      );
    }
  }

  // A workspace holds a loop when it has a config, or a ledger with lines: neither is overwritten.
  const occupied =
    (await files.readIfExists(paths.config)) !== undefined ||
    ((await files.readIfExists(paths.ledger)) ?? '').trim() !== '';
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
  if (occupied) await refuseWhenRunning(files, paths, ports);

  let head: string;
  try {
    head = await ports.git.headSha();
  } catch (error) {
    throw new EnvironmentError('forge-pack loop needs a git repository with at least one commit.', {
      hint: 'Run it in the repository the loop improves (git init && git commit first); the arbiter keeps and reverts with git.',
      cause: error,
    });
  }
  // A scope that names nothing there yet: a typo reverts every doer's change as out of scope all night.
  for (const path of config.scope.doer_paths) {
    if (!(await files.exists(resolve(repo, path))))
      warnings.push(
        `The scope ${path} does not exist in the repository: a doer may create it, but every change it makes elsewhere is reverted as out of scope (check the path for a typo).`,
      );
  }
  warnings.push(...(await uncommittedInScope(ports.git, config)));
  warnings.push(...(await ignoredInScope(ports.git, config)));
  warnings.push(...(await artifactSpeaksToModels(files, repo, config)));

  // A hard baseline is measured before anything is created: a metric that cannot be read fails here,
  // with nothing to clean up, rather than as a loop without a baseline.
  let measured: MeasuredBaseline | undefined;
  // The longest of its runs: the answer probe's runs get a few times that, not the whole timeout.
  let metricMs = 0;
  const exits = watchBaselineExits(config, repo, ports.runMetric);
  // What the baseline's runs write of the files the commands name is their build's (run-outputs.ts).
  const outputs = watchOutputs(config, repo, ports.git, async () => {
    const ignored = await snapshotIgnored({
      cwd: repo,
      git: ports.git,
      vaultDir: '',
      workspace: paths.root,
      outside: false,
    });
    if (ignored === undefined) return undefined;
    // And the data outside the repository the commands name: what the baseline writes there is its output.
    return new Map([
      ...ignored.others,
      ...fingerprintOutside(await namedOutsidePaths(config, repo, [repo], ports.env)),
    ]);
  });
  const runBaseline: typeof exits.run = async (argv, run) => {
    await outputs.before();
    try {
      return await exits.run(argv, run);
    } finally {
      await outputs.after({ written: true });
    }
  };
  if (config.metric.type === 'hard') {
    measured = await measureHardBaseline(repo, config.metric, async (argv, run) => {
      const result = await runBaseline(argv, run);
      metricMs = Math.max(metricMs, result.durationMs);
      return result;
    });
  }

  // Guards and tracks are measured on the baseline before anything is created, like the metric.
  const {
    tracks: baselineTracks,
    guardTests,
    trackTests,
  } = await checkBaseline(config, {
    cwd: repo,
    run: (command, run) => runBaseline([command.file, ...command.args], run),
  });
  exits.check();

  // Whether the metric looks at what the code answers: one more run, on the scope answering nothing.
  // Said to the user only, never written where agents read (the ledger, the workspace): it would tell
  // a doer what the metric does not check.
  let answerProbe: AnswerProbe | undefined;
  if (
    measured !== undefined &&
    config.metric.type === 'hard' &&
    ports.checkout !== undefined &&
    options.answerProbe !== false
  ) {
    const probed = await runAnswerProbe({
      repo,
      config: { ...config, metric: config.metric },
      baseline: measured.output.score,
      baselineMs: metricMs,
      runMetric: ports.runMetric,
      checkout: ports.checkout,
      progress: ports.progress,
      scopeFiles: async () =>
        (await ports.git.listTree('HEAD', config.scope.doer_paths))
          .filter((entry) => entry.type === 'blob' && entry.mode !== '120000')
          .map((entry) => entry.path),
    });
    answerProbe = probed.probe;
    warnings.push(...probed.warnings);
  }

  let archived: string | undefined;
  if (occupied) archived = await archiveLoop(files, repo, paths, ports.now());

  const epic = await ports.store.create({
    title: `autoresearch: ${config.subject}`,
    type: 'epic',
    labels: [LOOP_LABEL],
    description: epicDescription(config.subject, ws.relative),
  });
  const { epic_id: _ignored, ...rest } = configFile;
  await files.writeText(
    paths.program,
    options.program.endsWith('\n') ? options.program : `${options.program}\n`,
  );
  if ((await files.readIfExists(paths.ledger)) === undefined) await files.writeText(paths.ledger, '');
  // The loop's record (config, program, ledger, signals, directives) may be committed; the runner's
  // working files may not, or a doer's commit or a judge's tree check would trip over them.
  if ((await files.readIfExists(join(paths.root, '.gitignore'))) === undefined) {
    await files.writeText(join(paths.root, '.gitignore'), WORKSPACE_GITIGNORE);
  }
  // config.json last: its presence is what marks the workspace as holding a loop.
  const { subject, ...others } = rest;
  await files.writeJson(paths.config, { subject, epic_id: epic.id, ...others });
  await registerLoop(repo, epic.id, {
    workspace: ws.relative,
    subject: config.subject,
    store: ports.store.kind,
  });
  // The branch and commit the loop starts on: a HEAD moved by anyone but a doer stops it later.
  await recordHead(files, paths.root, ports.git);

  const ctx: LoopContext = {
    repo,
    paths,
    workspace: ws.relative,
    config: { ...config, epic_id: epic.id },
    files: ports.files,
    epicId: epic.id,
    storeKind: ports.store.kind,
  };
  // The floor of each guard's passed tests, for the loop's guard step, and of the metric's and the
  // tracks' tests (a baseline that counted none holds nothing to a count).
  const metricTests = measured?.tests === 0 ? undefined : measured?.tests;
  const trackFloors = Object.fromEntries(Object.entries(trackTests).filter(([, tests]) => tests > 0));
  const floors = {
    ...(Object.keys(guardTests).length > 0 ? { guard_tests: guardTests } : {}),
    ...(metricTests === undefined ? {} : { metric_tests: metricTests }),
    ...(Object.keys(trackFloors).length > 0 ? { track_tests: trackFloors } : {}),
  };
  // Recorded even when there are none: a loop without the record is one made before it (run-outputs.ts).
  await updateIterationState(ports.files, paths.root, 0, (s) => ({
    ...s,
    ...floors,
    run_outputs: outputs.found(),
  }));
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
      await updateIterationState(ports.files, paths.root, 0, (s) => ({ ...s, tracks: baselineTracks }));
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
    archived,
    warnings,
    run_outputs: outputs.found(),
    ...(answerProbe === undefined ? {} : { answer_probe: answerProbe }),
  };
}

/** The runner's working files in a workspace, kept out of git. */
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
  'report.html',
  '*.tmp',
  '',
].join('\n');

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
