// Checks of an epic's dependency graph: cycles, dependencies on ids the store does not hold, and beads
// no run will ever reach because what they wait for can never close. Pure: data in, problems out.
import { BLOCKING_DEPENDENCY_TYPES, type Bead, type EpicGraph } from '../../beads/types.js';
import { FAILED_LABEL } from '../select.js';
import { nameSome, type Severity, type ValidationProblem } from './problems.js';

export interface GraphCheckInput {
  graph: EpicGraph;
  /** Which store holds the beads: the fixes say how to remove a dependency with it. */
  storeKind: 'br' | 'embedded';
}

const DONE = new Set(['closed', 'tombstone']);
const WONT_FIX = /won'?t[\s_-]?fix/i;
const HUMAN_LABEL = 'role:human';

interface Blocker {
  severity: Severity;
  /** Says what the blocker is, after its id: "bd-1 is deferred". */
  reason: string;
  kind: 'missing' | 'cycle' | 'dead' | 'soft';
}

/** The ids each bead waits for (blocking edge types only). */
function blockersOf(bead: { dependencies: readonly { id: string; dependency_type: string }[] }): string[] {
  return bead.dependencies
    .filter((edge) => BLOCKING_DEPENDENCY_TYPES.includes(edge.dependency_type))
    .map((edge) => edge.id);
}

