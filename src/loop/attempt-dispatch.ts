// Where a bead attempt runs. The runner stays the only writer of the bead graph and the ledger: it
// claims a bead, hands one attempt of it to a dispatcher, and merges what comes back. A dispatcher runs
// the attempt in the runner's own tree (serial, today's behaviour), in a worktree of this machine
// (`--parallel N`), or on a worker elsewhere (`--executor queue`); it never claims, closes or comments.
import type { Bead } from '../beads/types.js';
import type { OverLimit, SizeLimits } from '../infra/size-limits.js';
import type { ExecutionResult } from './types.js';

/** One attempt of one bead, as data: everything a worker needs, nothing secret (workers use their own env). */
export interface AttemptJob {
  /**
   * `<runId>.<beadId>.<attempt>`: the idempotency key. A dispatcher asked twice for the same id runs it
   * at most once and answers both with the same result.
   */
  attemptId: string;
  epicId: string;
  /** The bead as the store listed it when it was claimed. */
  bead: Bead;
  role: string;
  /** Agent spec (from the bead's label, the role default or the run default); never a shell command. */
  agentSpec: string;
  /** The spec came from a bead label (agent-written text). */
  agentFromLabel: boolean;
  attempt: number;
  /** What the last attempt left red (a gate's output, a merge conflict), for the prompt. */
  feedback?: string | undefined;
  timeoutMs: number;
  budgetUsd?: number | undefined;
  /** The commit the attempt starts from: the integration branch's head when it was handed out. */
  base: string;
  /** The branch the attempt's changes are committed to (`forge/attempts/<epic>/<bead>-<attempt>`). */
  branch: string;
  /** What the attempt's commit may hold; files past it are left out (size-limits.ts). */
  sizeLimits?: SizeLimits | undefined;
}

/** What an attempt produced: the execution result, and the commit holding its changes. */
export interface AttemptResult extends ExecutionResult {
  /** A commit on `job.branch` whose parent is `job.base`, or undefined when the attempt changed nothing. */
  commit?: string | undefined;
  /** Who ran it, for logs and status: `local`, or a worker's `host:pid`. */
  worker?: string | undefined;
  /** Files the attempt left past `job.sizeLimits`, not in its commit. */
  tooLarge?: OverLimit[] | undefined;
}

/** What the runner passes along with a job; none of it travels to another machine. */
export interface AttemptHooks {
  /** Aborts the attempt (stop, wall clock, SIGINT): the dispatcher kills the agent's process group. */
  signal: AbortSignal;
  /** Where the attempt's transcript ends up on this machine. */
  transcriptPath: string;
  transcriptRoot?: string | undefined;
  onActivity?: ((message: string) => void) | undefined;
  onSpawn?: ((pid: number) => void) | undefined;
}

/** A place attempts run: the runner's tree, a pool of local worktrees, a queue of remote workers. */
export interface AttemptDispatcher {
  readonly kind: 'local' | 'worktree' | 'queue';
  /** How many attempts it runs at once (1 for `local`). */
  readonly capacity: number;
  /** Runs one attempt to its end. An agent's failure is a result, never a rejection. */
  run(job: AttemptJob, hooks: AttemptHooks): Promise<AttemptResult>;
  /**
   * At a run's start, after a crash: removes the worktrees, branches or queued jobs of `epicId`'s
   * attempts that no live runner waits for, and names what it removed.
   */
  recover(epicId: string): Promise<string[]>;
  /** Releases what it holds (connections, worktrees); safe to call twice. */
  close(): Promise<void>;
}

/** The idempotency key of one attempt. */
export function attemptIdOf(runId: string, beadId: string, attempt: number): string {
  return `${runId}.${beadId}.${attempt}`;
}

/** The branch an attempt's result is committed to; bead ids are br ids (letters, digits, dots, dashes). */
export function attemptBranchOf(epicId: string, beadId: string, attempt: number): string {
  const safe = (text: string): string => text.replace(/[^A-Za-z0-9._-]/g, '_');
  return `forge/attempts/${safe(epicId)}/${safe(beadId)}-${attempt}`;
}
