// The runner: lock, recover, then take the epic's ready beads one at a time until a reason to stop.
import type { Bead } from '../beads/types.js';
import { AppError, EnvironmentError, ExitCode } from '../infra/errors.js';
import { checkGates, executorRunsGates, gateLabelFailure } from './gated-attempt.js';
import { planGates } from './gates.js';
import { explainIdleEpic, planRun } from './idle.js';
import { decideAfterAttempt, type RetryCounters } from './retry-policy.js';
import { agentSpecFor, FAILED_LABEL, pickNextBead, roleOf } from './select.js';
import type {
  DirtyPaths,
  ExecutionResult,
  LoopEvent,
  RunnerDeps,
  RunnerOptions,
  RunSummary,
  StopReason,
} from './types.js';

type BeadOutcome =
  | { kind: 'closed'; costUsd: number }
  | { kind: 'skipped'; message: string }
  | { kind: 'stop'; reason: StopReason; message: string; costUsd: number };

export class LockedError extends AppError {
  constructor(message: string, hint: string) {
    super(message, { exitCode: ExitCode.locked, hint });
    this.name = 'LockedError';
  }
}

/** Runs the epic until nothing is ready, a cap is hit, a human is needed, or it is stopped. */
export async function runEpic(options: RunnerOptions, deps: RunnerDeps): Promise<RunSummary> {
  const runner = new Runner(options, deps);
  return runner.run();
}

class Runner {
  private readonly startedAt: number;
  private beadsRun = 0;
  private beadsClosed = 0;
  private costUsd = 0;
  private gateMs = 0;
  private readonly skipped = new Set<string>();
  /** For the live line: beads of the epic seen so far, and those already closed when the run started. */
  private readonly known = new Set<string>();
  private closedAtStart = 0;

  constructor(
    private readonly o: RunnerOptions,
    private readonly d: RunnerDeps,
  ) {
    this.startedAt = d.clock.now();
  }

  async run(): Promise<RunSummary> {
    const { o, d } = this;
    if (o.dryRun) {
      this.emit({ type: 'run_started', run_id: o.runId, epic: o.epicId, pid: o.pid, dry_run: true });
      return this.finish('dry_run', await this.describePlan());
    }

    // A refused run writes nothing: no event log (so `ralph-loop logs` keeps the last real run), no claim.
    await this.preflight();
    const acquired = await d.lock.acquire({
      pid: o.pid,
      host: o.host,
      started_at: this.iso(this.startedAt),
      epic: o.epicId,
      run_id: o.runId,
    });
    if (!acquired.ok) {
      const h = acquired.holder;
      throw new LockedError(
        `Another ralph-loop (pid ${h.pid} on ${h.host}, started ${h.started_at}) is already running epic ${o.epicId}.`,
        `Wait for it, or stop it with: ralph-loop stop ${o.epicId}`,
      );
    }
    this.emit({ type: 'run_started', run_id: o.runId, epic: o.epicId, pid: o.pid, dry_run: false });
    if (acquired.tookOverFrom !== undefined) {
      const h = acquired.tookOverFrom;
      this.warn(
        `Took over the lock of a runner that is gone (pid ${h.pid} on ${h.host}, started ${h.started_at}).`,
      );
    }

    try {
      const dropped = await d.control.dropStaleStop?.();
      if (dropped !== undefined) {
        this.warn(
          `Dropped a stop request left for a run that has ended (${dropped}); ralph-loop stop applies to a live runner only.`,
        );
      }
      await d.guard?.start();
      await this.recover();
      return await this.loop();
    } finally {
      // A stop request this run did not get to was meant for it alone: it must not halt the next run.
      await d.control.clearStop().catch(() => undefined);
      await d.lock.release();
      await d.store
        .flush()
        .catch((error: unknown) => this.warn(`Could not flush the bead store: ${String(error)}`));
    }
  }

