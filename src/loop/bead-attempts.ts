// One bead from claim to close: its attempts, the gates after each, waits and retries, and how it is left.
import type { Bead } from '../beads/types.js';
import { AppError, causeChain, diskFullFault, ExitCode } from '../infra/errors.js';
import { ForgedObjectError } from '../infra/git-command.js';
import { checkGates, executorRunsGates, gateLabelFailure, type GatedAttempt } from './gated-attempt.js';
import { planGates, type GateCommand } from './gates.js';
import { decideAfterAttempt, type RetryCounters } from './retry-policy.js';
import { agentSpecFor, FAILED_LABEL, roleOf } from './select.js';
import { namePaths, tooLargeWarning, type BeadOutcome, type RunContext } from './run-context.js';
import type { DirtyPaths, ExecutionResult, Executor, LockHolder } from './types.js';

type StopOutcome = Omit<Extract<BeadOutcome, { kind: 'stop' }>, 'costUsd'>;

/** Claims `bead` and runs attempts until the retry policy closes it, fails it, or stops the run. */
export async function runBead(ctx: RunContext, bead: Bead, via?: AttemptVia): Promise<BeadOutcome> {
  const { o, d } = ctx;
  const role = roleOf(bead);
  const executor = d.executors.resolve(role);
  // What was dirty before the bead's first attempt is the user's: its commit never holds it. Read
  // beside the claim, which changes only the bead store (Forge's state, never in a commit), and the
  // agent starts after both: a git status costs the bead no time of its own (tens of ms in a large
  // tree, about as long as br takes to claim). A claim that fails leaves the read unused.
  // A parallel run's results are commits already (AttemptVia): nothing is left to commit here.
  const dirtyRead =
    via === undefined && o.autoCommit && executor.writesCode && d.git !== undefined
      ? d.git.dirtyPaths()
      : undefined;
  const claim = await d.store.claim(bead.id).catch(async (error: unknown) => {
    await dirtyRead?.catch(() => undefined);
    throw error;
  });
  if (!claim.ok) {
    await dirtyRead?.catch(() => undefined);
    return { kind: 'skipped', message: `Could not claim ${bead.id}: ${claim.reason}` };
  }
  // A bead a killed or interrupted run left unfinished keeps the tree its first attempt found: what that
  // attempt left is its own, to be committed with it. The record is on disk before the agent starts.
  const resumed = dirtyRead === undefined ? undefined : await d.control.treeBefore?.().catch(() => undefined);
  const dirtyBefore = resumed?.bead === bead.id ? resumed.dirty : await dirtyRead;
  if (resumed?.bead === bead.id) await dirtyRead?.catch(() => undefined);
  if (dirtyBefore !== undefined) await d.control.noteTreeBefore?.(bead.id, dirtyBefore);

  const chosen = agentSpecFor(bead, role, o.agents);
  const agentSpec = executor.builtin === true ? 'built-in' : chosen.spec;
  const fromLabel = chosen.fromLabel;
  const maxAttempts = executor.maxAttempts ?? o.maxAttempts;
  const beadStarted = d.clock.now();
  // Gates named by labels are resolved once: a bad gates: label fails the bead before any agent runs.
  const gates = executorRunsGates(executor) && o.gates !== undefined ? planGates(bead.labels, o.gates) : [];
  /** The previous attempt's gate report, for this attempt's prompt. */
  let feedback: string | undefined;
  let counters: RetryCounters = { failures: 0, overloadWaits: 0, rateLimitWaits: 0 };
  let attempt = 1;
  let spent = 0;

  for (;;) {
    const attemptStarted = d.clock.now();
    noteInLock(ctx, { bead: bead.id, bead_started_at: ctx.iso(attemptStarted) }, bead.id);
    ctx.emit({
      type: 'bead_started',
      epic: o.epicId,
      bead: bead.id,
      title: bead.title,
      role,
      agent: agentSpec,
      executor: executor.kind,
      attempt,
      progress: ctx.progress(),
    });

    const wallLeft = ctx.wallClockLeft();
    const limitedByWallClock = wallLeft < o.beadTimeoutMs;
    const transcriptPath = d.control.transcriptPath(bead.id);
    const timeoutMs = Math.max(1, Math.min(o.beadTimeoutMs, wallLeft));
    const gated: LandedAttempt = !Array.isArray(gates)
      ? { result: gateLabelFailure(gates.error), gateMs: 0 }
      : via !== undefined
        ? await via.run({ bead, role, agentSpec, fromLabel, attempt, feedback, timeoutMs, gates })
        : await runInTree(ctx, executor, {
            bead,
            role,
            agentSpec,
            fromLabel,
            attempt,
            feedback,
            timeoutMs,
            gates,
          });
    const result = gated.result;
    ctx.gateMs += gated.gateMs;
    noteInLock(ctx, { agent_pid: undefined }, bead.id);
    spent += result.costUsd ?? 0;
    ctx.costUsd += result.costUsd ?? 0;
    emitAttemptFinished(ctx, bead, { role, agentSpec, attempt, attemptStarted, transcriptPath }, result);

    const answer = decideAfterAttempt(bead.id, {
      result,
      attempt,
      maxAttempts,
      counters,
      backoffMs: o.backoffMs,
      maxBackoffMs: o.maxBackoffMs,
      now: d.clock.now(),
      wallClockLeft: ctx.wallClockLeft(),
      limitedByWallClock,
      interrupted: o.signal.aborted,
    });
    counters = answer.counters;
    const decision = answer.decision;
    if (decision.kind === 'close') {
      return closeBead(ctx, bead, dirtyBefore, result, attempt, beadStarted, spent, gated.commit);
    }
    if (decision.kind === 'wait') {
      const stop = await sleepOrStop(ctx, bead, decision.delayMs, decision.why, attempt, result);
      if (stop !== undefined) return { ...stop, costUsd: spent };
      continue; // a wait spends no attempt, and the attempt it repeats keeps its feedback
    }
    if (decision.kind === 'stop') {
      if (decision.failedAttempt === true) {
        await d.store.comment(bead.id, attemptComment(attempt, result));
      }
      await leaveOpen(ctx, bead, attempt, result, decision.why);
      return {
        kind: 'stop',
        reason: decision.reason,
        message: decision.message,
        ...(decision.hint === undefined ? {} : { hint: decision.hint }),
        costUsd: spent,
      };
    }
    await d.store.comment(bead.id, attemptComment(attempt, result));
    if (decision.kind === 'fail') {
      await d.store.addLabel(bead.id, FAILED_LABEL);
      await d.store.reopen(bead.id);
      ctx.emit({
        type: 'bead_failed',
        epic: o.epicId,
        bead: bead.id,
        title: bead.title,
        attempts: attempt,
        message: decision.message,
      });
      return { kind: 'stop', reason: 'failed', message: decision.message, costUsd: spent };
    }
    const stop = await sleepOrStop(ctx, bead, decision.delayMs, decision.why, attempt, result);
    if (stop !== undefined) return { ...stop, costUsd: spent };
    // The next prompt describes this attempt only: one that failed otherwise (a timeout) has no gate report.
    feedback = gated.feedback;
    attempt += 1;
  }
}

