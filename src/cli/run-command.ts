// Wires a real run: options and config → runner ports (store, lock, executors, git, events) → runEpic.
import { randomBytes } from 'node:crypto';
import { createEventLogWriter, createNdjsonStream, describeRestoredLog } from '../infra/event-log.js';
import { containmentStatus, refuseUncontainedRun } from '../infra/containment.js';
import { AppError, EnvironmentError, ExitCode, type ExitCodeValue } from '../infra/errors.js';
import { createFileLock } from '../infra/lock-file.js';
import { claimHost } from '../infra/host-claim.js';
import { withRunMark } from '../infra/run-marks.js';
import { withStopSignal } from '../infra/stop-scope.js';
import { sizeLimitsOf } from '../infra/size-limits.js';
import type { RunDir } from '../infra/run-dir.js';
import { refuseUncommittableTree } from '../loop/preflight.js';
import { runEpic } from '../loop/runner.js';
import type {
  ControlFiles,
  EpicLock,
  ExecutorRegistry,
  LoopEvent,
  RunSummary,
  StopReason,
} from '../loop/types.js';
import { agentSpecFor, DEFAULT_ROLE } from '../loop/select.js';
import { preloadAgent } from './agent-factory.js';
import { runAgentChoices } from './agent-options.js';
import type { GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import { createAgentExecutors, createExecutorRegistry } from './executors.js';
import { configuredGates } from './config-gates.js';
import { createGateProcess } from './gate-process.js';
import { createSyncBack } from './import-sync-back.js';
import { useColor } from './output.js';
import { queueOptions } from './queue-options.js';
import { deadlineOf, nestedFlags, pipelineBuiltins } from './pipeline-run.js';
import { createProgressRenderer } from './progress.js';
import { checkRunTarget, readRunGraph } from './run-target.js';
import { startRunReads, type RunReads } from './run-start.js';
import { refuseParallelMisuse, type RunFlags } from './run-flags.js';

/** Exit code for each way a run can end. */
export const STOP_EXIT_CODES: Record<StopReason, ExitCodeValue> = {
  done: ExitCode.ok,
  terminal: ExitCode.ok,
  dry_run: ExitCode.ok,
  max_beads: ExitCode.ok,
  stopped: ExitCode.ok,
  wall_clock: ExitCode.ok,
  needs_human: ExitCode.needsHuman,
  stalled: ExitCode.stalled,
  failed: ExitCode.beadFailed,
  auth: ExitCode.auth,
  interrupted: ExitCode.interrupted,
  refused: ExitCode.environment,
  environment: ExitCode.environment,
};

const HINTS: Partial<Record<StopReason, (epic: string, summary: RunSummary) => string | undefined>> = {
  needs_human: (epic) =>
    `Answer the question in the loop's needs-human.md, then run: ralph-loop resume ${epic}`,
  stalled: (epic) => `See what blocks them: forge-pack beads show <id>; or run: ralph-loop ${epic} --dry-run`,
  failed: (epic, s) =>
    `Read the transcript (ralph-loop logs ${epic} ${s.beadId ?? ''}), fix the cause, then run again: the bead is still open.`,
  environment: (epic) =>
    `Nothing is wrong with the bead (left open, not labelled): fix that, then run again: ralph-loop ${epic}`,
  auth: () =>
    "Check the agent's credentials (claude: ANTHROPIC_API_KEY or `claude login`; codex: OPENAI_API_KEY or `codex login`), then run again.",
};

/** What to tell the user after a run that stopped short, if anything beyond its message. */
export function stopHint(epicId: string, summary: RunSummary): string | undefined {
  // A stop whose executor said what comes next (a pipeline's stage: run the pipeline again, or resume
  // it) gets that, not the reason's: the loop's hint sent a user to a needs-human.md that was not there.
  if (summary.hint !== undefined) return summary.hint === '' ? undefined : summary.hint;
  return HINTS[summary.reason]?.(epicId, summary);
}

/** A stop request counts for the run it names; one left for a run that has ended is dropped, said so. */
function stopControl(runDir: RunDir, runId: string): ControlFiles {
  return {
    transcriptPath: (beadId) => runDir.transcriptPath(beadId),
    transcriptRoot: runDir.trustedRoot,
    clearStop: () => runDir.clearStop(),
    stopRequested: async () => (await runDir.readStop())?.run_id === runId,
    async dropStaleStop() {
      const request = await runDir.readStop();
      if (request === undefined || request.run_id === runId) return undefined;
      await runDir.clearStop();
      return `requested at ${request.requested_at} by ${request.by}`;
    },
    treeBefore: () => runDir.readTreeBefore(),
    noteTreeBefore: (bead, dirty) => runDir.writeTreeBefore({ bead, dirty }),
    async clearTreeBefore(bead) {
      if ((await runDir.readTreeBefore())?.bead === bead) await runDir.clearTreeBefore();
    },
  };
}

export async function runLoopCommand(
  deps: CliDeps,
  options: GlobalOptions,
  epicId: string,
  flags: RunFlags,
  onlyBead?: string,
  started?: RunReads,
): Promise<void> {
  const { summary, exitCode } = await runEpicCommand(deps, options, epicId, flags, { onlyBead, started });
  if (exitCode === ExitCode.ok) {
    deps.stderr.write(`${summary.message}\n`);
  } else {
    const hint = stopHint(epicId, summary);
    throw new AppError(summary.message, { exitCode, hint });
  }
}

/**
 * One run of an epic, wired to the real ports, and how it ended. A pipeline's stage runs its epic
 * through this too, nested in the pipeline's run: `parentSignal` is that run's interrupt.
 */
export async function runEpicCommand(
  deps: CliDeps,
  options: GlobalOptions,
  epicId: string,
  flags: RunFlags,
  how: {
    onlyBead?: string | undefined;
    parentSignal?: AbortSignal | undefined;
    /** The run's first reads, when the command started them before this module loaded (run-start.ts). */
    started?: RunReads | undefined;
  } = {},
): Promise<{ summary: RunSummary; exitCode: ExitCodeValue }> {
  const { onlyBead } = how;
  // The store (its config, br's version), git and the run directory are asked side by side (each may
  // start a process); a failure is still reported in this order.
  const reads = how.started ?? startRunReads(deps, options, epicId, flags);
  const {
    repo,
    validate,
    runDir: runDirAsked,
    loop: loopAsked,
    lockFree: lockFreeAsked,
    store: storeAsked,
  } = reads;
  // A bad config is reported first, as when it was read before anything else.
  const configFirst = <T>(asked: Promise<T>): Promise<T> =>
    asked.catch(async (error: unknown) => {
      await storeAsked.config;
      throw error;
    });
  const opened = await configFirst(storeAsked.opened);
  // git is asked once the store's first calls are out (its processes would hold them up).
  const gitAsked = deps.createRunnerGit(repo);
  gitAsked.catch(() => undefined);
  // Check what was asked for before creating anything: a mistyped or refused run leaves no trace.
  const runDir = await configFirst(runDirAsked);
  const lockFreeBefore = await configFirst(lockFreeAsked);
  // The first pick's ready read goes beside the epic's: a run that starts takes it
  // (RunnerOptions.readyAtStart), one refused meanwhile has only read. Not for a loop: its guard acts
  // before the first pick, so the runner would read again.
  const plainEpic = (await configFirst(loopAsked)) === undefined;
  const readyAtStart =
    lockFreeBefore && onlyBead === undefined && flags.dryRun !== true && plainEpic
      ? opened.store.ready(epicId, { recursive: true })
      : undefined;
  readyAtStart?.catch(() => undefined);
  const repoGit = await gitAsked;
  const config = await storeAsked.config;
  const choices = runAgentChoices(flags, config);
  const parallel = flags.parallel ?? config.runner.parallel ?? 1;
  const queue = queueOptions(flags);
  // Through the queue every attempt is dispatched and merged back, as a parallel one is.
  const dispatched = parallel > 1 || queue !== undefined;
  // A parallel bead's result is a commit (cherry-picked onto the branch): --parallel implies --auto-commit.
  const autoCommit = dispatched || (flags.autoCommit ?? config.runner.auto_commit ?? false);
  // The work tree's check, made while br answers; its refusal still comes after every check below. Not
  // for a loop, whose set-up below comes first, nor in a worktree made below.
  const treeChecked =
    flags.dryRun === true || flags.worktree === true || !plainEpic
      ? undefined
      : refuseUncommittableTree(
          { cwd: repo, autoCommit, allowDirty: flags.allowDirty === true },
          repoGit,
          runDir.readTreeBefore(),
        );
  treeChecked?.catch(() => undefined);
  // What the run needs next loads while br answers those reads (loading it sooner would hold up the
  // calls themselves): validation's module and the default agent's adapter.
  const validation = validate ? import('./validate-epic.js') : undefined;
  validation?.catch(() => undefined);
  if (flags.dryRun !== true) {
    preloadAgent(agentSpecFor({ labels: [] }, DEFAULT_ROLE, choices).spec, config.agent_commands);
    // What agents run in is probed once, by running `unshare … true`: now, beside br's calls, rather
    // than between the first claim and its agent.
    containmentStatus().catch(() => undefined);
  }
  const early = reads.early();
  const ownRead = early?.store === opened.store ? early.graph : undefined;
  const graph = validate ? await (ownRead ?? readRunGraph(opened.store, epicId)) : undefined;
  await checkRunTarget(opened.store, epicId, {
    dir: repo,
    inGitRepo: repoGit !== undefined,
    onlyBead,
    graph,
  });
  if (validate) {
    const { refuseInvalidEpic } = await (validation ?? import('./validate-epic.js'));
    await refuseInvalidEpic({
      epicId,
      onlyBead,
      repo,
      store: opened.store,
      config,
      env: deps.env,
      files: deps.loopFiles,
      agentOverride: flags.agent !== undefined,
      gates: flags.gates,
      warn: (line) => deps.stderr.write(`${line}\n`),
      ...(graph === undefined ? {} : { graphs: [graph] }),
    });
  }
  refuseParallelMisuse(dispatched ? Math.max(parallel, 2) : 1, flags, repo, repoGit !== undefined);
  if (flags.dryRun !== true) await refuseUncontainedRun();
  if (autoCommit && repoGit === undefined && !flags.dryRun) {
    throw new EnvironmentError(`--auto-commit needs a git repository, and ${repo} is not one.`, {
      hint: 'Run it in your project (or pass -C <dir>), or drop --auto-commit (and runner.auto_commit).',
    });
  }
  const runId = `${new Date(deps.clock.now()).toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  const cwd = flags.worktree
    ? await deps.prepareWorktree(repo, epicId, (text) => deps.stderr.write(`warning: ${text}\n`))
    : repo;
  const git = flags.worktree ? await deps.createRunnerGit(cwd) : repoGit;

  const log = flags.dryRun
    ? undefined
    : createEventLogWriter(runDir.eventLogPath(runId), runDir.trustedRoot, (path, event) =>
        deps.stderr.write(`warning: ${describeRestoredLog(path, event)}\n`),
      );
  const stream = options.json ? await createNdjsonStream(deps.stdout) : undefined;
  const progress = createProgressRenderer({
    sink: deps.stderr,
    tty: deps.stderrIsTTY,
    color: useColor(deps),
    now: () => deps.clock.now(),
  });
  // Beads imported with --sync-back mark their source item done as they close (never fails a bead).
  const syncBack = flags.dryRun
    ? undefined
    : createSyncBack({ repo, epicId, now: () => deps.clock.now(), emit: (e) => emit(e) });
  const emit = (event: LoopEvent): void => {
    log?.write(event);
    stream?.write(event);
    progress.render(event);
    syncBack?.onEvent(event);
  };

  // The live agent's process group, seen through the lock updates (a parallel run's agents, through
  // agentGroups): a second Ctrl-C kills them first.
  let agentPid: number | undefined;
  const agentGroups = new Set<number>();
  // A runner killed outright leaves its agents running; the next run's takeover ends them by this run's
  // mark, which every agent, gate and metric run of the run carries (withRunMark below).
  const fileLock = createFileLock({
    path: runDir.lockPath,
    host: deps.host,
    claimHost,
    // Loaded only for a takeover: process.js brings execa, which a run loads after its store opens.
    endRun: async (deadRunId) =>
      (await import('../infra/process.js')).sweepMarkedProcesses(deadRunId, { graceMs: 0 }),
  });
  const lock: EpicLock = {
    path: fileLock.path,
    acquire: (holder) => fileLock.acquire(holder),
    release: () => fileLock.release(),
    update: (patch, how) => {
      if ('agent_pid' in patch) agentPid = patch.agent_pid;
      return fileLock.update(patch, how);
    },
  };

  const controller = new AbortController();
  const parentSignal = how.parentSignal;
  if (parentSignal !== undefined) {
    if (parentSignal.aborted) controller.abort();
    else parentSignal.addEventListener('abort', () => controller.abort(), { once: true });
  }
  const stopListening = deps.onInterrupt((count) => {
    if (count === 1) {
      deps.stderr.write(
        '\nStopping: the current bead is being stopped and left open (Ctrl-C again to quit now).\n',
      );
      controller.abort();
    } else {
      // Quit now, but never leave the agent working on alone.
      for (const pid of new Set([...(agentPid === undefined ? [] : [agentPid]), ...agentGroups])) {
        deps.killProcessGroup(pid);
      }
      deps.exitNow(ExitCode.interrupted);
    }
  });

  // The user's own named agents (config `agent_commands`) resolve wherever a name is accepted, labels too.
  const commands = config.agent_commands;
  const plainAgents = createAgentExecutors(
    (spec, how) => deps.agentFactory(spec, { ...how, commands }),
    deps.env,
  );
  // Only a loop loads the autoresearch executors, the state guard and their schemas.
  const loopParts = (await loopAsked) === undefined ? undefined : await import('./loop-run-parts.js');
  const loop = await loopParts?.autoresearchParts(deps, {
    repo,
    cwd,
    epicId,
    store: opened.store,
    agents: plainAgents,
    acceptHead: flags.acceptHead === true,
    emit,
  });
  // A pipeline's parent: its stage beads (role:loop) run their stage's epic nested in this run.
  const deadline = deadlineOf(deps, flags);
  const stages =
    loop === undefined
      ? await pipelineBuiltins(deps, options, flags, {
          repo,
          epicId,
          store: opened.store,
          config,
          runNested: (stageEpic, signal) =>
            runEpicCommand(deps, options, stageEpic, nestedFlags(flags, deadline, deps), {
              parentSignal: signal,
            }).then((r) => r.summary),
        })
      : undefined;
  const executors: ExecutorRegistry = createExecutorRegistry(
    loop?.agents ?? plainAgents,
    loop?.builtins ?? stages,
  );
  // The loop's own wall clock holds mid-bead like --wall-clock: the run ends when either runs out.
  // (Already spent: the loop's guard ends the run before any agent starts, and says why.)
  const loopLeft =
    loop?.deadline === undefined || loop.deadline <= deps.clock.now()
      ? undefined
      : loop.deadline - deps.clock.now();
  const flagWallClock = (flags.wallClock ?? 0) * 1000;
  const wallClockMs =
    loopLeft === undefined ? flagWallClock : flagWallClock > 0 ? Math.min(flagWallClock, loopLeft) : loopLeft;
  // A run that commits holds its working tree: a loop always, a plain epic with --auto-commit or
  // --parallel (tree-lock.ts). Taken once the run's own checks have passed, released at its end.
  const treeLock = flags.dryRun
    ? undefined
    : (loop?.treeLock ??
      (autoCommit && git !== undefined
        ? await (await import('./tree-lock.js')).plainTreeLock(cwd, deps)
        : undefined));
  if (treeLock !== undefined) {
    const { holdTree } = await import('./tree-lock.js');
    await holdTree(treeLock, epicId, deps, runId);
  }
  // The run's interrupt reaches the waits inside the store too: a lock that will not come free must not
  // hold a stop for its whole wait, write after write.
  const inRun = <T>(work: () => Promise<T>): Promise<T> =>
    withStopSignal(controller.signal, () => withRunMark(runId, work));
  let summary: RunSummary;
  try {
    summary = await inRun(async () =>
      runEpic(
        {
          epicId,
          cwd,
          runId,
          pid: deps.pid,
          host: deps.host,
          agents: choices,
          beadTimeoutMs: (flags.timeout ?? config.runner.bead_timeout_seconds ?? 1800) * 1000,
          wallClockMs,
          maxBeads: flags.maxBeads ?? 0,
          maxAttempts: flags.maxAttempts ?? config.runner.max_attempts ?? 3,
          backoffMs: (flags.backoff ?? 10) * 1000,
          maxBackoffMs: 10 * 60 * 1000,
          autoCommit,
          sizeLimits: sizeLimitsOf(config.runner),
          // The flag wins over the config; left undefined by commander unless given.
          ...((flags.gates ?? config.runner.run_gates ?? true)
            ? { gates: { commands: configuredGates(config) } }
            : {}),
          allowDirty: flags.allowDirty === true,
          dryRun: flags.dryRun === true,
          signal: controller.signal,
          onlyBead,
          ...(lockFreeBefore && graph !== undefined ? { beadsAtStart: graph.beads, readyAtStart } : {}),
          ...(flags.dryRun === true ? { graphAtStart: graph } : {}),
          treeCheckedAtStart: treeChecked,
        },
        {
          store: opened.store,
          executors,
          lock,
          control: stopControl(runDir, runId),
          git,
          gateProcess: createGateProcess(deps.env),
          agentGroups,
          ...(dispatched && !flags.dryRun
            ? await (
                await import('./parallel-ports.js')
              ).parallelPorts(cwd, deps.env, parallel, executors, queue, commands)
            : {}),
          idle: loop?.idle,
          guard: loop?.guard,
          clock: deps.clock,
          emit,
        },
      ),
    );
  } finally {
    await syncBack?.settle();
    stopListening();
    progress.stop();
    syncBack?.report(deps.stderr);
    await treeLock?.release();
    await log?.flush();
  }

  const exitCode = STOP_EXIT_CODES[summary.reason];
  // Loops get their morning report by default; a plain epic's costs a few more store reads at the end,
  // so it is written only when asked (`ralph-loop report <epic>` writes one at any time).
  if (!flags.dryRun && (flags.report ?? loop !== undefined)) {
    const { writeRunReport } = await import('./report-command.js');
    await writeRunReport(deps, repo, epicId, opened.store);
  }
  // A stage's run is part of its pipeline's: the hooks run once, for the pipeline's run.
  if (!flags.dryRun && how.parentSignal === undefined) {
    const { runHooks } = await import('./hooks.js');
    const ran = await runHooks({
      hooks: config.hooks,
      summary,
      epicId,
      runId,
      exitCode,
      cwd: repo,
      env: deps.env,
    });
    for (const hook of ran) {
      if (!hook.ok)
        deps.stderr.write(
          `warning: the ${hook.event} hook (${hook.argv.join(' ')}) ${hook.problem ?? 'failed'}\n`,
        );
    }
  }
  return { summary, exitCode };
}
