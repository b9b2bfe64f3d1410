// The fake br's dependency graph: blocking, ready work in hybrid order, parents and cycles, as br.md describes.

export const BLOCKING_TYPES = new Set(['blocks', 'conditional-blocks', 'waits-for']);

export function parentOf(state, id) {
  return state.dependencies.find((d) => d.issue_id === id && d.type === 'parent-child')?.depends_on_id;
}

export function childrenOf(state, id) {
  return state.dependencies
    .filter((d) => d.depends_on_id === id && d.type === 'parent-child')
    .map((d) => d.issue_id);
}

export function descendantsOf(state, id) {
  const result = [];
  const queue = [...childrenOf(state, id)];
  const seen = new Set([id]);
  while (queue.length > 0) {
    const next = queue.shift();
    if (seen.has(next)) continue;
    seen.add(next);
    result.push(next);
    queue.push(...childrenOf(state, next));
  }
  return result;
}

/** Blocked by dependencies: an open (or missing) blocker, or a parent that is itself blocked. */
export function isDependencyBlocked(state, id, seen = new Set()) {
  if (seen.has(id)) return false;
  seen.add(id);
  for (const edge of state.dependencies) {
    if (edge.issue_id !== id || !BLOCKING_TYPES.has(edge.type)) continue;
    const blocker = state.issues[edge.depends_on_id];
    if (blocker === undefined || blocker.status !== 'closed') return true;
  }
  const parent = parentOf(state, id);
  return parent !== undefined && isDependencyBlocked(state, parent, seen);
}

export function blockersOf(state, id) {
  return state.dependencies
    .filter((edge) => edge.issue_id === id && BLOCKING_TYPES.has(edge.type))
    .filter((edge) => state.issues[edge.depends_on_id]?.status !== 'closed')
    .map((edge) => edge.depends_on_id);
}

/** br's hybrid sort: P0–P1 oldest first, then the rest oldest first. */
export function compareHybrid(a, b) {
  const ua = a.priority <= 1 ? 0 : 1;
  const ub = b.priority <= 1 ? 0 : 1;
  if (ua !== ub) return ua - ub;
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : 1;
}

/**
 * Ready issues as a given generation lists them. `scope`: undefined (all), or `{ parent, recursive }`.
 */
export function readyIssues(state, gen, scope) {
  let candidates = Object.values(state.issues);
  if (scope !== undefined) {
    const ids = new Set(
      scope.recursive ? descendantsOf(state, scope.parent) : childrenOf(state, scope.parent),
    );
    candidates = candidates.filter((issue) => ids.has(issue.id));
  }
  return candidates
    .filter(
      (issue) => issue.status === 'open' || (gen.readyIncludesInProgress && issue.status === 'in_progress'),
    )
    .filter((issue) => !isDependencyBlocked(state, issue.id))
    .filter(
      (issue) =>
        !(
          gen.epicsBlockedByChildren &&
          issue.issue_type === 'epic' &&
          childrenOf(state, issue.id).some((child) => state.issues[child]?.status !== 'closed')
        ),
    )
    .sort(compareHybrid);
}

/** A path from `from` to `to` along blocking edges, if there is one (adding to → from would close a cycle). */
export function blockingPath(state, from, to) {
  const previous = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === to) {
      const path = [];
      for (let node = to; node !== undefined; node = previous.get(node)) path.unshift(node);
      return path;
    }
    for (const edge of state.dependencies) {
      if (edge.issue_id !== current || !BLOCKING_TYPES.has(edge.type) || previous.has(edge.depends_on_id))
        continue;
      previous.set(edge.depends_on_id, current);
      queue.push(edge.depends_on_id);
    }
  }
  return undefined;
}