/** One attempt of a bead, as the runner hands it to where it runs. */
export interface AttemptSpec {
  bead: Bead;
  role: string;
  agentSpec: string;
  fromLabel: boolean;
  attempt: number;
  feedback: string | undefined;
  timeoutMs: number;
  gates: readonly GateCommand[];
}

/** A gated attempt, and the commit on the integration branch that holds it when it landed there. */
export type LandedAttempt = GatedAttempt & { commit?: string | undefined };

/** Runs attempts somewhere else than the runner's tree (a parallel run's worktrees). */
export interface AttemptVia {
  run(spec: AttemptSpec): Promise<LandedAttempt>;
}

/** Today's attempt: the role's executor in the run's cwd, then the gates there. */
async function runInTree(ctx: RunContext, executor: Executor, spec: AttemptSpec): Promise<LandedAttempt> {
  const { o, d } = ctx;
  const { bead, attempt } = spec;
  const executed = await executor
    .execute({
      bead,
      epicId: o.epicId,
      role: spec.role,
      agentSpec: spec.agentSpec,
      agentFromLabel: spec.fromLabel,
      attempt,
      feedback: spec.feedback,
      cwd: o.cwd,
      signal: o.signal,
      timeoutMs: spec.timeoutMs,
      transcriptPath: d.control.transcriptPath(bead.id),
      transcriptRoot: d.control.transcriptRoot,
      onActivity: (message) => ctx.emit({ type: 'activity', epic: o.epicId, bead: bead.id, message }),
      // Called from inside the executor, which cannot wait.
      onSpawn: (pid) => noteInLock(ctx, { agent_pid: pid }, bead.id),
    })
    .catch((error: unknown): ExecutionResult => ({
      outcome: 'error',
      message: error instanceof Error ? error.message : String(error),
      // Forged objects stay forged, and a full disk stays full: another attempt would only find them
      // again, and the bead is not at fault (seen: a full disk labelled a bead ralph:failed).
      ...(error instanceof ForgedObjectError || isMachineFault(error) ? { environment: true } : {}),
    }));
  return checkGates(executed, spec.gates, d.gateProcess, {
    cwd: o.cwd,
    signal: o.signal,
    maxMs: ctx.wallClockLeft(),
    onOutcome: (outcome) =>
      ctx.emit({ type: 'gate_finished', epic: o.epicId, bead: bead.id, attempt, ...outcome }),
  });
}

