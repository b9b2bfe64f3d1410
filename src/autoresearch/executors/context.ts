// What every autoresearch executor needs: the loop's config and workspace, git, and the agent executors.
import { join, relative } from 'node:path';
import type { BeadStore } from '../../beads/types.js';
import type { Clock } from '../../infra/clock.js';
import type { Git } from '../../infra/git.js';
import type { LoopFiles } from '../../infra/loop-files.js';
import type { Command, ProcessResult } from '../../infra/process.js';
import { labelValue } from '../../loop/select.js';
import type { Bead } from '../../beads/types.js';
import type { ExecutionResult, Executor } from '../../loop/types.js';
import type { LoopConfig } from '../config.js';
import type { OutsideWatch } from '../outside-watch.js';
import { iterOf as iterLabel } from '../../infra/labels.js';

export interface MetricRunOptions {
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** The run's environment from the runner's own (the exit watch's preload added); default: the same. */
  withEnv?: (env: Readonly<Record<string, string | undefined>>) => Record<string, string | undefined>;
}

export interface AutoresearchContext {
  /** The repository root the loop works on (the worktree with --worktree). */
  repo: string;
  /**
   * The repository holding the loop's workspace and `.forge/` (the main checkout, also with
   * --worktree): strategists and retrospectives run there, as their prompts name the loop's files
   * relative to it. Default: `repo`.
   */
  stateRepo?: string;
  /** Absolute path of the loop's workspace (`.autoresearch/` by default). */
  workspace: string;
  /** The loop's state files (its workspace, `.forge/loops.json`): on disk, or in memory in tests. */
  files: LoopFiles;
  config: LoopConfig;
  store: BeadStore;
  git: Git;
  /** The runner's environment, where Forge asks what is installed (Python's site-packages). Default: none asked. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A git port for another working tree of the same repository (a population's candidate worktrees). */
  gitAt?: (cwd: string) => Git;
  clock: Clock;
  /** The generic agent executors: full tools, and read-only for judges. */
  agents: { full: Executor; readOnly: Executor };
  /** Runs the user's metric command (an argv array from config, never bead text). */
  runMetric(command: Command, options: MetricRunOptions): Promise<ProcessResult>;
  /**
   * Watches what a metric, guard or track run must leave as it was outside the tree (git's config and
   * hooks, tools' settings, agents' instructions: outside-watch.ts). Without it only the tree is.
   */
  watchOutside?: OutsideWatch;
}

/** Paths the loop's own bookkeeping writes while beads run; never the doer's or judge's doing. */
export function bookkeepingPaths(context: Pick<AutoresearchContext, 'repo' | 'workspace'>): string[] {
  const workspace = relative(context.repo, context.workspace).split('\\').join('/');
  return [workspace === '' ? '.autoresearch' : workspace, '.forge', '.beads'];
}

export function ledgerPath(workspace: string): string {
  return join(workspace, 'research-log.jsonl');
}

export type IterResult = { ok: true; iter: number } | { ok: false; result: ExecutionResult };

/** The bead's `iter:N` label; a bead without one cannot be placed in the loop. */
export function placeInLoop(bead: Bead): IterResult {
  const iter = iterLabel(bead);
  if (iter !== undefined) return { ok: true, iter };
  const value = labelValue(bead, 'iter');
  return {
    ok: false,
    result: {
      outcome: 'error',
      fatal: true,
      message: `Bead ${bead.id} has no valid iter:<N> label (${value ?? 'none'}); autoresearch beads are stamped with one.`,
    },
  };
}
