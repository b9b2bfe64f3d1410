// Why an epic has nothing ready (done, terminal, waiting for a human, stalled), and the dry-run plan.
import { BLOCKING_DEPENDENCY_TYPES, type Bead, type BeadDetail, type EpicGraph } from '../beads/types.js';
import { agentSpecFor, compareForRun, describeAgentSource, FAILED_LABEL, roleOf } from './select.js';
import type { RunnerDeps, RunnerOptions, StopReason } from './types.js';

export interface IdleExplanation {
  reason: StopReason;
  message: string;
  beadId?: string | undefined;
}

/** How many open beads a stalled message names before summarising the rest. */
const NAMED_LIMIT = 5;

export async function explainIdleEpic(
  deps: Pick<RunnerDeps, 'store' | 'idle'>,
  epicId: string,
  known: Iterable<string> = [],
  /** That read, when the caller has just made it (the runner, finding its epic done). */
  read?: EpicGraph,
): Promise<IdleExplanation> {
  // One read of the epic with all its beads and their edges: the epic's status and why each open bead
  // is not ready come out of it, with no `show` per bead. The beads the run knows let br show them all
  // at once; the edges still find any bead made since.
  const graph = read ?? (await deps.store.graph(epicId, { known }));
  const children = graph.beads;
  const open = children.filter((bead) => bead.status !== 'closed' && bead.issue_type !== 'epic');

  // A terminal or needs-human state explains an idle epic better than "stalled". An epic waiting
  // for a human stays open even with every child closed: resume adds the next beads to it.
  const probe = await deps.idle?.explain(epicId);
  if (probe?.reason === 'needs_human') return { reason: 'needs_human', message: probe.detail };
  let closedNote = '';
  if (open.length === 0 && children.length > 0) {
    if (graph.epic.status !== 'closed')
      await deps.store.close(epicId, `All ${children.length} child beads are closed.`);
    closedNote = `All ${children.length} bead(s) of ${epicId} are closed; the epic is closed.`;
  }
  if (probe !== undefined) {
    return { reason: probe.reason, message: [probe.detail, closedNote].filter((s) => s !== '').join(' ') };
  }
  if (open.length === 0) {
    return { reason: 'done', message: children.length === 0 ? `Epic ${epicId} has no beads.` : closedNote };
  }

  const lines: string[] = [];
  for (const bead of open.sort(compareForRun).slice(0, NAMED_LIMIT)) {
    lines.push(`  ${bead.id} ${JSON.stringify(bead.title)}: ${whyNotReady(bead)}`);
  }
  if (open.length > NAMED_LIMIT) lines.push(`  … and ${open.length - NAMED_LIMIT} more`);
  return {
    reason: 'stalled',
    message: `${open.length} bead(s) of ${epicId} are open but none is ready:\n${lines.join('\n')}`,
    beadId: open[0]?.id,
  };
}

function whyNotReady(bead: BeadDetail): string {
  if (bead.status === 'in_progress') return 'in progress elsewhere';
  if (bead.status !== 'open') return `status ${bead.status}`;
  const blockers = bead.dependencies.filter(
    (dep) => BLOCKING_DEPENDENCY_TYPES.includes(dep.dependency_type) && dep.status !== 'closed',
  );
  if (blockers.length > 0) {
    return `waits for ${blockers.map((dep) => `${dep.id} (${dep.status ?? 'missing'})`).join(', ')}`;
  }
  if (bead.labels.includes(FAILED_LABEL)) return 'failed in an earlier run (ralph:failed)';
  if (bead.parent !== undefined && bead.parent !== bead.id) return `its parent ${bead.parent} is blocked`;
  return 'not ready (deferred or blocked upstream)';
}

/**
 * The order a run would take, simulated from the current beads: each step takes the first bead whose
 * blockers are all closed (or taken earlier in the plan), by the runner's own ordering. One read of the
 * epic's graph serves it (`read`, when the caller has made it already), not a read of each bead.
 */
export async function planRun(
  deps: Pick<RunnerDeps, 'store'> & Partial<Pick<RunnerDeps, 'executors'>>,
  options: Pick<RunnerOptions, 'epicId' | 'agents' | 'onlyBead' | 'maxBeads'>,
  read?: EpicGraph,
): Promise<{ id: string; title: string; role: string; agent: string; agent_source: string }[]> {
  const describe = (bead: Bead) => {
    const role = roleOf(bead);
    const chosen = agentSpecFor(bead, role, options.agents);
    // A built-in executor (an arbiter, a hard-metric judge) runs no agent, whatever would be chosen.
    const builtin = deps.executors?.resolve(role).builtin === true;
    return {
      id: bead.id,
      title: bead.title,
      role,
      agent: builtin ? 'built-in' : chosen.spec,
      agent_source: builtin ? 'built-in executor' : describeAgentSource(chosen, role),
    };
  };
  if (options.onlyBead !== undefined) return [describe(await deps.store.show(options.onlyBead))];

  const graph = read ?? (await deps.store.graph(options.epicId));
  // A blocker outside the epic that is closed holds nothing up, as one of its own beads closed.
  const closed = new Set(
    [...graph.beads, ...graph.outside].filter((b) => b.status === 'closed').map((b) => b.id),
  );
  const pending = graph.beads.filter(
    (b) => b.status !== 'closed' && b.issue_type !== 'epic' && b.id !== options.epicId,
  );
  const blockersOf = new Map<string, string[]>();
  for (const bead of pending) {
    blockersOf.set(
      bead.id,
      bead.dependencies
        .filter((dep) => BLOCKING_DEPENDENCY_TYPES.includes(dep.dependency_type))
        .map((dep) => dep.id),
    );
  }
  const plan: ReturnType<typeof describe>[] = [];
  let remaining = pending.sort(compareForRun);
  for (;;) {
    if (options.maxBeads > 0 && plan.length >= options.maxBeads) break;
    const next = remaining.find((bead) => (blockersOf.get(bead.id) ?? []).every((id) => closed.has(id)));
    if (next === undefined) break;
    plan.push(describe(next));
    closed.add(next.id);
    remaining = remaining.filter((bead) => bead.id !== next.id);
  }
  return plan;
}