/**
 * Error codes of the machine's state, not the bead's: a read-only file or disk, permissions, a process
 * out of file descriptors (its `ulimit -n`: seen failing a doer three times over on `spawn git EMFILE`).
 */
const MACHINE_CODES = new Set(['EROFS', 'EPERM', 'EACCES', 'EMFILE', 'ENFILE']);

/**
 * Whether Forge's own step failed on the machine (its disk, its permissions, git with no identity to
 * commit as, another git process holding the index), anywhere in the error or its causes: what no
 * retry of the bead mends. Three attempts within a second spent on an editor's background git call
 * failed a doer whose work was fine (fault injection).
 */
export function isMachineFault(error: unknown): boolean {
  if (diskFullFault(error) !== undefined) return true;
  return causeChain(error).some((current) => {
    const { code } = current as NodeJS.ErrnoException;
    return (
      (code !== undefined && MACHINE_CODES.has(code)) ||
      /unable to auto-detect email address|index\.lock': File exists|\bspawn \S+ E[MN]FILE\b/i.test(
        current.message,
      ) ||
      // The tree itself went (a deleted worktree): git finds no repository, a program no folder to run in.
      /fatal: not a git repository|the folder it was to run in is gone/i.test(current.message) ||
      // Git could not make a lock or temp file: its folder (TMPDIR, for Forge's scratch index) is gone,
      // read-only or not ours (fault injection: a missing TMPDIR spent a doer's three attempts).
      /unable to create '[^']*': (?:no such file or directory|permission denied|read-only file system)/i.test(
        current.message,
      )
    );
  });
}

interface AttemptFacts {
  role: string;
  agentSpec: string;
  attempt: number;
  attemptStarted: number;
  transcriptPath: string;
}

/** The events one attempt leaves: files put back, then its result, then the loop record it carried. */
function emitAttemptFinished(
  ctx: RunContext,
  bead: Bead,
  facts: AttemptFacts,
  result: ExecutionResult,
): void {
  const { o, d } = ctx;
  const { role, attempt } = facts;
  if (result.tampered !== undefined && result.tampered.length > 0) {
    ctx.emit({
      type: 'tamper',
      epic: o.epicId,
      bead: bead.id,
      role,
      paths: result.tampered,
      message: `the ${role} changed ${result.tampered.join(', ')}, which it may not change; put back`,
    });
  }
  ctx.emit({
    type: 'attempt_finished',
    epic: o.epicId,
    bead: bead.id,
    title: bead.title,
    role,
    agent: result.agent ?? facts.agentSpec,
    model: result.model,
    scripted: result.scripted,
    attempt,
    outcome: result.outcome,
    exit: result.exitCode,
    duration_ms: d.clock.now() - facts.attemptStarted,
    input_tokens: result.inputTokens,
    output_tokens: result.outputTokens,
    cost_usd: result.costUsd,
    message: result.message,
    transcript: facts.transcriptPath,
  });
  if (result.outcome === 'ok' && result.record !== undefined) {
    ctx.emit({ ...result.record, epic: o.epicId, bead: bead.id });
  }
}

async function closeBead(
  ctx: RunContext,
  bead: Bead,
  dirtyBefore: DirtyPaths | undefined,
  result: ExecutionResult,
  attempt: number,
  beadStarted: number,
  spent: number,
  landed?: string,
): Promise<BeadOutcome> {
  const { o, d } = ctx;
  let commit = landed;
  if (dirtyBefore !== undefined && d.git !== undefined) {
    const made = await d.git.commitChanges(`ralph-loop: ${bead.id} ${bead.title}`, dirtyBefore, o.sizeLimits);
    commit = made.sha;
    if (made.tooLarge !== undefined && o.sizeLimits !== undefined) {
      ctx.warn(tooLargeWarning(bead.id, made.tooLarge, o.sizeLimits, true), bead.id);
    }
    if (made.leftOut.length > 0) {
      ctx.warn(
        `${namePaths(made.leftOut)} had uncommitted changes of yours before ${bead.id} started and the bead changed ${made.leftOut.length === 1 ? 'it' : 'them'} too: not committed; review and commit ${made.leftOut.length === 1 ? 'it' : 'them'} yourself.`,
        bead.id,
      );
    }
  }
  const reason =
    result.closeReason ??
    `Done by ralph-loop (${result.agent ?? 'executor'}, attempt ${attempt}${spent > 0 ? `, $${spent.toFixed(4)}` : ''}).`;
  ctx.beforeClose?.(bead.id);
  const closed = await d.store.close(bead.id, reason);
  if (!closed.ok) {
    // The agent may close its own bead (br close, forge-pack beads close) while it works: it is done.
    const now = await d.store.show(bead.id).catch(() => undefined);
    if (now?.status !== 'closed') {
      throw new AppError(`Bead ${bead.id} ran but the store did not close it: ${closed.reason}`, {
        exitCode: ExitCode.environment,
        hint: `Check the bead (forge-pack beads show ${bead.id}) and close it by hand if its work is done.`,
      });
    }
    ctx.warn(
      `${bead.id} was already closed (by its agent, or by hand while it ran); recorded as done.`,
      bead.id,
    );
  }
  if (bead.labels.includes(FAILED_LABEL)) await d.store.removeLabel(bead.id, FAILED_LABEL);
  if (dirtyBefore !== undefined) await d.control.clearTreeBefore?.(bead.id);
  ctx.emit({
    type: 'bead_closed',
    epic: o.epicId,
    bead: bead.id,
    title: bead.title,
    duration_ms: d.clock.now() - beadStarted,
    commit,
  });
  return { kind: 'closed', costUsd: spent };
}

