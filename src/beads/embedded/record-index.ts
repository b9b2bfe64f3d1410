// Indexes over a record set that the store keeps current as records change, so lookups by parent,
// the next child number and the next comment id do not scan every bead.
import { parentOf } from './records.js';
import type { IssueMap, IssueRecord } from './records.js';

export interface IssueIndex {
  /** Ids of the records whose parent-child edge points at `parentId`. */
  childIds(parentId: string): Iterable<string>;
  /**
   * The children of `parentId` that are not closed (or deleted), or that have children of their own:
   * every path to a descendant that can still be ready, without the closed leaves that pile up.
   */
  activeChildIds(parentId: string): Iterable<string>;
  /** Ids of the records with an edge (of any type) to `id`. */
  dependentIds(id: string): Iterable<string>;
  /** The highest n among ids `<parentId>.<n>` (0 when none), whatever their edges say. */
  highestChildNumber(parentId: string): number;
  /** The highest comment id in the set (0 when none): comment ids are unique across the store. */
  highestCommentId(): number;
}

const CHILD_ID = /^(.+)\.(\d+)$/;
/** Statuses after which a bead is done with. */
export const FINISHED: ReadonlySet<string> = new Set(['closed', 'tombstone']);

/** An index fed record by record; a record seen again replaces what its previous version said. */
export class MutableIssueIndex implements IssueIndex {
  private readonly children = new Map<string, Set<string>>();
  private readonly active = new Map<string, Set<string>>();
  private readonly parents = new Map<string, string>();
  private readonly finished = new Set<string>();
  private readonly dependents = new Map<string, Set<string>>();
  private readonly targets = new Map<string, readonly string[]>();
  private readonly childNumbers = new Map<string, number>();
  private maxCommentId = 0;

  constructor(records: Iterable<IssueRecord> = []) {
    for (const record of records) this.put(record);
  }

  put(record: IssueRecord): void {
    const parent = parentOf(record);
    const previous = this.parents.get(record.id);
    if (FINISHED.has(record.status)) this.finished.add(record.id);
    else this.finished.delete(record.id);
    if (previous !== parent) {
      if (previous !== undefined) {
        this.children.get(previous)?.delete(record.id);
        this.active.get(previous)?.delete(record.id);
      }
      if (parent === undefined) this.parents.delete(record.id);
      else {
        this.parents.set(record.id, parent);
        addTo(this.children, parent, record.id);
      }
    }
    this.refreshDependents(record);
    this.refreshActive(record.id);
    if (previous !== undefined && previous !== parent) this.refreshActive(previous);
    if (parent !== undefined) this.refreshActive(parent);
    const match = CHILD_ID.exec(record.id);
    if (match !== null) {
      const base = match[1] as string;
      const n = Number(match[2]);
      if (n > (this.childNumbers.get(base) ?? 0)) this.childNumbers.set(base, n);
    }
    for (const comment of record.comments) this.maxCommentId = Math.max(this.maxCommentId, comment.id);
  }

  /** Whether `id` belongs in its parent's active children: unfinished, or a parent itself. */
  private refreshActive(id: string): void {
    const parent = this.parents.get(id);
    if (parent === undefined) return;
    const isActive = !this.finished.has(id) || (this.children.get(id)?.size ?? 0) > 0;
    if (isActive) addTo(this.active, parent, id);
    else this.active.get(parent)?.delete(id);
  }

  private refreshDependents(record: IssueRecord): void {
    const next = record.dependencies.map((d) => d.depends_on_id);
    for (const target of this.targets.get(record.id) ?? []) {
      if (!next.includes(target)) this.dependents.get(target)?.delete(record.id);
    }
    for (const target of next) addTo(this.dependents, target, record.id);
    this.targets.set(record.id, next);
  }

  childIds(parentId: string): Iterable<string> {
    return this.children.get(parentId) ?? [];
  }

  dependentIds(id: string): Iterable<string> {
    return this.dependents.get(id) ?? [];
  }

  activeChildIds(parentId: string): Iterable<string> {
    return this.active.get(parentId) ?? [];
  }

  highestChildNumber(parentId: string): number {
    return this.childNumbers.get(parentId) ?? 0;
  }

  highestCommentId(): number {
    return this.maxCommentId;
  }
}

function addTo(sets: Map<string, Set<string>>, key: string, value: string): void {
  const set = sets.get(key);
  if (set === undefined) sets.set(key, new Set([value]));
  else set.add(value);
}

const registered = new WeakMap<IssueMap, IssueIndex>();

/** Ties an index to a record set; whoever changes the set keeps the index current. */
export function registerIndex(issues: IssueMap, index: IssueIndex): void {
  registered.set(issues, index);
}

/** The index of a record set: the one registered for it, or one built now (and kept) for a plain map. */
export function indexOf(issues: IssueMap): IssueIndex {
  const known = registered.get(issues);
  if (known !== undefined) return known;
  const built = new MutableIssueIndex(issues.values());
  registered.set(issues, built);
  return built;
}

/**
 * Records in a Map changed in place, with their index kept current: the set a backend holds between
 * changes. A snapshot handed out is this same map, valid until the caller's next await.
 */
export class IndexedIssues {
  readonly map = new Map<string, IssueRecord>();
  readonly index = new MutableIssueIndex();

  constructor(records: Iterable<IssueRecord> = []) {
    registerIndex(this.map, this.index);
    this.put(records);
  }

  /** Adds or replaces records by id: a record seen again replaces the earlier one (last wins). */
  put(records: Iterable<IssueRecord>): void {
    for (const record of records) {
      this.map.set(record.id, record);
      this.index.put(record);
    }
  }
}
