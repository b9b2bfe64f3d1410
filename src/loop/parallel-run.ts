// The scheduler of a `--parallel N` run: up to N plain agent beads in flight, each claimed once and run
// through the dispatcher; their results land in pick order (parallel-attempt.ts). A bead that is not a
// plain code-writing agent (a loop's roles, built-in work) waits for the others and runs alone in the tree.
import type { Bead } from '../beads/types.js';
import type { AttemptVia } from './bead-attempts.js';
import { executorRunsGates } from './gated-attempt.js';
import { parallelVia, type ParallelPorts } from './parallel-attempt.js';
import type { BeadOutcome, RunContext, RunEnd } from './run-context.js';
import { roleOf } from './select.js';
import type { Executor, RunSummary } from './types.js';

/** Whether a bead may run in a worktree beside others: its executor writes code, gates it, and is an agent. */
export function runsInParallel(executor: Executor): boolean {
  return executor.writesCode && executor.builtin !== true && executorRunsGates(executor);
}

/** What the runner lends the scheduler: its checks, its pick, its bookkeeping. */
export interface SchedulerHooks {
  /** A reason to pick no more beads (interrupt, stop, caps), counting `inFlight` as run. */
  reasonToStop(inFlight: number): Promise<RunEnd | undefined>;
  /** The next ready bead not in `busy`. */
  nextBead(busy: ReadonlySet<string>): Promise<Bead | undefined>;
  /** A guard's veto of `bead` (checked before it is claimed), as the run's end. */
  veto(bead: Bead): Promise<RunEnd | undefined>;
  /** Runs a bead (guards around it), through `via` or in the tree. */
  runBead(bead: Bead, via?: AttemptVia): Promise<BeadOutcome>;
  /** Counts a finished bead; a summary when the run must end because of it. */
  account(bead: Bead, outcome: BeadOutcome): Promise<RunEnd | undefined>;
  /** Nothing ready and nothing in flight. */
  idle(): Promise<RunEnd>;
  /** The run's summary (and its last event), once nothing is in flight. */
  finish(why: RunEnd): RunSummary;
}

type Settled = { ok: true; outcome: BeadOutcome } | { ok: false; error: unknown };

interface InFlight {
  bead: Bead;
  done: Promise<Settled>;
}

export async function runParallelLoop(
  ctx: RunContext,
  ports: ParallelPorts,
  hooks: SchedulerHooks,
): Promise<RunSummary> {
  const capacity = Math.max(1, ports.dispatcher.capacity);
  const inFlight: InFlight[] = [];
  /** Settles when the last bead handed out is done: the next one's turn to land. */
  let tail: Promise<void> = Promise.resolve();
  let ended: RunEnd | undefined;

  /** The beads in flight go into the lock, for `ralph-loop status`. */
  const showRunning = () => ctx.d.lock.update({ running: inFlight.map((entry) => entry.bead.id) });

  /** Waits for the oldest bead in flight and counts it; the first reason to end is kept. */
  const settleOldest = async (): Promise<void> => {
    const first = inFlight.shift();
    if (first === undefined) return;
    const settled = await first.done;
    await showRunning();
    if (!settled.ok) throw settled.error;
    const stop = await hooks.account(first.bead, settled.outcome);
    ended ??= stop;
  };

  try {
    for (;;) {
      ended ??= await hooks.reasonToStop(inFlight.length);
      if (ended !== undefined) {
        while (inFlight.length > 0) await settleOldest();
        return hooks.finish(ended);
      }
      if (inFlight.length >= capacity) {
        await settleOldest();
        continue;
      }
      const bead = await hooks.nextBead(new Set(inFlight.map((entry) => entry.bead.id)));
      if (bead === undefined) {
        if (inFlight.length === 0) return hooks.finish(await hooks.idle());
        await settleOldest();
        continue;
      }
      ended = await hooks.veto(bead);
      if (ended !== undefined) continue;
      if (!runsInParallel(ctx.d.executors.resolve(roleOf(bead)))) {
        while (inFlight.length > 0 && ended === undefined) await settleOldest();
        if (ended !== undefined) continue;
        ended = await hooks.account(bead, await hooks.runBead(bead));
        continue;
      }
      const turn = tail;
      let release = (): void => undefined;
      tail = new Promise<void>((resolve) => (release = resolve));
      const done = hooks
        .runBead(bead, parallelVia(ctx, ports, turn))
        .then(
          (outcome): Settled => ({ ok: true, outcome }),
          (error: unknown): Settled => ({ ok: false, error }),
        )
        .finally(release);
      inFlight.push({ bead, done });
      await showRunning();
    }
  } finally {
    // An error ends the run: what is still in flight finishes first, so nothing is torn mid-merge.
    await Promise.all(inFlight.map((entry) => entry.done));
  }
}
