// The runner's ports and its typed events: everything the loop needs from outside, as interfaces.
import type { AttemptDispatcher } from './attempt-dispatch.js';
import type { Integration } from './integration.js';
import type { Bead, BeadStore, EpicGraph } from '../beads/types.js';
import type { Clock } from '../infra/clock.js';
import type { LockRecord, LockUpdateHow } from '../infra/lock-file.js';
import type { OverLimit, SizeLimits } from '../infra/size-limits.js';
import type { GateOutcome, GateProcess, GatesSettings } from './gates.js';
import type { AgentChoices } from './select.js';

/** What one execution of a bead produced, whatever ran it (agent, built-in executor). */
export type ExecutionOutcome =
  | 'ok'
  | 'error'
  | 'rate_limited'
  | 'overloaded'
  | 'auth'
  | 'timeout'
  | 'aborted'
  | 'needs_human'
  /** A spending cap was reached (the agent stopped at the budget it was given, or none was left). */
  | 'budget';

export interface ExecutionResult {
  outcome: ExecutionOutcome;
  /** One sentence for a person. */
  message: string;
  /**
   * When this result stops the run: what the user does next, where the executor knows it better than
   * the stop's reason does (a pipeline stage names its own command); '' for nothing beyond the message.
   */
  hint?: string | undefined;
  agent?: string | undefined;
  model?: string | undefined;
  scripted?: boolean | undefined;
  exitCode?: number | undefined;
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  costUsd?: number | undefined;
  /** When a rate or usage limit resets (epoch ms), if the agent said. */
  resetAt?: number | undefined;
  /** The close reason to record on success. */
  closeReason?: string | undefined;
  /** The agent's final answer, for executors that read it (a judge's JSON, a doer's hypothesis). */
  finalText?: string | undefined;
  /** What a read-only agent tried to write or run anyway (each refused or undone). */
  writeAttempts?: string[] | undefined;
  /** Retrying cannot help (agent binary missing, unknown agent label): fail the bead now. */
  fatal?: boolean | undefined;
  /**
   * The machine lacks what the work needs (the agent's binary): nothing is wrong with the bead, so the
   * run stops as an environment error and the bead is left open, unlabelled.
   */
  environment?: boolean | undefined;
  /** Files the agent changed that were not its to change; the runner put them back. */
  tampered?: string[] | undefined;
  /** A loop's own record of this step (a score, a decision), emitted as an event with numbers. */
  record?: LoopRecord | undefined;
  /** More than one sentence for the bead's attempt comment (a failed gate's command and output). */
  detail?: string | undefined;
}

/** What a loop's judge measured and its arbiter decided, as data for `--json` readers and progress lines. */
export type LoopRecord =
  | {
      type: 'judged';
      iter: number;
      /** null: no score (the judge failed, or did not judge a tampered iteration). */
      score: number | null;
      evidence?: string | undefined;
      failure?: string | undefined;
    }
  | {
      type: 'decided';
      iter: number;
      decision: string;
      score: number | null;
      best_before: number | null;
      best_after: number | null;
      delta: number | null;
      /** Why the loop ends after this iteration, or null when it goes on. */
      terminal: string | null;
      /** ±the noise band it was decided against (a hard metric measured more than once). */
      noise_band?: number | undefined;
      /** An improvement not kept because it was within that band. */
      within_noise?: boolean | undefined;
    };

export interface ExecutionRequest {
  /** The bead as the store listed it (labels and description included); executors needing more call show. */
  bead: Bead;
  epicId: string;
  role: string;
  /** Agent spec from the bead's `agent:` label, the role default, or the run default. */
  agentSpec: string;
  /** The spec came from a bead label (agent-written text: never a command to run). */
  agentFromLabel: boolean;
  attempt: number;
  /** What went wrong last time that the agent can fix (a red gate's output); absent on a first attempt. */
  feedback?: string | undefined;
  cwd: string;
  /** Kill the work when this aborts (wall clock, SIGINT). */
  signal: AbortSignal;
  timeoutMs: number;
  /** What the agent may still spend (a loop's budget cap), when there is a cap. */
  budgetUsd?: number | undefined;
  transcriptPath: string;
  /** The folder Forge trusts above the transcript: no folder between the two may be a link (see own-log.ts). */
  transcriptRoot?: string | undefined;
  /** Live notes for the progress line (a rate-limit retry seen, a tool call). */
  onActivity?: ((message: string) => void) | undefined;
  /** Called with the pid of a spawned agent (its process group). */
  onSpawn?: ((pid: number) => void) | undefined;
}

