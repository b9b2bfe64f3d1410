// One attempt of a bead in a parallel run: handed to the dispatcher, then, in pick order, applied on the
// integration branch and gated there; a conflict or a red gate undoes it and is the attempt's failure.
import { attemptBranchOf, attemptIdOf, type AttemptDispatcher } from './attempt-dispatch.js';
import type { AttemptSpec, AttemptVia, LandedAttempt } from './bead-attempts.js';
import { checkGates, type GatedAttempt } from './gated-attempt.js';
import type { Integration } from './integration.js';
import { tooLargeWarning, type RunContext } from './run-context.js';
import type { ExecutionResult } from './types.js';

export interface ParallelPorts {
  dispatcher: AttemptDispatcher;
  integration: Integration;
}

/**
 * The attempts of one bead. `turn` settles when every bead picked before it is done: its results are
 * applied only then, so the integration branch gets them in pick order whatever finishes first.
 */
export function parallelVia(ctx: RunContext, ports: ParallelPorts, turn: Promise<void>): AttemptVia {
  return {
    async run(spec) {
      if (spec.attempt === 1 && ctx.recovered.has(spec.bead.id)) {
        const before = await landedBefore(ctx, ports, spec, turn);
        if (before !== undefined) return before;
      }
      return runAndApply(ctx, ports, spec, turn);
    },
  };
}

function gate(ctx: RunContext, spec: AttemptSpec, result: ExecutionResult): Promise<GatedAttempt> {
  const { o, d } = ctx;
  return checkGates(result, spec.gates, d.gateProcess, {
    cwd: o.cwd,
    signal: o.signal,
    maxMs: ctx.wallClockLeft(),
    onOutcome: (outcome) =>
      ctx.emit({
        type: 'gate_finished',
        epic: o.epicId,
        bead: spec.bead.id,
        attempt: spec.attempt,
        ...outcome,
      }),
  });
}

async function runAndApply(
  ctx: RunContext,
  { dispatcher, integration }: ParallelPorts,
  spec: AttemptSpec,
  turn: Promise<void>,
): Promise<LandedAttempt> {
  const { o, d } = ctx;
  const { bead, attempt } = spec;
  const groups: number[] = [];
  const returned = await dispatcher
    .run(
      {
        attemptId: attemptIdOf(o.runId, bead.id, attempt),
        epicId: o.epicId,
        bead,
        role: spec.role,
        agentSpec: spec.agentSpec,
        agentFromLabel: spec.fromLabel,
        attempt,
        feedback: spec.feedback,
        timeoutMs: spec.timeoutMs,
        base: await integration.head(),
        branch: attemptBranchOf(o.epicId, bead.id, attempt),
        ...(o.sizeLimits === undefined ? {} : { sizeLimits: o.sizeLimits }),
      },
      {
        signal: o.signal,
        transcriptPath: d.control.transcriptPath(bead.id),
        transcriptRoot: d.control.transcriptRoot,
        onActivity: (message) => ctx.emit({ type: 'activity', epic: o.epicId, bead: bead.id, message }),
        onSpawn: (pid) => {
          groups.push(pid);
          d.agentGroups?.add(pid);
        },
      },
    )
    .catch((error: unknown) => ({
      outcome: 'error' as const,
      message: error instanceof Error ? error.message : String(error),
      commit: undefined,
      worker: undefined,
      tooLarge: undefined,
    }))
    .finally(() => {
      for (const pid of groups) d.agentGroups?.delete(pid);
    });
  const { commit, worker: _worker, tooLarge, ...result } = returned;
  if (tooLarge !== undefined && tooLarge.length > 0 && o.sizeLimits !== undefined) {
    ctx.warn(tooLargeWarning(bead.id, tooLarge, o.sizeLimits, false), bead.id);
  }
  await turn;
  if (result.outcome !== 'ok' || commit === undefined) return gate(ctx, spec, result);

  const before = await integration.head();
  const applied = await integration.apply(commit);
  if (!applied.ok) {
    ctx.emit({ type: 'merge_conflict', epic: o.epicId, bead: bead.id, attempt, message: applied.conflict });
    const { exitCode: _exit, closeReason: _reason, ...rest } = result;
    return {
      result: {
        ...rest,
        outcome: 'error',
        message: 'its result conflicts with the integration branch; retried on the new head',
        detail: applied.conflict,
      },
      feedback: applied.conflict,
      gateMs: 0,
    };
  }
  const gated = await gate(ctx, spec, result);
  if (gated.result.outcome !== 'ok') {
    await integration.undo(before);
    return gated;
  }
  ctx.emit({ type: 'merged', epic: o.epicId, bead: bead.id, attempt, commit: applied.sha });
  return { ...gated, commit: applied.sha };
}

/**
 * A bead a dead runner left in progress may have landed already (its commit made, the bead not yet
 * closed): it is closed on that commit, never applied twice. Only that runner's attempts count, known
 * by the run id its lock named: a commit of the bead's earlier life (closed, its result reverted, the
 * bead reopened to be redone) carries the same bead trailer, and closing on it closed the redo
 * without running it (fault injection). With no lock taken over, no run is known: the bead runs
 * again, on a head that holds whatever did land. Only the branch's head can be a result whose gates
 * never finished (a later one is applied only after them): that one is gated again, and undone when
 * red so the bead runs again.
 */
async function landedBefore(
  ctx: RunContext,
  ports: ParallelPorts,
  spec: AttemptSpec,
  turn: Promise<void>,
): Promise<LandedAttempt | undefined> {
  const dead = ctx.recoveredFrom;
  const sha = dead === undefined ? undefined : await ports.integration.landed(spec.bead.id, dead);
  if (sha === undefined) return undefined;
  await turn;
  const done: ExecutionResult = {
    outcome: 'ok',
    message: `its result landed in ${sha.slice(0, 12)} before the runner that claimed it stopped`,
    closeReason: `Done by ralph-loop: its result landed in ${sha.slice(0, 12)} before the runner that claimed it stopped.`,
  };
  if (sha !== (await ports.integration.head())) return { result: done, gateMs: 0, commit: sha };
  const gated = await gate(ctx, spec, done);
  if (gated.result.outcome === 'ok') return { ...gated, commit: sha };
  await ports.integration.undo(await ports.integration.parentOf(sha));
  return undefined;
}