  /** Refuses, before anything is claimed or written, a tree no bead could be committed in. */
  private async preflight(): Promise<void> {
    const { o, d } = this;
    if (d.git === undefined) return;
    const operation = await d.git.operationInProgress();
    if (operation !== undefined) {
      throw new EnvironmentError(
        `A git ${operation} is in progress in ${o.cwd}; ralph-loop will not start on it.`,
        {
          hint: `Finish or abort the ${operation} (git ${operation} --continue / --abort), then run again.`,
        },
      );
    }
    const indexLock = await d.git.indexLock();
    if (indexLock !== undefined) {
      throw new EnvironmentError(
        `Git's index is locked (${indexLock} exists): another git command is running, or one was killed and left it behind, and no commit can be made until it is gone.`,
        { hint: `If no git command is running, delete ${indexLock}, then run again.` },
      );
    }
    if (o.autoCommit && o.allowDirty !== true) {
      const dirty = [...(await d.git.dirtyPaths()).keys()];
      if (dirty.length > 0) {
        throw new EnvironmentError(
          `--auto-commit will not start on a dirty tree: ${namePaths(dirty)} ${dirty.length === 1 ? 'has' : 'have'} uncommitted changes of your own, which Forge never commits.`,
          {
            hint: 'Commit or stash them first, or run with --allow-dirty: those paths are then left out of every bead commit.',
          },
        );
      }
    }
  }

  /** Beads of this epic left in progress by a runner that died go back to open. */
  private async recover(): Promise<void> {
    const children = await this.d.store.children(this.o.epicId, { recursive: true });
    for (const bead of children) this.known.add(bead.id);
    this.closedAtStart = children.filter((bead) => bead.status === 'closed').length;
    for (const bead of children) {
      if (bead.status !== 'in_progress') continue;
      const message = `Reopened by ralph-loop run ${this.o.runId}: the runner that claimed it is gone.`;
      await this.d.store.reopen(bead.id, message);
      this.emit({ type: 'recovered', epic: this.o.epicId, bead: bead.id, message });
    }
  }

  private async loop(): Promise<RunSummary> {
    const { o, d } = this;
    for (;;) {
      if (o.signal.aborted) return this.finish('interrupted', 'Interrupted; the current bead was left open.');
      if (await d.control.stopRequested()) {
        await d.control.clearStop();
        return this.finish('stopped', 'Stopped by ralph-loop stop after the last bead.');
      }
      if (o.maxBeads > 0 && this.beadsRun >= o.maxBeads) {
        return this.finish('max_beads', `Ran ${this.beadsRun} bead(s), the --max-beads cap.`);
      }
      if (this.wallClockLeft() <= 0) return this.finish('wall_clock', 'The wall-clock cap was reached.');

      const bead = await this.nextBead();
      if (bead === undefined) {
        if (o.onlyBead !== undefined) return this.finish('done', `Bead ${o.onlyBead} ran.`);
        const idle = await explainIdleEpic(d, o.epicId);
        return this.finish(idle.reason, idle.message, idle.beadId);
      }

      const role = roleOf(bead);
      const guardContext = { role, builtin: d.executors.resolve(role).builtin === true };
      const veto = await d.guard?.beforeBead(bead, guardContext);
      if (veto !== undefined) return this.finish(veto.reason, veto.message, bead.id);
      const outcome = await this.runBead(bead);
      if (outcome.kind === 'stop' && outcome.reason !== 'needs_human') {
        await d.guard?.leftOpen(bead, guardContext, outcome.reason);
      } else {
        await d.guard?.afterBead(bead, guardContext);
      }
      this.beadsRun += 1;
      if (outcome.kind === 'closed') this.beadsClosed += 1;
      if (outcome.kind === 'skipped') {
        if (this.skipped.has(bead.id)) return this.finish('stalled', outcome.message, bead.id);
        this.skipped.add(bead.id);
        this.warn(outcome.message, bead.id);
      }
      if (outcome.kind === 'stop') return this.finish(outcome.reason, outcome.message, bead.id);
      if (o.onlyBead !== undefined) {
        const epicNote = outcome.kind === 'closed' ? await this.closeEpicIfDone(bead) : '';
        return this.finish(
          'done',
          [`Bead ${bead.id} ran.`, epicNote].filter((s) => s !== '').join(' '),
          bead.id,
        );
      }
    }
  }

  /** After `once`: the last open child closed closes its epic, by the same rule as a full run. */
  private async closeEpicIfDone(bead: Bead): Promise<string> {
    const { o, d } = this;
    if (o.epicId === bead.id) return '';
    const children = await d.store.children(o.epicId, { recursive: true });
    const open = children.filter((child) => child.status !== 'closed' && child.issue_type !== 'epic');
    if (children.length === 0 || open.length > 0) return '';
    return (await explainIdleEpic(d, o.epicId)).message;
  }

