// Ready work and children of an epic, with the cheapest call sequence each br version allows.
//
// br 0.2.12+: one `br ready --parent EPIC` (or `--epic EPIC` for descendants); its rows carry labels.
// br 0.1.13 to 0.2.11: the same `ready --parent EPIC [--recursive]`, then one batched `br show` of the
// beads it listed, because their ready rows carry no labels and the runner routes on labels.
// br 0.1.12 has no `ready --parent`: one `br ready` of the whole workspace, one batched `br show` of those
// beads (labels, and the parent of each), keeping the children of the epic; for descendants, one more
// show per level of parents not yet seen. That is cheaper than walking down one `dep list` per node.
import type { z } from 'zod';
import type { Bead, BeadDetail, EpicGraph } from '../types.js';
import { BeadStoreError } from '../../infra/errors.js';
import { compareTimestamps } from '../types.js';
import type { BrCall, BrClient } from './client.js';
import { beadOnly, toBead } from './rows.js';
import type { BrSchemas } from './store.js';

export interface HierarchyDeps {
  client: BrClient;
  /** Runs a call and parses its first result document with the schema `pick` names. */
  query<S extends z.ZodType>(call: BrCall, pick: (schemas: BrSchemas) => S): Promise<z.output<S>>;
  showMany(ids: readonly string[]): Promise<BeadDetail[]>;
}

/**
 * Never the epic, never another epic, never anything but `open`: old brs list epics and in_progress beads
 * as ready, and the filter costs nothing on new ones.
 */
function isRunnable(epicId: string) {
  return (bead: Bead): boolean => bead.id !== epicId && bead.status === 'open' && bead.issue_type !== 'epic';
}

async function readyRows(deps: HierarchyDeps, args: readonly string[]): Promise<Bead[]> {
  const rows = await deps.query(
    { command: ['ready'], args: ['--limit', '0', ...args] },
    (s) => s.readySchema,
  );
  return rows.map((row) => toBead(row));
}

export async function readyOfEpic(deps: HierarchyDeps, epicId: string, recursive: boolean): Promise<Bead[]> {
  const features = await deps.client.features();
  if (!features.readyParent) return readyByAncestry(deps, epicId, recursive);
  const scope =
    recursive && features.readyEpic
      ? [`--epic=${epicId}`]
      : [`--parent=${epicId}`, ...(recursive ? ['--recursive'] : [])];
  const beads = (await readyRows(deps, scope)).filter(isRunnable(epicId));
  if (features.readyLabels || beads.length === 0) return beads;
  const details = await detailsById(deps, beads);
  return beads.map((bead) => details.get(bead.id) ?? bead).filter(isRunnable(epicId));
}

async function detailsById(deps: HierarchyDeps, beads: readonly Bead[]): Promise<Map<string, Bead>> {
  const details = await deps.showMany(beads.map((bead) => bead.id));
  return new Map(details.map((detail) => [detail.id, beadOnly(detail)]));
}

/** Ids of the epic's direct children (`dep list` rows name the child as issue_id). */
async function directChildIds(deps: HierarchyDeps, epicId: string): Promise<string[]> {
  const call: BrCall = {
    command: ['dep', 'list'],
    args: [epicId, '--direction', 'up', '-t', 'parent-child'],
  };
  const rows = await deps.query(call, (s) => s.depListSchema);
  const ids = rows
    .filter((row) => (row.type ?? row.dependency_type ?? 'parent-child') === 'parent-child')
    .map((row) => (row.issue_id === epicId ? row.depends_on_id : row.issue_id))
    .filter((id) => id !== epicId);
  return [...new Set(ids)];
}

/** v0.1.12: the ready beads whose parent is the epic or, with `recursive`, whose chain of parents reaches it. */
async function readyByAncestry(deps: HierarchyDeps, epicId: string, recursive: boolean): Promise<Bead[]> {
  const ready = (await readyRows(deps, [])).filter(isRunnable(epicId));
  if (ready.length === 0) return [];
  const details = await detailsById(deps, ready);
  const parentOf = new Map<string, string | undefined>([[epicId, undefined]]);
  for (const bead of ready) parentOf.set(bead.id, details.get(bead.id)?.parent);
  let unknown = recursive ? unseenParents(parentOf) : [];
  while (unknown.length > 0) {
    const ancestors = await deps.showMany(unknown);
    for (const id of unknown) parentOf.set(id, ancestors.find((a) => a.id === id)?.parent);
    unknown = unseenParents(parentOf);
  }
  const descends = (id: string): boolean => {
    const visited = new Set<string>();
    let current = parentOf.get(id);
    while (current !== undefined && !visited.has(current)) {
      if (current === epicId) return true;
      if (!recursive) return false;
      visited.add(current);
      current = parentOf.get(current);
    }
    return false;
  };
  return ready
    .filter((bead) => descends(bead.id))
    .map((bead) => details.get(bead.id) ?? bead)
    .filter(isRunnable(epicId));
}

function unseenParents(parentOf: Map<string, string | undefined>): string[] {
  const parents = new Set([...parentOf.values()].filter((id): id is string => id !== undefined));
  return [...parents].filter((id) => !parentOf.has(id));
}