export function checkGraph(input: GraphCheckInput): ValidationProblem[] {
  const { graph } = input;
  const epicId = graph.epic.id;
  const members = [graph.epic, ...graph.beads];
  const byId = new Map<string, Bead>(members.map((bead) => [bead.id, bead]));
  const waitsFor = new Map(members.map((bead) => [bead.id, blockersOf(bead)]));
  const outside = new Map(graph.outside.map((bead) => [bead.id, bead]));
  const missing = new Set(graph.missing);
  const statusOf = (id: string) => byId.get(id)?.status ?? outside.get(id)?.status;
  const isDone = (id: string) => DONE.has(statusOf(id) ?? '');
  const pending = members.filter((bead) => !DONE.has(bead.status));
  const removeHint = (from: string, to: string) =>
    input.storeKind === 'br'
      ? `br dep remove ${from} ${to}`
      : `delete the edge to ${to} from ${from}'s "dependencies" in .beads/issues.jsonl`;

  // Cycles among beads still to close (a closed bead satisfies its edges, so it ends any cycle).
  const edges = new Map(
    pending.map((bead) => [
      bead.id,
      (waitsFor.get(bead.id) ?? []).filter((id) => byId.has(id) && !isDone(id)),
    ]),
  );
  const cycles = findCycles(edges);
  const inCycle = new Set(cycles.flat());

  const ancestorsOf = (id: string): Set<string> => {
    const seen = new Set<string>();
    for (let at = byId.get(id)?.parent; at !== undefined && !seen.has(at); at = byId.get(at)?.parent)
      seen.add(at);
    return seen;
  };

  const blockerState = (waiter: string, target: string): Blocker | undefined => {
    if (missing.has(target))
      return { severity: 'error', kind: 'missing', reason: 'does not exist in the store' };
    if (inCycle.has(target)) return { severity: 'error', kind: 'cycle', reason: 'is in a dependency cycle' };
    const own = byId.get(target);
    if (own !== undefined) {
      if (target === epicId || (own.issue_type === 'epic' && ancestorsOf(waiter).has(target)))
        return {
          severity: 'error',
          kind: 'dead',
          reason: `is its own epic, which closes only after all its beads: they wait for each other`,
        };
      if (own.status === 'deferred')
        return {
          severity: 'error',
          kind: 'dead',
          reason: 'is deferred: no run takes it until it is reopened',
        };
      if (own.status === 'blocked')
        return {
          severity: 'error',
          kind: 'dead',
          reason: 'has status "blocked": no run takes it until it is set back to open',
        };
      if (own.issue_type === 'epic')
        return {
          severity: 'error',
          kind: 'dead',
          reason: `is an epic inside ${epicId}: ralph-loop closes only the epic it runs, never one inside it`,
        };
      if (own.labels.includes(FAILED_LABEL))
        return {
          severity: 'warning',
          kind: 'soft',
          reason: `failed in an earlier run (${FAILED_LABEL}): this run tries it again and stops if it fails again`,
        };
      return undefined;
    }
    const other = outside.get(target);
    if (other === undefined || other.status === 'in_progress') return undefined;
    if (other.status === 'deferred')
      return {
        severity: 'error',
        kind: 'dead',
        reason: `is outside ${epicId} and deferred: no run takes it`,
      };
    if (other.labels.includes(HUMAN_LABEL))
      return {
        severity: 'warning',
        kind: 'soft',
        reason: `is a question for a person, outside ${epicId}: the run stops there until someone closes it`,
      };
    if (other.labels.includes(FAILED_LABEL))
      return {
        severity: 'warning',
        kind: 'soft',
        reason: `is outside ${epicId} and failed in an earlier run (${FAILED_LABEL})`,
      };
    if (other.parent !== undefined)
      return {
        severity: 'warning',
        kind: 'soft',
        reason: `is outside ${epicId}, in ${other.parent}: only a run of ${other.parent} closes it`,
      };
    return {
      severity: 'error',
      kind: 'dead',
      reason: `is outside ${epicId} and in no epic: no run will take it`,
    };
  };

  // The first blocker that can never close, found through blockers and blocked parents (a blocked
  // parent holds back everything under it); undefined when the bead can be reached.
  const memo = new Map<string, string | null>();
  const deadBlocker = (id: string, visiting: Set<string>): string | undefined => {
    const known = memo.get(id);
    if (known !== undefined) return known ?? undefined;
    if (visiting.has(id)) return undefined;
    visiting.add(id);
    let found: string | undefined;
    for (const target of waitsFor.get(id) ?? []) {
      if (isDone(target)) continue;
      if (blockerState(id, target)?.severity === 'error') found = target;
      else if (byId.has(target)) found = deadBlocker(target, visiting);
      if (found !== undefined) break;
    }
    const parent = byId.get(id)?.parent;
    if (found === undefined && parent !== undefined && byId.has(parent))
      found = deadBlocker(parent, visiting);
    visiting.delete(id);
    memo.set(id, found ?? null);
    return found;
  };

  // Beads (not epics: no run takes an epic) that will never run, by the blocker that stops them.
  const stuckBy = new Map<string, string[]>();
  for (const bead of pending) {
    if (bead.id === epicId || bead.issue_type === 'epic' || inCycle.has(bead.id)) continue;
    const blocker = deadBlocker(bead.id, new Set());
    if (blocker === undefined) continue;
    stuckBy.set(blocker, [...(stuckBy.get(blocker) ?? []), bead.id]);
  }
  const stuckNote = (blocker: string, except: readonly string[] = []): string => {
    const stuck = (stuckBy.get(blocker) ?? []).filter((id) => !except.includes(id)).sort();
    return stuck.length === 0 ? '' : `; ${stuck.length} bead(s) never run because of it: ${nameSome(stuck)}`;
  };

  const problems: ValidationProblem[] = [];
  for (const cycle of cycles) {
    const around = [...cycle, cycle[0]].join(' → ');
    const waiting = [...new Set(cycle.flatMap((id) => stuckBy.get(id) ?? []))].sort();
    problems.push({
      severity: 'error',
      check: 'cycle',
      subject: cycle[0] ?? epicId,
      message: `dependency cycle ${around}: these beads wait for each other and none ever runs${waiting.length === 0 ? '' : `; ${waiting.length} more never run because of it: ${nameSome(waiting)}`}`,
      fix: `Remove one dependency of the cycle (${removeHint(cycle[0] ?? '', cycle[1] ?? cycle[0] ?? '')}, or another), whichever order is wrong.`,
    });
  }

  for (const bead of members) {
    for (const edge of bead.dependencies) {
      if (!missing.has(edge.id)) continue;
      const blocking = BLOCKING_DEPENDENCY_TYPES.includes(edge.dependency_type);
      problems.push({
        severity: blocking && !DONE.has(bead.status) ? 'error' : 'warning',
        check: 'dangling',
        subject: bead.id,
        message: `${bead.id} depends on ${edge.id} (${edge.dependency_type}), which the store does not hold${
          blocking && !DONE.has(bead.status) ? `: it never runs${stuckNote(edge.id, [bead.id])}` : ''
        }`,
        fix: `Remove the dependency (${removeHint(bead.id, edge.id)}), or restore ${edge.id} if it was lost in an import or merge.`,
      });
    }
  }

  const reported = new Set<string>();
  for (const bead of pending) {
    if (inCycle.has(bead.id)) continue;
    for (const target of waitsFor.get(bead.id) ?? []) {
      const closed = byId.get(target) ?? outside.get(target);
      if (closed !== undefined && DONE.has(closed.status)) {
        if (WONT_FIX.test(closed.close_reason ?? ''))
          problems.push({
            severity: 'warning',
            check: 'unreachable',
            subject: bead.id,
            message: `${bead.id} waits for ${target}, closed as won't fix ("${closed.close_reason ?? ''}"): it runs as if that work were done`,
            fix: `Remove the dependency if ${bead.id} does not need that work, else close ${bead.id} too or give it another way in.`,
          });
        continue;
      }
      const state = blockerState(bead.id, target);
      if (state === undefined || state.kind === 'missing' || state.kind === 'cycle') continue;
      if (state.severity === 'error' && bead.issue_type === 'epic') continue; // its beads are named below
      if (state.severity === 'error') reported.add(bead.id);
      problems.push({
        severity: state.severity,
        check: 'unreachable',
        subject: bead.id,
        message:
          state.severity === 'error'
            ? `${bead.id} never runs: it waits for ${target}, which ${state.reason}${stuckNote(target, [bead.id])}`
            : `${bead.id} waits for ${target}, which ${state.reason}`,
        fix:
          state.severity === 'error'
            ? `Close or reopen ${target} as its work needs, move it into ${epicId}, or remove the dependency (${removeHint(bead.id, target)}).`
            : `Nothing to do if that is intended; otherwise close ${target} first or remove the dependency (${removeHint(bead.id, target)}).`,
      });
    }
  }
  // Blockers that stop beads only through a parent (an epic inside this one waiting for a dead bead).
  for (const [blocker, stuck] of stuckBy) {
    if (missing.has(blocker) || inCycle.has(blocker) || stuck.some((id) => reported.has(id))) continue;
    problems.push({
      severity: 'error',
      check: 'unreachable',
      subject: stuck.sort()[0] ?? blocker,
      message: `${stuck.length} bead(s) never run: ${nameSome(stuck)} sit under a parent that waits for ${blocker}, which can never close`,
      fix: `Close or reopen ${blocker} as its work needs, or remove the dependency on it.`,
    });
  }
  for (const bead of pending) {
    if (bead.id === epicId || bead.issue_type === 'epic') continue;
    if (bead.status === 'blocked')
      problems.push({
        severity: 'warning',
        check: 'unreachable',
        subject: bead.id,
        message: `${bead.id} has status "blocked": no run takes it`,
        fix: `Set it back to open when it can run (br update ${bead.id} --status open), or close it.`,
      });
  }
  return problems;
}