  private async nextBead(): Promise<Bead | undefined> {
    const { o, d } = this;
    if (o.onlyBead !== undefined) {
      if (this.beadsRun > 0) return undefined;
      const bead = await d.store.show(o.onlyBead);
      if (bead.status !== 'open') {
        throw new AppError(
          `Bead ${bead.id} is ${bead.status}, not open; ralph-loop once runs open beads only.`,
          {
            exitCode: ExitCode.usage,
            hint: `Reopen it first: forge-pack beads reopen ${bead.id}`,
          },
        );
      }
      return bead;
    }
    const ready = await d.store.ready(o.epicId, { recursive: true });
    for (const bead of ready) this.known.add(bead.id);
    return pickNextBead(ready, o.epicId);
  }

  private async runBead(bead: Bead): Promise<BeadOutcome> {
    const { o, d } = this;
    const claim = await d.store.claim(bead.id);
    if (!claim.ok) return { kind: 'skipped', message: `Could not claim ${bead.id}: ${claim.reason}` };

    const role = roleOf(bead);
    const executor = d.executors.resolve(role);
    const chosen = agentSpecFor(bead, role, o.agents);
    const agentSpec = executor.builtin === true ? 'built-in' : chosen.spec;
    const fromLabel = chosen.fromLabel;
    const maxAttempts = executor.maxAttempts ?? o.maxAttempts;
    const beadStarted = d.clock.now();
    // What was dirty before the bead's first attempt is the user's: its commit never holds it.
    const dirtyBefore =
      o.autoCommit && executor.writesCode && d.git !== undefined ? await d.git.dirtyPaths() : undefined;
    // Gates named by labels are resolved once: a bad gates: label fails the bead before any agent runs.
    const gates = executorRunsGates(executor) && o.gates !== undefined ? planGates(bead.labels, o.gates) : [];
    let feedback: string | undefined;
    let counters: RetryCounters = { failures: 0, overloadWaits: 0, rateLimitWaits: 0 };
    let attempt = 1;
    let spent = 0;

    for (;;) {
      const attemptStarted = d.clock.now();
      await d.lock.update({ bead: bead.id, bead_started_at: this.iso(attemptStarted) });
      this.emit({
        type: 'bead_started',
        epic: o.epicId,
        bead: bead.id,
        title: bead.title,
        role,
        agent: agentSpec,
        executor: executor.kind,
        attempt,
        progress: {
          done: this.closedAtStart + this.beadsClosed,
          total: Math.max(this.known.size, this.closedAtStart + this.beadsClosed + 1),
        },
      });

      const wallLeft = this.wallClockLeft();
      const limitedByWallClock = wallLeft < o.beadTimeoutMs;
      const transcriptPath = d.control.transcriptPath(bead.id);
      const executed = !Array.isArray(gates)
        ? gateLabelFailure(gates.error)
        : await executor
            .execute({
              bead,
              epicId: o.epicId,
              role,
              agentSpec,
              agentFromLabel: fromLabel,
              attempt,
              ...(feedback === undefined ? {} : { feedback }),
              cwd: o.cwd,
              signal: o.signal,
              timeoutMs: Math.max(1, Math.min(o.beadTimeoutMs, wallLeft)),
              transcriptPath,
              onActivity: (message) =>
                this.emit({ type: 'activity', epic: o.epicId, bead: bead.id, message }),
              onSpawn: (pid) => this.recordAgentPid(pid, bead.id),
            })
            .catch((error: unknown): ExecutionResult => ({
              outcome: 'error',
              message: error instanceof Error ? error.message : String(error),
            }));
      const gated = await checkGates(executed, Array.isArray(gates) ? gates : [], d.gateProcess, {
        cwd: o.cwd,
        signal: o.signal,
        maxMs: this.wallClockLeft(),
        onOutcome: (outcome) =>
          this.emit({ type: 'gate_finished', epic: o.epicId, bead: bead.id, attempt, ...outcome }),
      });
      const result = gated.result;
      this.gateMs += gated.gateMs;
      feedback = gated.feedback ?? feedback;
      await d.lock.update({ agent_pid: undefined });
      spent += result.costUsd ?? 0;
      this.costUsd += result.costUsd ?? 0;
      if (result.tampered !== undefined && result.tampered.length > 0) {
        this.emit({
          type: 'tamper',
          epic: o.epicId,
          bead: bead.id,
          role,
          paths: result.tampered,
          message: `the ${role} changed ${result.tampered.join(', ')}, which it may not change; put back`,
        });
      }
      this.emit({
        type: 'attempt_finished',
        epic: o.epicId,
        bead: bead.id,
        title: bead.title,
        role,
        agent: result.agent ?? agentSpec,
        ...(result.model === undefined ? {} : { model: result.model }),
        ...(result.scripted === undefined ? {} : { scripted: result.scripted }),
        attempt,
        outcome: result.outcome,
        ...(result.exitCode === undefined ? {} : { exit: result.exitCode }),
        duration_ms: d.clock.now() - attemptStarted,
        ...(result.inputTokens === undefined ? {} : { input_tokens: result.inputTokens }),
        ...(result.outputTokens === undefined ? {} : { output_tokens: result.outputTokens }),
        ...(result.costUsd === undefined ? {} : { cost_usd: result.costUsd }),
        message: result.message,
        transcript: transcriptPath,
      });

      if (result.outcome === 'ok' && result.record !== undefined) {
        this.emit({ ...result.record, epic: o.epicId, bead: bead.id });
      }
      const answer = decideAfterAttempt(bead.id, {
        result,
        attempt,
        maxAttempts,
        counters,
        backoffMs: o.backoffMs,
        maxBackoffMs: o.maxBackoffMs,
        now: d.clock.now(),
        wallClockLeft: this.wallClockLeft(),
        limitedByWallClock,
        interrupted: o.signal.aborted,
      });
      counters = answer.counters;
      const decision = answer.decision;
      if (decision.kind === 'close') {
        return this.closeBead(bead, dirtyBefore, result, attempt, beadStarted, spent);
      }
      if (decision.kind === 'wait') {
        const stop = await this.sleepOrStop(bead, decision.delayMs, decision.why, attempt, result);
        if (stop !== undefined) return { ...stop, costUsd: spent };
        continue; // a wait spends no attempt
      }
      if (decision.kind === 'stop') {
        if (decision.failedAttempt === true) {
          await d.store.comment(bead.id, this.attemptComment(attempt, result));
        }
        await this.leaveOpen(bead, attempt, result, decision.why);
        return { kind: 'stop', reason: decision.reason, message: decision.message, costUsd: spent };
      }
      await d.store.comment(bead.id, this.attemptComment(attempt, result));
      if (decision.kind === 'fail') {
        await d.store.addLabel(bead.id, FAILED_LABEL);
        await d.store.reopen(bead.id);
        this.emit({
          type: 'bead_failed',
          epic: o.epicId,
          bead: bead.id,
          title: bead.title,
          attempts: attempt,
          message: decision.message,
        });
        return { kind: 'stop', reason: 'failed', message: decision.message, costUsd: spent };
      }
      const stop = await this.sleepOrStop(bead, decision.delayMs, decision.why, attempt, result);
      if (stop !== undefined) return { ...stop, costUsd: spent };
      attempt += 1;
    }
  }

