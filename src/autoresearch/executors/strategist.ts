// The strategist (and resume-strategist, retrospective): full agents whose bead must leave the loop a next step.
import { join } from 'node:path';
import type { Executor, ExecutionRequest, ExecutionResult } from '../../loop/types.js';
import { updateIterationState } from '../iteration-state.js';
import { recordSpend } from '../spend.js';
import { iterOf as iterLabel } from '../../infra/labels.js';
import { loopRoleOf } from '../loop-beads.js';
import { placeInLoop, type AutoresearchContext } from './context.js';
import { recordSpecReentry } from './spec-reentry.js';

export const NEEDS_HUMAN_FILE = 'needs-human.md';

/**
 * A strategist must end the cycle somehow: stamp iteration N+1, stamp a retrospective, or ask the
 * user in needs-human.md. One that did none of these is retried once, then the loop stops with a
 * clear message instead of idling.
 */
export function createStrategistExecutor(
  context: AutoresearchContext,
  kind: 'strategist' | 'resume-strategist',
): Executor {
  return {
    kind,
    writesCode: false,
    maxAttempts: 2,
    async execute(request) {
      const placed = placeInLoop(request.bead);
      if (!placed.ok) return placed.result;
      const { iter } = placed;
      const result = await context.agents.full.execute(atStateRepo(context, request));
      await updateIterationState(context.files, context.workspace, iter + 1, (s) => ({
        ...s,
        costs: { ...s.costs, strategist: (s.costs.strategist ?? 0) + (result.costUsd ?? 0) },
      }));
      await recordSpend(context.files, context.workspace, kind, result);
      if (result.outcome !== 'ok') return result;
      const next = await nextStep(context, request.epicId, iter);
      if (next !== undefined) return { ...result, closeReason: `${kind}-${iter}: ${next}` };
      return {
        ...result,
        outcome: 'error',
        message:
          `${kind} for iteration ${iter} finished without stamping iteration ${iter + 1} ` +
          `(forge-pack stamp --epic ${request.epicId} --iter ${iter + 1} --directive-file …), a retrospective ` +
          `(forge-pack stamp --retrospective), or writing ${NEEDS_HUMAN_FILE}.`,
      } satisfies ExecutionResult;
    },
  };
}

export function createRetrospectiveExecutor(context: AutoresearchContext): Executor {
  return {
    kind: 'retrospective',
    writesCode: false,
    async execute(request) {
      const result = await context.agents.full.execute(atStateRepo(context, request));
      await recordSpend(context.files, context.workspace, 'retrospective', result);
      if (result.outcome !== 'ok') return result;
      const wrote = await context.files.exists(join(context.workspace, 'retrospective.md'));
      if (!wrote) request.onActivity?.('the retrospective did not write retrospective.md');
      // A loop serving a spec hands it back to the readiness gate, whatever the retrospective wrote.
      const spec = await recordSpecReentry(context, request.epicId);
      if (spec !== null) request.onActivity?.(spec);
      const written = wrote ? 'retrospective written' : 'retrospective ran; no retrospective.md';
      return { ...result, closeReason: spec === null ? written : `${written}; ${spec}` };
    },
  };
}

/** The request, run where the loop's files are (its prompt names them relative to that root). */
function atStateRepo(context: AutoresearchContext, request: ExecutionRequest): ExecutionRequest {
  return context.stateRepo === undefined ? request : { ...request, cwd: context.stateRepo };
}

async function nextStep(
  context: AutoresearchContext,
  epicId: string,
  iter: number,
): Promise<string | undefined> {
  const children = await context.store.children(epicId, { recursive: true });
  const stamped = children.some((bead) => loopRoleOf(bead) === 'doer' && iterLabel(bead) === iter + 1);
  if (stamped) return `stamped iteration ${iter + 1}`;
  if (children.some((bead) => loopRoleOf(bead) === 'retrospective')) return 'stamped the retrospective';
  if (await context.files.exists(join(context.workspace, NEEDS_HUMAN_FILE)))
    return `asked the user (${NEEDS_HUMAN_FILE})`;
  return undefined;
}