/** Children of the epic (all descendants with `recursive`): one dep list, then one show per level. */
export async function childrenOfEpic(
  deps: HierarchyDeps,
  epicId: string,
  recursive: boolean,
): Promise<Bead[]> {
  const seen = new Set<string>([epicId]);
  const result: Bead[] = [];
  let level = await directChildIds(deps, epicId);
  while (level.length > 0) {
    level = level.filter((id) => !seen.has(id));
    if (level.length === 0) break;
    for (const id of level) seen.add(id);
    const details = await deps.showMany(level);
    result.push(...details.map(beadOnly));
    if (!recursive) break;
    level = details.flatMap((detail) =>
      detail.dependents.filter((edge) => edge.dependency_type === 'parent-child').map((edge) => edge.id),
    );
  }
  return result.sort((a, b) => compareTimestamps(a.created_at, b.created_at) || (a.id < b.id ? -1 : 1));
}

/**
 * The epic's graph: the calls `children -r` makes (one dep list, one batched show per level, the epic
 * shown with its children), then one batched show of what its beads depend on outside it. br lists an
 * edge to an id it does not hold (a LEFT JOIN); showing that id fails, and only then is each shown alone.
 */
export async function graphOfEpic(
  deps: HierarchyDeps,
  epicId: string,
  known: readonly string[] = [],
): Promise<EpicGraph> {
  if (known.length > 0) {
    const graph = await graphFromKnown(deps, epicId, known);
    if (graph !== undefined) return graph;
  }
  const seen = new Set<string>([epicId]);
  const beads: BeadDetail[] = [];
  let epic: BeadDetail | undefined;
  let level = await directChildIds(deps, epicId);
  let first = true;
  while (first || level.length > 0) {
    level = level.filter((id) => !seen.has(id));
    if (!first && level.length === 0) break;
    for (const id of level) seen.add(id);
    const details = await deps.showMany(first ? [epicId, ...level] : level);
    for (const detail of details) {
      if (detail.id === epicId) epic = detail;
      else beads.push(detail);
    }
    level = details
      .filter((detail) => detail.id !== epicId)
      .flatMap((detail) =>
        detail.dependents.filter((edge) => edge.dependency_type === 'parent-child').map((edge) => edge.id),
      );
    first = false;
  }
  if (epic === undefined) {
    throw new BeadStoreError(`br show found no bead ${epicId}.`, { code: 'ISSUE_NOT_FOUND' });
  }
  const targets = [
    ...new Set([epic, ...beads].flatMap((detail) => detail.dependencies.map((edge) => edge.id))),
  ].filter((id) => !seen.has(id));
  const { found, missing } = await showExisting(deps, targets);
  return { epic, beads, outside: found.map(beadOnly), missing };
}

/**
 * The graph from ids believed to be the epic's beads: one `show` of the epic and all of them, then a
 * `show` only of beads the parent-child edges reach that were not among them (beads created since).
 * What the edges do not reach from the epic (reparented since) is left out, so the result is the walk's.
 * Undefined when a known id is gone (shown as not found): the caller walks from the epic instead.
 */
async function graphFromKnown(
  deps: HierarchyDeps,
  epicId: string,
  known: readonly string[],
): Promise<EpicGraph | undefined> {
  const details = new Map<string, BeadDetail>();
  let batch = [...new Set([epicId, ...known])];
  while (batch.length > 0) {
    let shown: BeadDetail[];
    try {
      shown = await deps.showMany(batch);
    } catch (error) {
      if (error instanceof BeadStoreError && error.code === 'ISSUE_NOT_FOUND') return undefined;
      throw error;
    }
    for (const detail of shown) details.set(detail.id, detail);
    for (const id of batch) if (!details.has(id)) return undefined;
    batch = [...reachable(details, epicId)].filter((id) => !details.has(id));
  }
  const epic = details.get(epicId);
  if (epic === undefined) return undefined;
  const order = [...reachable(details, epicId)].filter((id) => id !== epicId);
  const beads = order.map((id) => details.get(id)).filter((d): d is BeadDetail => d !== undefined);
  const seen = new Set([epicId, ...order]);
  const targets = [
    ...new Set([epic, ...beads].flatMap((detail) => detail.dependencies.map((edge) => edge.id))),
  ].filter((id) => !seen.has(id));
  const { found, missing } = await showExisting(deps, targets);
  return { epic, beads, outside: found.map(beadOnly), missing };
}

/** Ids reached from `rootId` along parent-child edges of the shown details (breadth first, root first). */
function reachable(details: ReadonlyMap<string, BeadDetail>, rootId: string): Set<string> {
  const reached = new Set<string>([rootId]);
  const queue = [rootId];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    for (const edge of details.get(id)?.dependents ?? []) {
      if (edge.dependency_type !== 'parent-child' || reached.has(edge.id)) continue;
      reached.add(edge.id);
      queue.push(edge.id);
    }
  }
  return reached;
}

async function showExisting(
  deps: HierarchyDeps,
  ids: readonly string[],
): Promise<{ found: BeadDetail[]; missing: string[] }> {
  if (ids.length === 0) return { found: [], missing: [] };
  let found: BeadDetail[];
  try {
    found = await deps.showMany(ids);
  } catch (error) {
    if (!(error instanceof BeadStoreError) || error.code !== 'ISSUE_NOT_FOUND') throw error;
    if (ids.length === 1) return { found: [], missing: [...ids] };
    const each = await Promise.all(ids.map((id) => showExisting(deps, [id])));
    return { found: each.flatMap((e) => e.found), missing: each.flatMap((e) => e.missing).sort() };
  }
  const have = new Set(found.map((detail) => detail.id));
  return { found, missing: ids.filter((id) => !have.has(id)).sort() };
}