  private async closeBead(
    bead: Bead,
    dirtyBefore: DirtyPaths | undefined,
    result: ExecutionResult,
    attempt: number,
    beadStarted: number,
    spent: number,
  ): Promise<BeadOutcome> {
    const { o, d } = this;
    let commit: string | undefined;
    if (dirtyBefore !== undefined && d.git !== undefined) {
      const made = await d.git.commitChanges(`ralph-loop: ${bead.id} ${bead.title}`, dirtyBefore);
      commit = made.sha;
      if (made.leftOut.length > 0) {
        this.warn(
          `${namePaths(made.leftOut)} had uncommitted changes of yours before ${bead.id} started and the bead changed ${made.leftOut.length === 1 ? 'it' : 'them'} too: not committed; review and commit ${made.leftOut.length === 1 ? 'it' : 'them'} yourself.`,
          bead.id,
        );
      }
    }
    const reason =
      result.closeReason ??
      `Done by ralph-loop (${result.agent ?? 'executor'}, attempt ${attempt}${spent > 0 ? `, $${spent.toFixed(4)}` : ''}).`;
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
      this.warn(
        `${bead.id} was already closed (by its agent, or by hand while it ran); recorded as done.`,
        bead.id,
      );
    }
    if (bead.labels.includes(FAILED_LABEL)) await d.store.removeLabel(bead.id, FAILED_LABEL);
    this.emit({
      type: 'bead_closed',
      epic: o.epicId,
      bead: bead.id,
      title: bead.title,
      duration_ms: d.clock.now() - beadStarted,
      ...(commit === undefined ? {} : { commit }),
    });
    return { kind: 'closed', costUsd: spent };
  }

  private async sleepOrStop(
    bead: Bead,
    delay: number,
    why: string,
    attempt: number,
    result: ExecutionResult,
  ): Promise<Omit<Extract<BeadOutcome, { kind: 'stop' }>, 'costUsd'> | undefined> {
    const { o, d } = this;
    this.emit({
      type: 'waiting',
      epic: o.epicId,
      bead: bead.id,
      until: this.iso(d.clock.now() + delay),
      why,
    });
    await d.clock.sleep(delay, o.signal);
    if (o.signal.aborted) {
      await this.leaveOpen(bead, attempt, result, 'interrupted while waiting');
      return { kind: 'stop', reason: 'interrupted', message: 'Interrupted; the bead was left open.' };
    }
    return undefined;
  }

  /**
   * Called from inside the executor, which cannot wait: a lock that cannot record the pid (throwing
   * or rejecting) is warned about, never failing the attempt or escaping as an unhandled rejection.
   */
  private recordAgentPid(pid: number, beadId: string): void {
    void Promise.resolve()
      .then(() => this.d.lock.update({ agent_pid: pid }))
      .catch((error: unknown) =>
        this.warn(`Could not record the agent's pid in the lock: ${String(error)}`, beadId),
      );
  }

  private async leaveOpen(bead: Bead, attempt: number, result: ExecutionResult, why: string): Promise<void> {
    await this.d.store.reopen(
      bead.id,
      `ralph-loop left this bead open (${why}): ${this.attemptComment(attempt, result)}`,
    );
  }

  private attemptComment(attempt: number, result: ExecutionResult): string {
    const parts = [`attempt ${attempt}: ${result.outcome}`];
    if (result.agent !== undefined)
      parts.push(`agent ${result.agent}${result.model ? ` (${result.model})` : ''}`);
    if (result.exitCode !== undefined) parts.push(`exit ${result.exitCode}`);
    const detail = result.detail === undefined ? '' : `\n\n${result.detail}`;
    return `ralph-loop ${parts.join(', ')}: ${result.message}${detail}`;
  }

  private wallClockLeft(): number {
    if (this.o.wallClockMs <= 0) return Number.POSITIVE_INFINITY;
    return this.startedAt + this.o.wallClockMs - this.d.clock.now();
  }

  private async describePlan(): Promise<string> {
    const order = await planRun(this.d, this.o);
    this.emit({ type: 'plan', epic: this.o.epicId, order });
    return order.length === 0
      ? `Nothing is ready in ${this.o.epicId}.`
      : `Would run ${order.length} bead(s) in this order (beads created during the run are not known yet).`;
  }

  private finish(reason: StopReason, message: string, beadId?: string): RunSummary {
    const summary: RunSummary = {
      reason,
      message,
      beadsRun: this.beadsRun,
      beadsClosed: this.beadsClosed,
      costUsd: this.costUsd,
      ...(this.gateMs > 0 ? { gateMs: this.gateMs } : {}),
      ...(beadId === undefined ? {} : { beadId }),
    };
    this.emit({ type: 'run_finished', epic: this.o.epicId, run_id: this.o.runId, summary });
    return summary;
  }

  private warn(message: string, bead?: string): void {
    this.emit({ type: 'warning', epic: this.o.epicId, message, ...(bead === undefined ? {} : { bead }) });
  }

  private emit(event: DistributiveOmit<LoopEvent, 'ts'>): void {
    this.d.emit({ ...event, ts: this.iso(this.d.clock.now()) });
  }

  private iso(ms: number): string {
    return new Date(ms).toISOString();
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A few paths by name, the rest counted: messages stay one readable line. */
function namePaths(paths: readonly string[], limit = 5): string {
  const named = paths.slice(0, limit).join(', ');
  return paths.length > limit ? `${named} and ${paths.length - limit} more` : named;
}
