// The strategist (and resume-strategist, retrospective): full agents whose bead must leave the loop a next step.
import { join } from 'node:path';
import type { Executor, ExecutionRequest, ExecutionResult } from '../../loop/types.js';
import { updateIterationState, withTamper } from '../iteration-state.js';
import { recordSpend } from '../spend.js';
import { iterOf as iterLabel } from '../../infra/labels.js';
import { CYCLE_ROLES, loopRoleOf } from '../loop-beads.js';
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
      const before = await beadStatuses(context, request.epicId);
      const ran = await context.agents.full.execute(atStateRepo(context, request));
      const result = await reopenClosedBy(context, request, before, { role: kind, iter: iter + 1 }, ran);
      await updateIterationState(context.files, context.workspace, iter + 1, (s) => ({
        ...s,
        costs: { ...s.costs, strategist: (s.costs.strategist ?? 0) + (result.costUsd ?? 0) },
      }));
      await recordSpend(context.files, context.workspace, kind, result);
      if (result.outcome !== 'ok') return result;
      const next = await nextStep(context, request.epicId, iter);
      if (next !== undefined && typeof next !== 'string') {
        // Seen: a stamp killed after doer-2 was made; the loop ran doer-2, found nothing ready after it
        // and closed the epic as done, the doer's commit unjudged. Stamping again makes what is missing.
        return {
          ...result,
          outcome: 'error',
          message:
            `${kind} for iteration ${iter} stamped iteration ${iter + 1} only in part (no ${next.missing.join(', ')}): ` +
            `forge-pack stamp --epic ${request.epicId} --iter ${iter + 1} makes the missing beads.`,
        } satisfies ExecutionResult;
      }
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
      const before = await beadStatuses(context, request.epicId);
      const ran = await context.agents.full.execute(atStateRepo(context, request));
      const result = await reopenClosedBy(context, request, before, { role: 'retrospective' }, ran);
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
): Promise<string | { missing: string[] } | undefined> {
  const children = await context.store.children(epicId, { recursive: true });
  const roles = new Set(children.filter((bead) => iterLabel(bead) === iter + 1).map(loopRoleOf));
  if (roles.has('doer')) {
    const missing = CYCLE_ROLES.filter((role) => !roles.has(role)).map((role) => `${role}-${iter + 1}`);
    return missing.length === 0 ? `stamped iteration ${iter + 1}` : { missing };
  }
  if (children.some((bead) => loopRoleOf(bead) === 'retrospective')) return 'stamped the retrospective';
  if (await context.files.exists(join(context.workspace, NEEDS_HUMAN_FILE)))
    return `asked the user (${NEEDS_HUMAN_FILE})`;
  return undefined;
}

/** The status of each of the epic's beads, before an agent of the loop runs. */
async function beadStatuses(context: AutoresearchContext, epicId: string): Promise<Map<string, string>> {
  const children = await context.store.children(epicId, { recursive: true });
  return new Map(children.map((bead) => [bead.id, bead.status]));
}

/**
 * Only the runner closes a loop's beads, each when its step is done, and it closes none while an agent
 * of the loop runs. A strategist (which may create beads: it stamps) that stamped iteration N+1 and then
 * closed its judge and arbiter had the doer's change stand in the tree unjudged, and the loop ended as
 * done (found by the red team). Whatever such an agent closed, open before or made during its run, is
 * opened again, and recorded as its tamper (on the iteration it prepares, when it has one).
 */
async function reopenClosedBy(
  context: AutoresearchContext,
  request: ExecutionRequest,
  before: ReadonlyMap<string, string>,
  who: { role: string; iter?: number },
  result: ExecutionResult,
): Promise<ExecutionResult> {
  const after = await context.store.children(request.epicId, { recursive: true });
  const closed = after.filter(
    (bead) => bead.status === 'closed' && before.get(bead.id) !== 'closed' && bead.id !== request.bead.id,
  );
  if (closed.length === 0) return result;
  const named: string[] = [];
  for (const bead of closed) {
    await context.store.reopen(
      bead.id,
      `Reopened by ralph-loop: the ${who.role} closed it; only the runner closes a loop's beads.`,
    );
    named.push(`bead ${bead.id} (${bead.title})`);
  }
  const tamper = { role: who.role, paths: named, what: 'closed beads of the loop' };
  if (who.iter !== undefined) {
    await updateIterationState(context.files, context.workspace, who.iter, (s) => withTamper(s, tamper));
  }
  request.onActivity?.(`tamper: the ${who.role} closed ${named.join(', ')}; opened again`);
  return { ...result, tampered: [...(result.tampered ?? []), ...named] };
}
