// The runner: lock, recover, then take the epic's ready beads one at a time until a reason to stop.
import type { Bead, EpicGraph } from '../beads/types.js';
import { AppError, ExitCode } from '../infra/errors.js';
import { lockRefusalHint } from '../infra/lock-file.js';
import { runBead, type AttemptVia } from './bead-attempts.js';
import { explainIdleEpic, planRun } from './idle.js';
import { refuseUncommittableTree } from './preflight.js';
import type { ParallelPorts } from './parallel-attempt.js';
import { runParallelLoop } from './parallel-run.js';
import { namePaths, RunContext, type BeadOutcome, type RunEnd } from './run-context.js';
import { pickNextBead, roleOf } from './select.js';
import type { RunnerDeps, RunnerOptions, RunSummary, StopReason } from './types.js';
import { fifoRemedyText, onFifoRemoved } from '../infra/fifo-wait.js';

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

const end = (reason: StopReason, message: string, beadId?: string): RunEnd => ({ reason, message, beadId });
/** How many runs back a lock remembers whose work a run took on: each takeover adds one. */
const RECOVERED_KEPT = 32;

class Runner {
  private readonly ctx: RunContext;
  private beadsRun = 0;
  private readonly skipped = new Set<string>();
  /** Beads of the epic this run knows to be open (not closed, not an epic): none left, the end is near. */
  private readonly openKnown = new Set<string>();
  /** The read that found the epic done before a ready read was made: the end's explanation uses it. */
  private doneGraph: EpicGraph | undefined;
  /** That read, started beside the close of the last bead the run knew open (see readEndBeside). */
  private endRead: { bead: string; graph: Promise<EpicGraph> } | undefined;
  private readyAtStartTaken = false;

  constructor(
    private readonly o: RunnerOptions,
    private readonly d: RunnerDeps,
  ) {
    this.ctx = new RunContext(o, d);
    this.ctx.beforeClose = (beadId) => this.readEndBeside(beadId);
  }

  async run(): Promise<RunSummary> {
    const { o, d, ctx } = this;
    if (o.dryRun) {
      ctx.emit({ type: 'run_started', run_id: o.runId, epic: o.epicId, pid: o.pid, dry_run: true });
      return this.finish('dry_run', await this.describePlan());
    }

    // A refused run writes nothing: no event log (so `ralph-loop logs` keeps the last real run), no claim.
    await (o.treeCheckedAtStart ?? refuseUncommittableTree(o, d.git));
    const acquired = await d.lock.acquire({
      pid: o.pid,
      host: o.host,
      started_at: ctx.iso(ctx.startedAt),
      epic: o.epicId,
      run_id: o.runId,
    });
    if (!acquired.ok) {
      const h = acquired.holder;
      const wait = `Wait for it, or stop it with: ralph-loop stop ${o.epicId}`;
      throw new LockedError(
        `Another ralph-loop (pid ${h.pid} on ${h.host}, started ${h.started_at}) is already running epic ${o.epicId}.`,
        d.lock.path === undefined ? wait : lockRefusalHint(d.lock.path, h, o.host, wait),
      );
    }
    ctx.emit({ type: 'run_started', run_id: o.runId, epic: o.epicId, pid: o.pid, dry_run: false });
    if (acquired.tookOverFrom !== undefined) {
      const h = acquired.tookOverFrom;
      ctx.warn(
        `Took over the lock of a runner that is gone (pid ${h.pid} on ${h.host}, started ${h.started_at}).`,
      );
    }

    // Said in the run's log: nothing else records it, and the FIFO was put there by someone.
    const stopHearing = onFifoRemoved((path, remedy) => ctx.warn(fifoRemedyText(path, remedy)));
    try {
      const dropped = await d.control.dropStaleStop?.();
      if (dropped !== undefined) {
        ctx.warn(
          `Dropped a stop request left for a run that has ended (${dropped}); ralph-loop stop applies to a live runner only.`,
        );
      }
      await d.guard?.start();
      const dead = acquired.tookOverFrom;
      // A runner that takes this one's lock over after it dies in turn knows every run whose work is here.
      ctx.recoveredFrom =
        dead === undefined ? undefined : [dead.run_id, ...(dead.recovered ?? [])].slice(0, RECOVERED_KEPT);
      if (ctx.recoveredFrom !== undefined)
        await d.lock
          .update({ recovered: [...ctx.recoveredFrom] }, { now: true })
          .catch((error: unknown) =>
            ctx.warn(`Could not record the runs taken over in the lock: ${String(error)}`),
          );
      await this.recover(acquired.tookOverFrom !== undefined);
      const ports = this.parallelPorts();
      return await (ports === undefined ? this.loop() : this.parallelLoop(ports));
    } finally {
      stopHearing();
      // A stop request this run did not get to was meant for it alone: it must not halt the next run.
      await d.control.clearStop().catch(() => undefined);
      await d.lock.release();
      await d.store
        .flush({ onlyIfWritten: true })
        .catch((error: unknown) => ctx.warn(`Could not flush the bead store: ${String(error)}`));
    }
  }