/**
 * Each cycle of the graph once (its strongly connected components of more than one bead, and beads that
 * wait for themselves), as a path from its smallest id back round to it. Iterative, so a long chain
 * cannot overflow the stack.
 */
export function findCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of [...edges.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { id: string; next: number }[] = [{ id: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter);
    counter += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = (edges.get(frame.id) ?? []).filter((id) => edges.has(id));
      if (frame.next < targets.length) {
        const target = targets[frame.next]!;
        frame.next += 1;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter);
          counter += 1;
          stack.push(target);
          onStack.add(target);
          work.push({ id: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.id, Math.min(low.get(frame.id)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.id, Math.min(low.get(parent.id)!, low.get(frame.id)!));
      if (low.get(frame.id) !== index.get(frame.id)) continue;
      const component: string[] = [];
      for (;;) {
        const id = stack.pop()!;
        onStack.delete(id);
        component.push(id);
        if (id === frame.id) break;
      }
      const selfLoop = component.length === 1 && (edges.get(frame.id) ?? []).includes(frame.id);
      if (component.length > 1 || selfLoop) components.push(component);
    }
  }
  return components.map((component) => cyclePath(component, edges)).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** A shortest way round a strongly connected component, from its smallest id back to it. */
function cyclePath(component: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const next of [...(edges.get(at) ?? [])].sort()) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [at];
        for (let step = previous.get(at); step !== undefined; step = previous.get(step)) path.unshift(step);
        return path;
      }
      if (previous.has(next) || next === start) continue;
      previous.set(next, at);
      queue.push(next);
    }
  }
  return [start];
}
