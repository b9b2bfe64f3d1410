// Pure graph rules over a record set: hierarchy, blocking, readiness (br's semantics) and cycle checks.
import { BLOCKING_DEPENDENCY_TYPES, compareHybrid } from '../types.js';
import type { Bead } from '../types.js';
import { indexOf } from './record-index.js';
import { PARENT_CHILD, parentOf, toBead } from './records.js';
import type { IssueMap, IssueRecord } from './records.js';

const BLOCKING = new Set(BLOCKING_DEPENDENCY_TYPES);
/** Edge types a cycle may not run through: the blocking set plus the hierarchy (br counts both). */
const ACYCLIC = new Set([...BLOCKING_DEPENDENCY_TYPES, PARENT_CHILD]);
/** Statuses that satisfy a blocking edge. */
const TERMINAL = new Set(['closed', 'tombstone']);

export function mustStayAcyclic(type: string): boolean {
  return ACYCLIC.has(type);
}

/** Children of `parentId` through parent-child edges; all descendants when `recursive`. */
export function descendantsOf(issues: IssueMap, parentId: string, recursive: boolean): IssueRecord[] {
  const index = indexOf(issues);
  return walkChildren(issues, parentId, recursive, (id) => index.childIds(id));
}

/**
 * The descendants that can still be ready and the paths to them: closed leaves are left out, so the
 * walk does not grow with the beads a loop has finished.
 */
function activeDescendantsOf(issues: IssueMap, parentId: string, recursive: boolean): IssueRecord[] {
  const index = indexOf(issues);
  return walkChildren(issues, parentId, recursive, (id) => index.activeChildIds(id));
}

function walkChildren(
  issues: IssueMap,
  parentId: string,
  recursive: boolean,
  childIds: (id: string) => Iterable<string>,
): IssueRecord[] {
  const result: IssueRecord[] = [];
  const seen = new Set<string>([parentId]);
  const queue = [parentId];
  while (queue.length > 0) {
    const current = queue.shift() as string;
    for (const childId of childIds(current)) {
      const child = issues.get(childId);
      if (child === undefined || seen.has(childId)) continue;
      seen.add(childId);
      result.push(child);
      if (recursive) queue.push(childId);
    }
  }
  return result;
}

/**
 * Whether each issue is blocked: a blocking edge to an issue that is not closed or does not exist,
 * or an ancestor that is itself blocked. Memoised per call site; safe on malformed (cyclic) data.
 */
export function createBlockedCheck(issues: IssueMap): (id: string) => boolean {
  const memo = new Map<string, boolean>();
  const check = (id: string, visiting: Set<string>): boolean => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const record = issues.get(id);
    if (record === undefined || visiting.has(id)) return false;
    visiting.add(id);
    let blocked = record.dependencies.some(
      (d) => BLOCKING.has(d.type) && !isSatisfied(issues.get(d.depends_on_id)),
    );
    if (!blocked) {
      const parent = parentOf(record);
      blocked = parent !== undefined && check(parent, visiting);
    }
    visiting.delete(id);
    memo.set(id, blocked);
    return blocked;
  };
  return (id) => check(id, new Set());
}

function isSatisfied(blocker: IssueRecord | undefined): boolean {
  return blocker !== undefined && TERMINAL.has(blocker.status);
}

export function isDeferred(record: IssueRecord, nowMs: number): boolean {
  if (record.status === 'deferred') return true;
  return record.defer_until !== undefined && Date.parse(record.defer_until) > nowMs;
}

/** Ready as br means it, minus the blocked check: open, not an epic, not deferred, pinned, ephemeral or a template. */
export function isWorkable(record: IssueRecord, nowMs: number): boolean {
  return (
    record.status === 'open' &&
    record.issue_type !== 'epic' &&
    record.pinned !== true &&
    record.ephemeral !== true &&
    record.is_template !== true &&
    !isDeferred(record, nowMs)
  );
}

/** Ready children (or descendants) of the epic, in hybrid order. */
export function readyBeads(issues: IssueMap, epicId: string, recursive: boolean, nowMs: number): Bead[] {
  const blocked = createBlockedCheck(issues);
  return activeDescendantsOf(issues, epicId, recursive)
    .filter((record) => isWorkable(record, nowMs) && !blocked(record.id))
    .map(toBead)
    .sort(compareHybrid);
}

/** Children (or descendants) of the epic, whatever their status, in hybrid order. */
export function childBeads(issues: IssueMap, epicId: string, recursive: boolean): Bead[] {
  return descendantsOf(issues, epicId, recursive).map(toBead).sort(compareHybrid);
}

/**
 * The path `blocker → … → blocked` that a new edge `blocked → blocker` would close into a cycle,
 * following only edges that must stay acyclic; undefined when the edge is safe.
 */
export function findCyclePath(issues: IssueMap, blocked: string, blocker: string): string[] | undefined {
  const previous = new Map<string, string>();
  const queue = [blocker];
  const seen = new Set([blocker]);
  while (queue.length > 0) {
    const current = queue.shift() as string;
    if (current === blocked) {
      const path = [current];
      for (let step = previous.get(current); step !== undefined; step = previous.get(step))
        path.unshift(step);
      return [blocked, ...path];
    }
    for (const d of issues.get(current)?.dependencies ?? []) {
      if (!ACYCLIC.has(d.type) || seen.has(d.depends_on_id)) continue;
      seen.add(d.depends_on_id);
      previous.set(d.depends_on_id, current);
      queue.push(d.depends_on_id);
    }
  }
  return undefined;
}