export interface Executor {
  /** A short name for logs: `agent`, `judge`, `arbiter`, … */
  readonly kind: string;
  /** Overrides the run's --max-attempts for beads of this kind (a strategist is retried once). */
  readonly maxAttempts?: number;
  /** Whether a success may leave code changes for the runner to commit with --auto-commit. */
  readonly writesCode: boolean;
  /** Whether the repo's gates run after a success (default: writesCode); a loop's doer opts out. */
  readonly runsGates?: boolean;
  /** Built-in work (the arbiter, a metric command): no agent is spent, whatever the bead's label says. */
  readonly builtin?: boolean;
  execute(request: ExecutionRequest): Promise<ExecutionResult>;
}

/** Maps a role to the executor that runs it; unknown roles get the default (a full-tools agent). */
export interface ExecutorRegistry {
  resolve(role: string): Executor;
}

/** Who runs the epic; the lock file's record (src/infra/lock-file.ts). */
export type LockHolder = LockRecord;

export type AcquireResult = { ok: true; tookOverFrom?: LockHolder } | { ok: false; holder: LockHolder };

/** One runner per epic. */
export interface EpicLock {
  /** The lock file, named when a run is refused (absent for a lock kept elsewhere, as in tests). */
  readonly path?: string;
  acquire(holder: LockHolder): Promise<AcquireResult>;
  /**
   * Records the live bead (and agent pid) so `status` can show it, and a takeover can stop the agent;
   * `now`: on disk before the call returns (a new agent's pid); `soon`: progress that may be written
   * up to a second late, or by the next write that comes first (the promise settles with that write).
   */
  update(patch: Partial<LockHolder>, how?: LockUpdateHow): Promise<void>;
  release(): Promise<void>;
}

/** Files a person uses to steer a running loop. */
export interface ControlFiles {
  /** True when `ralph-loop stop <epic>` asked this run to end after the current bead. */
  stopRequested(): Promise<boolean>;
  clearStop(): Promise<void>;
  /**
   * Removes a stop request left for a run that has ended (one no live runner took), so it never
   * halts this run; returns what was dropped, to say so.
   */
  dropStaleStop?(): Promise<string | undefined>;
  transcriptPath(beadId: string): string;
  /** The repository the transcripts are in (ExecutionRequest.transcriptRoot). */
  transcriptRoot?: string | undefined;
  /**
   * What was dirty before a bead's first attempt under --auto-commit, kept on disk until the bead
   * closes: a run after a kill or an interrupt takes that bead's leftovers for its own (its commit holds
   * them when it is done), not for the user's. The record names one bead, the last one started.
   */
  treeBefore?(): Promise<{ bead: string; dirty: DirtyPaths } | undefined>;
  noteTreeBefore?(bead: string, dirty: DirtyPaths): Promise<void>;
  clearTreeBefore?(bead: string): Promise<void>;
}

/** Why a guard will not let a bead start: the run stops with this reason and message. */
export interface GuardVeto {
  reason: StopReason;
  message: string;
}

/**
 * Lets a layer above the runner (autoresearch) check each bead before it starts, seal what it left
 * after, and clean up an iteration a stopping run leaves half done.
 */
export interface BeadGuard {
  /** Once, after the lock is taken and before recovery. */
  start(): Promise<void>;
  /** Before the bead is claimed; a veto stops the run. */
  beforeBead(bead: Bead, context: { role: string; builtin: boolean }): Promise<GuardVeto | undefined>;
  /** After the bead closed (or its attempts ended). */
  afterBead(bead: Bead, context: { role: string; builtin: boolean }): Promise<void>;
  /** The run stops with `bead` left open. */
  leftOpen(bead: Bead, context: { role: string; builtin: boolean }, reason: StopReason): Promise<void>;
}

