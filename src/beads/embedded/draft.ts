// One mutation's view of the records: copy on write into an overlay, with the indexes it needs.
import { FINISHED, MutableIssueIndex, indexOf, registerIndex } from './record-index.js';
import type { IssueIndex } from './record-index.js';
import { cloneRecord } from './records.js';
import type { IssueMap, IssueRecord } from './records.js';

/**
 * A copy-on-write view of a record set for one mutation: the base set is never touched, records are
 * cloned on first edit into an overlay, so a mutation that throws halfway leaves the store as it was,
 * and starting one costs nothing however many records the store holds.
 */
export class RecordDraft {
  readonly records: IssueMap;
  private readonly overlay = new Map<string, IssueRecord>();

  constructor(base: IssueMap) {
    this.records = new OverlayMap(base, this.overlay);
    registerIndex(this.records, new OverlayIndex(indexOf(base), this.overlay, this.records));
  }

  get changed(): boolean {
    return this.overlay.size > 0;
  }

  /** The records this mutation inserted or edited, each once, in the order they were first touched. */
  get changes(): IssueRecord[] {
    return [...this.overlay.values()];
  }

  get(id: string): IssueRecord | undefined {
    return this.records.get(id);
  }

  /** The record to modify; throws when absent (callers look it up first). */
  edit(id: string): IssueRecord {
    const own = this.overlay.get(id);
    if (own !== undefined) return own;
    const current = this.records.get(id);
    if (current === undefined) throw new Error(`internal: edit of unknown record ${id}`);
    const copy = cloneRecord(current);
    this.overlay.set(id, copy);
    return copy;
  }

  insert(record: IssueRecord): void {
    this.overlay.set(record.id, record);
  }
}

/** The base records with the overlay's versions in their place and its new records after them. */
class OverlayMap implements ReadonlyMap<string, IssueRecord> {
  constructor(
    private readonly base: IssueMap,
    private readonly overlay: ReadonlyMap<string, IssueRecord>,
  ) {}

  get size(): number {
    let added = 0;
    for (const id of this.overlay.keys()) if (!this.base.has(id)) added += 1;
    return this.base.size + added;
  }

  get(id: string): IssueRecord | undefined {
    return this.overlay.get(id) ?? this.base.get(id);
  }

  has(id: string): boolean {
    return this.overlay.has(id) || this.base.has(id);
  }

  *entries(): MapIterator<[string, IssueRecord]> {
    for (const [id, record] of this.base) yield [id, this.overlay.get(id) ?? record];
    for (const [id, record] of this.overlay) if (!this.base.has(id)) yield [id, record];
  }

  *keys(): MapIterator<string> {
    for (const [id] of this.entries()) yield id;
  }

  *values(): MapIterator<IssueRecord> {
    for (const [, record] of this.entries()) yield record;
  }

  [Symbol.iterator](): MapIterator<[string, IssueRecord]> {
    return this.entries();
  }

  forEach(callback: (value: IssueRecord, key: string, map: ReadonlyMap<string, IssueRecord>) => void): void {
    for (const [id, record] of this.entries()) callback(record, id, this);
  }
}

/** The base set's index, corrected by the few records of the overlay. */
class OverlayIndex implements IssueIndex {
  constructor(
    private readonly base: IssueIndex,
    private readonly overlay: ReadonlyMap<string, IssueRecord>,
    private readonly records: IssueMap,
  ) {}

  private overlayIndex(): MutableIssueIndex {
    return new MutableIssueIndex(this.overlay.values());
  }

  childIds(parentId: string): Iterable<string> {
    const ids = new Set(this.base.childIds(parentId));
    for (const record of this.overlay.values()) ids.delete(record.id);
    for (const id of this.overlayIndex().childIds(parentId)) ids.add(id);
    return ids;
  }

  activeChildIds(parentId: string): Iterable<string> {
    return [...this.childIds(parentId)].filter((id) => {
      const record = this.records.get(id);
      return record !== undefined && (!FINISHED.has(record.status) || !isEmpty(this.childIds(id)));
    });
  }

  dependentIds(id: string): Iterable<string> {
    const ids = new Set(this.base.dependentIds(id));
    for (const record of this.overlay.values()) ids.delete(record.id);
    for (const dependent of this.overlayIndex().dependentIds(id)) ids.add(dependent);
    return ids;
  }

  highestChildNumber(parentId: string): number {
    return Math.max(this.base.highestChildNumber(parentId), this.overlayIndex().highestChildNumber(parentId));
  }

  highestCommentId(): number {
    return Math.max(this.base.highestCommentId(), this.overlayIndex().highestCommentId());
  }
}

function isEmpty(ids: Iterable<string>): boolean {
  for (const _id of ids) return false;
  return true;
}
