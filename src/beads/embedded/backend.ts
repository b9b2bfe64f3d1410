// Where records live: the contract the store engine needs, and the in-memory implementation of it.
import { configError } from './errors.js';
import { DEFAULT_PREFIX, assertValidPrefix } from './ids.js';
import { RecordDraft } from './draft.js';
import { IndexedIssues } from './record-index.js';
import type { IssueMap } from './records.js';
import type { StoreVersion } from '../types.js';

export interface StoreMeta {
  prefix: string;
}

/** Persistence behind the engine: a consistent snapshot to query, and serialised mutations. */
export interface RecordBackend {
  init(prefix?: string): Promise<void>;
  /**
   * Every record, consistent as of the call; callers must not modify it, and must not keep it across
   * an await (a backend applies later changes to the same set in place).
   */
  read(): Promise<IssueMap>;
  /**
   * Runs `mutate` on a draft of the current records, exclusively (no other writer in between), and
   * stores the draft when it changed. A throwing `mutate` changes nothing.
   */
  update<T>(mutate: (draft: RecordDraft, meta: StoreMeta) => T): Promise<T>;
  flush(): Promise<void>;
  /** What the records are now, without reading them (a file's identity); none for memory. */
  version?(): Promise<StoreVersion | undefined>;
}

/** Records in a Map: the same engine as on disk, for core tests that need a fast, real store. */
export function createMemoryBackend(prefix = DEFAULT_PREFIX): RecordBackend {
  assertValidPrefix(prefix);
  let meta: StoreMeta = { prefix };
  const records = new IndexedIssues();
  return {
    async init(newPrefix) {
      meta = { prefix: resolveInitPrefix(meta.prefix, newPrefix, records.map.size === 0) };
    },
    async read() {
      return records.map;
    },
    async update(mutate) {
      const draft = new RecordDraft(records.map);
      const result = mutate(draft, meta);
      records.put(draft.changes);
      return result;
    },
    async flush() {},
  };
}

/**
 * The prefix a store has after `init`: the requested one, unless the store already holds beads under
 * another prefix (br imports one prefix per workspace, so mixing them would strand beads).
 */
export function resolveInitPrefix(
  current: string | undefined,
  requested: string | undefined,
  empty: boolean,
): string {
  if (requested === undefined) return current ?? DEFAULT_PREFIX;
  assertValidPrefix(requested);
  if (current === undefined || current === requested || empty) return requested;
  throw configError(
    `The bead store already uses the id prefix "${current}", not "${requested}"`,
    `Keep the prefix "${current}" (br imports one prefix per workspace), or start from an empty store.`,
  );
}