/** Lets a layer above the runner (autoresearch) explain an idle epic and veto a silent stop. */
export interface IdleProbe {
  explain(epicId: string): Promise<{ reason: 'terminal' | 'needs_human'; detail: string } | undefined>;
}

/** Paths changed or untracked in the working tree, each with a fingerprint of what is there now. */
export type DirtyPaths = ReadonlyMap<string, string>;

export interface CommitOutcome {
  /** The new commit, or undefined when the bead changed nothing committable. */
  sha?: string | undefined;
  /** Paths dirty before the bead started that it changed too: the user's, so left uncommitted. */
  leftOut: string[];
  /** Files the bead made or changed past the size limits: left uncommitted, as they are. */
  tooLarge?: OverLimit[];
}

/**
 * The runner's narrow view of git (refuse a busy tree, commit what a bead changed), built by
 * cli/runner-git.ts over the wide `Git` of infra/git-port.ts.
 */
export interface RunnerGit {
  /** 'merge' | 'rebase' | 'cherry-pick' … when one is in progress, else undefined. */
  operationInProgress(): Promise<string | undefined>;
  /** Git's index lock file when it exists (a git command running, or one that died): no commit can succeed. */
  indexLock(): Promise<string | undefined>;
  /** What is changed or untracked now, Forge's own files (.forge/, .beads/, loop workspaces) left out. */
  dirtyPaths(): Promise<DirtyPaths>;
  /**
   * Commits what changed since `before` was taken, never a path in `before`, nor Forge's own files,
   * nor a file past `limits`.
   */
  commitChanges(message: string, before: DirtyPaths, limits?: SizeLimits): Promise<CommitOutcome>;
}

export type StopReason =
  | 'done'
  | 'terminal'
  | 'needs_human'
  | 'stalled'
  | 'stopped'
  | 'max_beads'
  | 'wall_clock'
  | 'failed'
  | 'auth'
  | 'interrupted'
  | 'refused'
  /** The machine lacks what a bead needs (an agent binary); the bead is left open. */
  | 'environment'
  | 'dry_run';

export interface RunSummary {
  reason: StopReason;
  message: string;
  beadsRun: number;
  beadsClosed: number;
  costUsd: number;
  /** Time spent running gates, all beads together (absent when none ran). */
  gateMs?: number | undefined;
  /** Bead that failed or needs attention, when there is one. */
  beadId?: string | undefined;
  /** What to do next, from the executor that stopped the run (ExecutionResult.hint); '' for nothing. */
  hint?: string | undefined;
}

export type LoopEvent =
  | { type: 'run_started'; ts: string; run_id: string; epic: string; pid: number; dry_run: boolean }
  | { type: 'warning'; ts: string; epic: string; message: string; bead?: string | undefined }
  | { type: 'recovered'; ts: string; epic: string; bead: string; message: string }
  | {
      type: 'plan';
      ts: string;
      epic: string;
      /** `agent_source`: where the agent came from (`--agent`, `label agent:codex`, …). */
      order: { id: string; title: string; role: string; agent: string; agent_source: string }[];
    }
  | {
      type: 'bead_started';
      ts: string;
      epic: string;
      bead: string;
      title: string;
      role: string;
      agent: string;
      executor: string;
      attempt: number;
      /** Beads of the epic closed so far, and known so far (a loop stamps more as it goes). */
      progress?: { done: number; total: number };
    }
  | {
      type: 'attempt_finished';
      ts: string;
      epic: string;
      bead: string;
      title: string;
      role: string;
      agent: string;
      model?: string | undefined;
      scripted?: boolean | undefined;
      attempt: number;
      outcome: ExecutionOutcome;
      exit?: number | undefined;
      duration_ms: number;
      input_tokens?: number | undefined;
      output_tokens?: number | undefined;
      cost_usd?: number | undefined;
      message: string;
      transcript: string;
    }
  | ({ type: 'gate_finished'; ts: string; epic: string; bead: string; attempt: number } & GateOutcome)
  | { type: 'activity'; ts: string; epic: string; bead: string; message: string }
  | { type: 'tamper'; ts: string; epic: string; bead: string; role: string; paths: string[]; message: string }
  | ({ ts: string; epic: string; bead: string } & LoopRecord)
  | { type: 'waiting'; ts: string; epic: string; bead: string; until: string; why: string }
  /** A parallel run applied an attempt's commit on the integration branch, its gates green. */
  | { type: 'merged'; ts: string; epic: string; bead: string; attempt: number; commit: string }
  /** A parallel run could not apply an attempt's commit; the bead is retried on the new head. */
  | { type: 'merge_conflict'; ts: string; epic: string; bead: string; attempt: number; message: string }
  | {
      type: 'bead_closed';
      ts: string;
      epic: string;
      bead: string;
      title: string;
      duration_ms: number;
      commit?: string | undefined;
    }
  | {
      type: 'bead_failed';
      ts: string;
      epic: string;
      bead: string;
      title: string;
      attempts: number;
      message: string;
    }
  | { type: 'run_finished'; ts: string; epic: string; run_id: string; summary: RunSummary };