  /** Beads of this epic left in progress by a runner that died go back to open. */
  private async recover(tookOver: boolean): Promise<void> {
    const { o, d, ctx } = this;
    const before = o.beadsAtStart;
    const trusted = before !== undefined && !tookOver && !before.some((b) => b.status === 'in_progress');
    const children = trusted ? before : await d.store.children(o.epicId, { recursive: true });
    for (const bead of children) {
      ctx.known.add(bead.id);
      if (bead.status !== 'closed' && bead.issue_type !== 'epic') this.openKnown.add(bead.id);
    }
    ctx.closedAtStart = children.filter((bead) => bead.status === 'closed').length;
    for (const bead of children) {
      if (bead.status !== 'in_progress') continue;
      const message = `Reopened by ralph-loop run ${o.runId}: the runner that claimed it is gone.`;
      await d.store.reopen(bead.id, message);
      ctx.recovered.add(bead.id);
      ctx.emit({ type: 'recovered', epic: o.epicId, bead: bead.id, message });
    }
  }

  private async loop(): Promise<RunSummary> {
    const { o, d, ctx } = this;
    for (;;) {
      const reason = await this.reasonToStop(0);
      if (reason !== undefined) return this.finishWith(reason);

      const bead = await this.nextBead();
      if (bead === undefined) {
        if (o.onlyBead !== undefined) return this.finish('done', `Bead ${o.onlyBead} ran.`);
        const idle = await explainIdleEpic(d, o.epicId, ctx.known, this.takeDoneGraph());
        return this.finish(idle.reason, idle.message, idle.beadId);
      }

      const vetoed = await this.veto(bead);
      if (vetoed !== undefined) return this.finishWith(vetoed);
      const outcome = await this.runGuarded(bead);
      const stop = await this.account(bead, outcome);
      if (stop !== undefined) return this.finishWith(stop);
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

  /** Why no further bead is picked (interrupt, stop request, caps), counting `inFlight` beads as run. */
  private async reasonToStop(inFlight: number): Promise<RunEnd | undefined> {
    const { o, d, ctx } = this;
    if (o.signal.aborted) return end('interrupted', 'Interrupted; the current bead was left open.');
    if (await d.control.stopRequested()) {
      await d.control.clearStop();
      return end('stopped', 'Stopped by ralph-loop stop after the last bead.');
    }
    if (o.maxBeads > 0 && this.beadsRun + inFlight >= o.maxBeads) {
      return end('max_beads', `Ran ${this.beadsRun + inFlight} bead(s), the --max-beads cap.`);
    }
    if (ctx.wallClockLeft() <= 0) return end('wall_clock', 'The wall-clock cap was reached.');
    return undefined;
  }

  /** `--parallel N`: the scheduler of parallel-run.ts, with this runner's checks and bookkeeping. */
  private async parallelLoop(ports: ParallelPorts): Promise<RunSummary> {
    const { o, d, ctx } = this;
    const removed = await ports.dispatcher.recover(o.epicId);
    if (removed.length > 0) {
      ctx.warn(`Removed what a dead run's attempts left: ${namePaths(removed)}.`);
    }
    try {
      return await runParallelLoop(ctx, ports, {
        reasonToStop: (inFlight) => this.reasonToStop(inFlight),
        nextBead: (busy) => this.nextBead(busy),
        veto: (bead) => this.veto(bead),
        runBead: (bead, via) => this.runGuarded(bead, via),
        account: (bead, outcome) => this.account(bead, outcome),
        idle: async () => {
          const idle = await explainIdleEpic(d, o.epicId, ctx.known, this.takeDoneGraph());
          return end(idle.reason, idle.message, idle.beadId);
        },
        finish: (why) => this.finishWith(why),
      });
    } finally {
      await ports.dispatcher.close();
    }
  }

  /** A guard's veto of `bead`, as the run's end. */
  private async veto(bead: Bead): Promise<RunEnd | undefined> {
    const veto = await this.d.guard?.beforeBead(bead, this.guardContext(bead));
    return veto === undefined ? undefined : end(veto.reason, veto.message, bead.id);
  }

  private guardContext(bead: Bead): { role: string; builtin: boolean } {
    const role = roleOf(bead);
    return { role, builtin: this.d.executors.resolve(role).builtin === true };
  }

  /** Runs `bead` (through `via`, or in the tree) and tells the guard how it was left. */
  private async runGuarded(bead: Bead, via?: AttemptVia): Promise<BeadOutcome> {
    const guardContext = this.guardContext(bead);
    const outcome = await runBead(this.ctx, bead, via);
    if (outcome.kind === 'stop' && outcome.reason !== 'needs_human') {
      await this.d.guard?.leftOpen(bead, guardContext, outcome.reason);
    } else {
      await this.d.guard?.afterBead(bead, guardContext);
    }
    return outcome;
  }

  /** Counts a finished bead; the run's end when it stops the run. */
  private async account(bead: Bead, outcome: BeadOutcome): Promise<RunEnd | undefined> {
    const { ctx } = this;
    this.beadsRun += 1;
    if (outcome.kind === 'closed') {
      ctx.beadsClosed += 1;
      this.openKnown.delete(bead.id);
    }
    if (outcome.kind === 'skipped') {
      if (this.skipped.has(bead.id)) return end('stalled', outcome.message, bead.id);
      this.skipped.add(bead.id);
      ctx.warn(outcome.message, bead.id);
    }
    if (outcome.kind === 'stop')
      return { ...end(outcome.reason, outcome.message, bead.id), hint: outcome.hint };
    return Promise.resolve(undefined);
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

  private async nextBead(busy: ReadonlySet<string> = new Set()): Promise<Bead | undefined> {
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
    if (await this.epicLooksDone()) return undefined;
    const ready = (await this.takeReadyAtStart()) ?? (await d.store.ready(o.epicId, { recursive: true }));
    for (const bead of ready) {
      this.ctx.known.add(bead.id);
      this.openKnown.add(bead.id);
    }
    return pickNextBead(
      ready.filter((bead) => !busy.has(bead.id)),
      o.epicId,
    );
  }

  /**
   * The ready read made while the run was checked (RunnerOptions.readyAtStart), for the first pick only,
   * and only when nothing can have changed the beads since: recovery reopened none and no guard ran.
   * Undefined when it does not hold or failed (the caller reads again, and reports that read's error).
   */
  private async takeReadyAtStart(): Promise<readonly Bead[] | undefined> {
    const pending = this.o.readyAtStart;
    if (pending === undefined || this.readyAtStartTaken) return undefined;
    this.readyAtStartTaken = true;
    if (this.ctx.recovered.size > 0 || this.d.guard !== undefined) return undefined;
    return pending.catch(() => undefined);
  }

  /**
   * With every bead the run knows of closed, the read that explains the end comes before any ready read:
   * when it shows nothing open under the epic, no bead can be ready, and that read is not made (the
   * explanation takes this one). It shows beads made since too, so a bead an agent added is not missed.
   * Not in a loop: its strategist adds beads every cycle, and this would be one read more per cycle.
   */
  private async epicLooksDone(): Promise<boolean> {
    const { o, d, ctx } = this;
    const beside = this.endRead;
    this.endRead = undefined;
    if (d.idle !== undefined || this.openKnown.size > 0 || ctx.known.size === 0) return false;
    const early = beside === undefined ? undefined : await beside.graph.catch(() => undefined);
    const graph =
      beside !== undefined && early !== undefined
        ? closedIn(early, beside.bead)
        : await d.store.graph(o.epicId, { known: ctx.known });
    if (graph.beads.some((bead) => bead.status !== 'closed' && bead.issue_type !== 'epic')) return false;
    this.doneGraph = graph;
    return true;
  }

  /**
   * The last bead the run knows open is about to close: the read that explains the end (epicLooksDone)
   * starts beside its close instead of after it. The bead's agent is done and swept, so that close is
   * the only change the read can miss, and it is the runner's own: once it has closed, the read is taken
   * with that bead closed. A close that did not happen leaves the bead open, and the read unused.
   */
  private readEndBeside(beadId: string): void {
    const { o, d, ctx } = this;
    this.endRead = undefined;
    if (d.idle !== undefined || this.openKnown.size !== 1 || !this.openKnown.has(beadId)) return;
    const graph = d.store.graph(o.epicId, { known: ctx.known });
    graph.catch(() => undefined);
    this.endRead = { bead: beadId, graph };
  }

  private takeDoneGraph(): EpicGraph | undefined {
    const graph = this.doneGraph;
    this.doneGraph = undefined;
    return graph;
  }

  /** A dispatcher and an integration branch make a parallel run; `once` runs its one bead as always. */
  private parallelPorts(): ParallelPorts | undefined {
    const { dispatcher, integration } = this.d;
    if (dispatcher === undefined || integration === undefined || this.o.onlyBead !== undefined)
      return undefined;
    return { dispatcher, integration };
  }

  private async describePlan(): Promise<string> {
    const order = await planRun(this.d, this.o, this.o.graphAtStart);
    this.ctx.emit({ type: 'plan', epic: this.o.epicId, order });
    return order.length === 0
      ? `Nothing is ready in ${this.o.epicId}.`
      : `Would run ${order.length} bead(s) in this order (beads created during the run are not known yet).`;
  }

  private finishWith(why: RunEnd): RunSummary {
    return this.finish(why.reason, why.message, why.beadId, why.hint);
  }

  private finish(reason: StopReason, message: string, beadId?: string, hint?: string): RunSummary {
    const { ctx } = this;
    const summary: RunSummary = {
      reason,
      message,
      beadsRun: this.beadsRun,
      beadsClosed: ctx.beadsClosed,
      costUsd: ctx.costUsd,
      ...(ctx.gateMs > 0 ? { gateMs: ctx.gateMs } : {}),
      beadId,
      ...(hint === undefined ? {} : { hint }),
    };
    ctx.emit({ type: 'run_finished', epic: this.o.epicId, run_id: this.o.runId, summary });
    return summary;
  }
}

/** `graph` with bead `id` closed: a read made beside that bead's close, which has since succeeded. */
function closedIn(graph: EpicGraph, id: string): EpicGraph {
  return {
    ...graph,
    beads: graph.beads.map((bead) => (bead.id === id ? { ...bead, status: 'closed' } : bead)),
  };
}
