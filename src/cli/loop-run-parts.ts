// What an autoresearch loop adds to a run of its epic: built-in executors, the idle probe, the state
// guard around every agent, the loop's own wall clock, and the lock that keeps one loop per tree.
import { join } from 'node:path';
import { loadLoopConfig, type LoopConfig } from '../autoresearch/config.js';
import { createAutoresearchExecutors } from '../autoresearch/executors/index.js';
import { createLoopIdleProbe } from '../autoresearch/idle-probe.js';
import { LedgerError } from '../autoresearch/ledger.js';
import { loadLedgerSummary } from '../autoresearch/ledger-summary.js';
import { namedOutsidePaths } from '../autoresearch/outside-data.js';
import { createOutsideWatch } from '../autoresearch/outside-watch.js';
import {
  createLoopBeadGuard,
  guardAgentExecutor,
  type StateGuardContext,
} from '../autoresearch/state-guard.js';
import type { BeadStore } from '../beads/types.js';
import { containmentStatus } from '../infra/containment.js';
import { createGit } from '../infra/git.js';
import { journaledLoopFiles } from '../infra/journaled-loop-files.js';
import type { FileLock } from '../infra/lock-file.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { runWithOwnTemp } from './own-temp-process.js';
import type { BeadGuard, Executor, IdleProbe, LoopEvent } from '../loop/types.js';
import type { CliDeps } from './deps.js';
import { createTreeLock } from './tree-lock.js';
import { findLoopWorkspace } from './epic-dirs.js';
import type { AgentExecutors } from './executors.js';

export interface LoopParts {
  builtins: Record<string, Executor>;
  idle: IdleProbe;
  guard: BeadGuard;
  /** Agents whose every run is watched by the loop's state guard. */
  agents: AgentExecutors;
  /** Epoch ms at which the loop's own wall clock runs out (undefined: no cap, or no baseline yet). */
  deadline: number | undefined;
  /** Holds the working tree for this loop: one loop per tree. */
  treeLock: FileLock;
}

/** The built-in executors, idle probe and state guard of an autoresearch loop, when this epic is one. */
export async function autoresearchParts(
  deps: CliDeps,
  options: {
    repo: string;
    cwd: string;
    epicId: string;
    store: BeadStore;
    agents: AgentExecutors;
    acceptHead: boolean;
    emit: (event: LoopEvent) => void;
  },
): Promise<LoopParts | undefined> {
  const workspace = await findLoopWorkspace(options.repo, options.epicId);
  if (workspace === undefined) return undefined;
  const config = await loadLoopConfig(deps.loopFiles, join(workspace, 'config.json'));
  const git = createGit({ cwd: options.cwd, env: deps.env });
  const safe = options.epicId.replace(/[^A-Za-z0-9._-]/g, '_');
  const vaultDir = join(await git.commonDir(), 'forge', safe);
  // Every write of the loop's guard and executors is announced to the seal first: a crash before the
  // next seal leaves the runner's own writes, never mistaken for tamper on the next start.
  const files = journaledLoopFiles(deps.loopFiles, { dir: vaultDir, repo: options.repo });
  const warn = (message: string): void =>
    options.emit({
      type: 'warning',
      ts: new Date(deps.clock.now()).toISOString(),
      epic: options.epicId,
      message,
    });
  const guardContext: StateGuardContext = {
    repo: options.repo,
    cwd: options.cwd,
    workspace,
    files,
    config,
    epicId: options.epicId,
    store: options.store,
    git,
    now: () => deps.clock.now(),
    vaultDir,
    acceptHead: options.acceptHead,
    env: deps.env,
    gitAt: (cwd) => createGit({ cwd, env: deps.env }),
    warn,
  };
  const agents: AgentExecutors = {
    full: guardAgentExecutor(options.agents.full, guardContext),
    readOnly: guardAgentExecutor(options.agents.readOnly, guardContext),
  };
  const builtins = createAutoresearchExecutors({
    repo: options.cwd,
    stateRepo: options.repo,
    workspace,
    files,
    config,
    store: options.store,
    git,
    env: deps.env,
    gitAt: (cwd) => createGit({ cwd, env: deps.env }),
    clock: deps.clock,
    agents,
    // The metric runs the doer's work: what that starts must not outlive the run (see containment.ts).
    runMetric: (command, run) =>
      runWithOwnTemp(command, {
        cwd: run.cwd,
        env: run.withEnv === undefined ? deps.env : run.withEnv(deps.env),
        timeoutMs: run.timeoutMs,
        signal: run.signal,
        sweep: true,
        contain: true,
      }),
    watchOutside: createOutsideWatch({
      git,
      trees: [options.cwd, options.repo],
      env: deps.env,
      dependencies: {
        ...guardContext,
        allowed: config.scope.doer_paths,
        rebuilt: config.scope.rebuilt_paths,
        outsideData: () => namedOutsidePaths(config, options.cwd, [options.cwd, options.repo], deps.env),
      },
    }),
  });
  const started = await loopStartedAt(deps.loopFiles, workspace, config);
  const cap = config.caps.wall_clock_seconds;
  return {
    builtins,
    idle: createLoopIdleProbe({ repo: options.repo, workspace, files: deps.loopFiles }),
    guard: withContainmentNotice(createLoopBeadGuard(guardContext), warn),
    agents,
    deadline: cap > 0 && started !== undefined ? started + cap * 1000 : undefined,
    treeLock: createTreeLock(await git.gitDir(), deps.host),
  };
}

/**
 * A loop's scores are only as good as the wall around its agents: where agents get no PID namespace,
 * the run says so at its start (in the log, the report and on stderr), with what that leaves open.
 */
function withContainmentNotice(guard: BeadGuard, warn: (message: string) => void): BeadGuard {
  return {
    async start() {
      // The process's own environment, which is what decides for every agent it starts.
      const containment = await containmentStatus();
      if (containment.kind === 'none') {
        warn(
          `Agents run without a PID namespace (${containment.why}): a process an agent hides from the sweep (setsid env -i) can outlive its bead and change what a later bead measures. \`forge-pack doctor\` says how to fix it.`,
        );
      }
      await guard.start();
    },
    beforeBead: (bead, context) => guard.beforeBead(bead, context),
    afterBead: (bead, context) => guard.afterBead(bead, context),
    leftOpen: (bead, context, reason) => guard.leftOpen(bead, context, reason),
  };
}

async function loopStartedAt(
  files: LoopFiles,
  workspace: string,
  config: LoopConfig,
): Promise<number | undefined> {
  const path = join(workspace, 'research-log.jsonl');
  try {
    const { summary } = await loadLedgerSummary(files, path, {
      direction: config.metric.direction,
      target: config.target,
    });
    return summary.first_ts === null ? undefined : Date.parse(summary.first_ts);
  } catch (error) {
    // A line changed between runs (a wrong type, a torn edit) is the guard's to put back from the
    // runner's own copy when the run starts: it must not stop the run before the guard can. The start
    // is the first line's, read loosely; the guard's own check of the cap reads the ledger it restored.
    if (!(error instanceof LedgerError)) throw error;
    return firstLineTime(await files.readIfExists(path));
  }
}

/** The `ts` of a ledger's first line, without checking the rest of it. */
function firstLineTime(text: string | undefined): number | undefined {
  const first = text?.split('\n', 1)[0] ?? '';
  try {
    const ts = (JSON.parse(first) as { ts?: unknown }).ts;
    const time = typeof ts === 'string' ? Date.parse(ts) : Number.NaN;
    return Number.isNaN(time) ? undefined : time;
  } catch {
    return undefined;
  }
}