export interface RunnerDeps {
  store: BeadStore;
  executors: ExecutorRegistry;
  lock: EpicLock;
  control: ControlFiles;
  git?: RunnerGit | undefined;
  idle?: IdleProbe | undefined;
  guard?: BeadGuard | undefined;
  clock: Clock;
  /** Runs the gates' argv; without it no gate runs. */
  gateProcess?: GateProcess | undefined;
  /** `--parallel N`: where attempts run beside each other, and the branch their results land on. */
  dispatcher?: AttemptDispatcher | undefined;
  integration?: Integration | undefined;
  /**
   * The process groups of a parallel run's agents while they work (a serial run's one agent is in the
   * lock record): a quit that cannot wait kills them, never leaving one working on alone.
   */
  agentGroups?: { add(pid: number): void; delete(pid: number): void } | undefined;
  /** Receives every event: the CLI writes the NDJSON log and renders progress from them. */
  emit: (event: LoopEvent) => void;
}

export interface RunnerOptions {
  epicId: string;
  cwd: string;
  runId: string;
  pid: number;
  host: string;
  /** Where each bead's agent comes from: the command line, its label, the config, the built-in default. */
  agents: AgentChoices;
  beadTimeoutMs: number;
  /** Wall-clock cap for the whole run in ms (0: none). */
  wallClockMs: number;
  maxBeads: number;
  maxAttempts: number;
  /** Base of the exponential backoff between failed attempts. */
  backoffMs: number;
  /** Cap of any single backoff or unknown-reset wait. */
  maxBackoffMs: number;
  autoCommit: boolean;
  /** With autoCommit: what one commit may hold (`runner.max_file_bytes`, `max_change_bytes`, `max_change_files`). */
  sizeLimits?: SizeLimits | undefined;
  /** The repo's gates, run after each code-writing bead's success; absent: none (--no-gates). */
  gates?: GatesSettings | undefined;
  /** With autoCommit: start on a dirty tree, and leave the paths dirty then out of every commit. */
  allowDirty?: boolean | undefined;
  dryRun: boolean;
  /** Run exactly this bead (ralph-loop once). */
  onlyBead?: string | undefined;
  /**
   * The epic's beads as read just before the run (by its validation), with no runner holding the
   * epic's lock at the time. Recovery takes them instead of reading again when the lock is then taken
   * without a takeover and none of them is in progress: no runner can have claimed one in between.
   */
  beadsAtStart?: readonly Bead[];
  /**
   * The epic's ready beads, read while the run was being checked (beside the read of beadsAtStart). The
   * first pick takes them instead of reading again when recovery reopened nothing and no guard runs
   * first: a ready read taken a moment earlier, which a claim checks like any other.
   */
  readyAtStart?: Promise<readonly Bead[]> | undefined;
  /** The epic's graph as the run's checks read it: a dry run plans from it instead of reading again. */
  graphAtStart?: EpicGraph | undefined;
  /**
   * The work tree's check (preflight.ts: no git operation under way, no index lock, clean for
   * --auto-commit), started on these options while the run was checked; the runner awaits it in place of
   * making it, before it takes the lock.
   */
  treeCheckedAtStart?: Promise<void> | undefined;
  /** Interrupt (SIGINT/SIGTERM): abort the current bead, reopen it, release the lock. */
  signal: AbortSignal;
}