async function sleepOrStop(
  ctx: RunContext,
  bead: Bead,
  delay: number,
  why: string,
  attempt: number,
  result: ExecutionResult,
): Promise<StopOutcome | undefined> {
  const { o, d } = ctx;
  ctx.emit({
    type: 'waiting',
    epic: o.epicId,
    bead: bead.id,
    until: ctx.iso(d.clock.now() + delay),
    why,
  });
  // `ralph-loop stop` is heard during the wait too, not after it: a rate limit waited out for hours, or
  // a backoff before the next attempt, went on calling the agent long after the user asked to stop.
  const until = d.clock.now() + delay;
  const step = Math.max(STOP_POLL_MS, Math.ceil(delay / 200));
  for (let left = delay; left > 0; left = until - d.clock.now()) {
    await d.clock.sleep(Math.min(left, step), o.signal);
    if (o.signal.aborted) {
      await leaveOpen(ctx, bead, attempt, result, 'interrupted while waiting');
      return { kind: 'stop', reason: 'interrupted', message: 'Interrupted; the bead was left open.' };
    }
    if (await d.control.stopRequested()) {
      await d.control.clearStop();
      await leaveOpen(ctx, bead, attempt, result, 'stopped while waiting');
      return {
        kind: 'stop',
        reason: 'stopped',
        message: `Stopped by ralph-loop stop while waiting (${why}); the bead was left open.`,
      };
    }
  }
  return undefined;
}

/** How often a wait between attempts looks for a stop request (longer waits look 200 times in all). */
const STOP_POLL_MS = 5_000;

/**
 * The lock's progress (the live bead, its agent's pid) is a record, never a step the bead waits on:
 * the lock writes its updates in the order given, while the claim, the agent and the close go on. A
 * kill meanwhile leaves the last update that landed, which recovery reads as it reads any stale
 * record. A lock that cannot write (throwing or rejecting) is warned about, never failing the
 * attempt or escaping as an unhandled rejection.
 */
function noteInLock(ctx: RunContext, patch: Partial<LockHolder>, beadId: string): void {
  const what = 'agent_pid' in patch ? "the agent's pid" : 'the running bead';
  // A new agent's pid is written before the spawn's caller goes on (the lock's `now`): until it is
  // on disk, a kill of this runner leaves an agent that the next run does not know to stop. The rest
  // (a bead's start, an agent gone) is written `soon`: mostly by that next `now` write. A lock that
  // still names an ended agent for that long is harmless: a takeover stops a recorded agent only
  // while its pid is still the same process, started by the dead run (lock-file.ts).
  const how = patch.agent_pid !== undefined ? { now: true } : { soon: true };
  void Promise.resolve()
    .then(() => ctx.d.lock.update(patch, how))
    .catch((error: unknown) => ctx.warn(`Could not record ${what} in the lock: ${String(error)}`, beadId));
}

async function leaveOpen(
  ctx: RunContext,
  bead: Bead,
  attempt: number,
  result: ExecutionResult,
  why: string,
): Promise<void> {
  await ctx.d.store.reopen(
    bead.id,
    `ralph-loop left this bead open (${why}): ${attemptComment(attempt, result)}`,
  );
}

function attemptComment(attempt: number, result: ExecutionResult): string {
  const parts = [`attempt ${attempt}: ${result.outcome}`];
  if (result.agent !== undefined)
    parts.push(`agent ${result.agent}${result.model ? ` (${result.model})` : ''}`);
  if (result.exitCode !== undefined) parts.push(`exit ${result.exitCode}`);
  const detail = result.detail === undefined ? '' : `\n\n${result.detail}`;
  return `ralph-loop ${parts.join(', ')}: ${result.message}${detail}`;
}
