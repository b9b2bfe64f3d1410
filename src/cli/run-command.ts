// Wires a real run: options and config → runner ports (store, lock, executors, git, events) → runEpic.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { loadLoopConfig } from '../autoresearch/config.js';
import { createAutoresearchExecutors } from '../autoresearch/executors/index.js';
import { createLoopIdleProbe } from '../autoresearch/idle-probe.js';
import type { BeadStore } from '../beads/types.js';
import { createGit } from '../infra/git.js';
import { runProcess } from '../infra/process.js';
import { createEventLogWriter, createNdjsonStream } from '../infra/event-log.js';
import { AppError, ExitCode, type ExitCodeValue } from '../infra/errors.js';
import { createFileLock } from '../infra/lock-file.js';
import { runEpic } from '../loop/runner.js';
import type {
  Executor,
  ExecutorRegistry,
  IdleProbe,
  LoopEvent,
  RunSummary,
  StopReason,
} from '../loop/types.js';
import type { CliDeps } from './deps.js';
import { openStoreFor, workingDir, type GlobalOptions } from './common.js';
import { findLoopWorkspace, runDirFor } from './epic-dirs.js';
import { createAgentExecutors, createExecutorRegistry, type AgentExecutors } from './executors.js';
import { useColor } from './output.js';
import { createProgressRenderer } from './progress.js';

export interface RunFlags {
  agent?: string;
  timeout?: number;
  wallClock?: number;
  maxBeads?: number;
  maxAttempts?: number;
  backoff?: number;
  autoCommit?: boolean;
  dryRun?: boolean;
  worktree?: boolean;
}

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
};

const HINTS: Partial<Record<StopReason, (epic: string, summary: RunSummary) => string>> = {
  needs_human: (epic) =>
    `Answer the question in the loop's needs-human.md, then run: ralph-loop resume ${epic}`,
  stalled: (epic) => `See what blocks them: forge-pack beads show <id>; or run: ralph-loop ${epic} --dry-run`,
  failed: (epic, s) =>
    `Read the transcript (ralph-loop logs ${epic} ${s.beadId ?? ''}), fix the cause, then run again: the bead is still open.`,
  auth: () =>
    "Check the agent's credentials (claude: ANTHROPIC_API_KEY or `claude login`; codex: OPENAI_API_KEY or `codex login`), then run again.",
};

/** The built-in executors and idle probe of an autoresearch loop, when this epic is one. */
async function autoresearchParts(
  deps: CliDeps,
  options: { repo: string; cwd: string; epicId: string; store: BeadStore; agents: AgentExecutors },
): Promise<{ builtins: Record<string, Executor>; idle: IdleProbe } | undefined> {
  const workspace = await findLoopWorkspace(options.repo, options.epicId);
  if (workspace === undefined) return undefined;
  const config = await loadLoopConfig(join(workspace, 'config.json'));
  const builtins = createAutoresearchExecutors({
    repo: options.cwd,
    workspace,
    config,
    store: options.store,
    git: createGit({ cwd: options.cwd, env: deps.env }),
    clock: deps.clock,
    agents: options.agents,
    runMetric: (command, run) =>
      runProcess(command, { cwd: run.cwd, env: deps.env, timeoutMs: run.timeoutMs, signal: run.signal }),
  });
  return { builtins, idle: createLoopIdleProbe({ repo: options.repo, workspace }) };
}

export async function runLoopCommand(
  deps: CliDeps,
  options: GlobalOptions,
  epicId: string,
  flags: RunFlags,
  onlyBead?: string,
): Promise<void> {
  const repo = workingDir(deps, options);
  const { config, opened } = await openStoreFor(deps, { ...options, actor: options.actor ?? 'ralph-loop' });
  const runDir = await runDirFor(repo, epicId);
  const runId = `${new Date(deps.clock.now()).toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  const cwd = flags.worktree ? await deps.prepareWorktree(repo, epicId) : repo;
  const git = await deps.createRunnerGit(cwd);

  const log = flags.dryRun ? undefined : createEventLogWriter(runDir.eventLogPath(runId));
  const stream = options.json ? createNdjsonStream(deps.stdout) : undefined;
  const progress = createProgressRenderer({
    sink: deps.stderr,
    tty: deps.stderrIsTTY,
    color: useColor(deps),
    now: () => deps.clock.now(),
  });
  const emit = (event: LoopEvent): void => {
    log?.write(event);
    stream?.write(event);
    progress.render(event);
  };

  const controller = new AbortController();
  const stopListening = deps.onInterrupt((count) => {
    if (count === 1) {
      deps.stderr.write(
        '\nStopping: the current bead is being stopped and left open (Ctrl-C again to quit now).\n',
      );
      controller.abort();
    } else {
      deps.exitNow(ExitCode.interrupted);
    }
  });

  const agentDefault = flags.agent ?? config.agents.default ?? 'claude';
  const agents = createAgentExecutors(deps.agentFactory, deps.env);
  const loop = await autoresearchParts(deps, { repo, cwd, epicId, store: opened.store, agents });
  const executors: ExecutorRegistry = createExecutorRegistry(agents, loop?.builtins);
  let summary: RunSummary;
  try {
    summary = await runEpic(
      {
        epicId,
        cwd,
        runId,
        pid: deps.pid,
        host: deps.host,
        defaultAgent: agentDefault,
        roleAgents: config.agents,
        beadTimeoutMs: (flags.timeout ?? config.runner.bead_timeout_seconds ?? 1800) * 1000,
        wallClockMs: (flags.wallClock ?? 0) * 1000,
        maxBeads: flags.maxBeads ?? 0,
        maxAttempts: flags.maxAttempts ?? config.runner.max_attempts ?? 3,
        backoffMs: (flags.backoff ?? 10) * 1000,
        maxBackoffMs: 10 * 60 * 1000,
        autoCommit: flags.autoCommit ?? config.runner.auto_commit ?? false,
        dryRun: flags.dryRun === true,
        signal: controller.signal,
        ...(onlyBead === undefined ? {} : { onlyBead }),
      },
      {
        store: opened.store,
        executors,
        lock: createFileLock({ path: runDir.lockPath, host: deps.host }),
        control: runDir,
        git,
        ...(loop === undefined ? {} : { idle: loop.idle }),
        clock: deps.clock,
        emit,
      },
    );
  } finally {
    stopListening();
    progress.stop();
    await log?.flush();
  }

  const exitCode = STOP_EXIT_CODES[summary.reason];
  if (exitCode === ExitCode.ok) {
    deps.stderr.write(`${summary.message}\n`);
  } else {
    const hint = HINTS[summary.reason]?.(epicId, summary);
    throw new AppError(summary.message, { exitCode, ...(hint === undefined ? {} : { hint }) });
  }
}
