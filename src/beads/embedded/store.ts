// The BeadStore over a record backend: on disk (`createEmbeddedStore`) or in memory (`createMemoryBeadStore`).
import { join } from 'node:path';
import type { Clock } from '../../infra/clock.js';
import { systemClock } from '../../infra/clock.js';
import { compareHybrid } from '../types.js';
import type { Bead, BeadStore, ListFilter } from '../types.js';
import { createMemoryBackend } from './backend.js';
import type { RecordBackend, StoreMeta } from './backend.js';
import { createFileBackend } from './file-backend.js';
import { epicGraph } from './epic-graph.js';
import { childBeads, readyBeads } from './graph.js';
import type { StoreLockOptions } from './lock.js';
import {
  addComment,
  addDependency,
  addLabel,
  claimIssue,
  closeIssue,
  createIssue,
  reopenIssue,
  removeLabel,
  requireIssue,
} from './operations.js';
import type { MutationContext } from './operations.js';
import { toDetail } from './detail.js';
import { toBead } from './records.js';
import { createTimestampSource } from './timestamps.js';

export const DEFAULT_ACTOR = 'forge';

export interface EngineOptions {
  /** Recorded as created_by, comment author and claim assignee. Default "forge". */
  actor?: string;
  /** Drives timestamps and defer_until checks. Default the system clock. */
  clock?: Clock;
}

export interface EmbeddedStoreOptions extends EngineOptions {
  /** Project root; the store lives in `<cwd>/.beads/`. */
  cwd: string;
  lock?: StoreLockOptions;
  /** See FileBackendOptions.compactAfter. */
  compactAfter?: number | undefined;
  /** See FileBackendOptions.onRestored (default: a warning on stderr). */
  onRestored?: ((path: string, lost?: number) => void) | undefined;
}

export interface MemoryStoreOptions extends EngineOptions {
  /** Id prefix. Default "bd". */
  prefix?: string;
}

/** The br-compatible store used when `br` is not installed. */
export function createEmbeddedStore(options: EmbeddedStoreOptions): BeadStore {
  const backend = createFileBackend({
    beadsDir: join(options.cwd, '.beads'),
    lock: options.lock,
    compactAfter: options.compactAfter,
    onRestored:
      options.onRestored ??
      ((path, lost) =>
        process.stderr.write(
          lost === undefined
            ? `warning: the bead store ${path} was deleted while this process used it (an agent's git clean?); written back as it last read it.\n`
            : `warning: ${lost} bead${lost === 1 ? '' : 's'} vanished from the bead store ${path} while this process used it (the file was emptied or replaced, not changed by a store command: an agent?); written back as this process last read ${lost === 1 ? 'it' : 'them'}.\n`,
        )),
  });
  return createEngineStore(backend, options);
}

/** Same semantics with nothing on disk: the in-memory fake for core tests. */
export function createMemoryBeadStore(options: MemoryStoreOptions = {}): BeadStore {
  return createEngineStore(createMemoryBackend(options.prefix), options);
}

/** Binds the pure rules (graph, operations) to a backend. */
export function createEngineStore(backend: RecordBackend, options: EngineOptions = {}): BeadStore {
  const actor = options.actor ?? DEFAULT_ACTOR;
  const clock = options.clock ?? systemClock;
  const nextTimestamp = createTimestampSource(clock);
  const context = (meta: StoreMeta): MutationContext => ({
    now: nextTimestamp().iso,
    actor,
    prefix: meta.prefix,
  });

  return {
    kind: 'embedded',
    init: (initOptions) => backend.init(initOptions?.prefix),
    create: (input) => backend.update((draft, meta) => createIssue(draft, input, context(meta))),
    async ready(epicId, readyOptions) {
      const issues = await backend.read();
      requireIssue(issues, epicId);
      return readyBeads(issues, epicId, readyOptions?.recursive === true, clock.now());
    },
    async show(id) {
      const issues = await backend.read();
      return toDetail(requireIssue(issues, id), issues);
    },
    async list(filter: ListFilter = {}) {
      const issues = await backend.read();
      const beads: Bead[] = [];
      for (const record of issues.values()) {
        if (!statusListed(record.status, filter)) continue;
        if (filter.label !== undefined && !record.labels.includes(filter.label)) continue;
        beads.push(toBead(record));
      }
      return beads.sort(compareHybrid);
    },
    async children(epicId, childOptions) {
      const issues = await backend.read();
      requireIssue(issues, epicId);
      return childBeads(issues, epicId, childOptions?.recursive === true);
    },
    async graph(epicId) {
      const issues = await backend.read();
      return epicGraph(issues, requireIssue(issues, epicId));
    },
    claim: (id) => backend.update((draft, meta) => claimIssue(draft, id, context(meta))),
    reopen: (id, reason) => backend.update((draft, meta) => reopenIssue(draft, id, reason, context(meta))),
    close: (id, reason) => backend.update((draft, meta) => closeIssue(draft, id, reason, context(meta))),
    addDependency: (blocked, blocker, type = 'blocks') =>
      backend.update((draft, meta) => addDependency(draft, blocked, blocker, type, context(meta))),
    addLabel: (id, label) => backend.update((draft, meta) => addLabel(draft, id, label, context(meta))),
    removeLabel: (id, label) => backend.update((draft, meta) => removeLabel(draft, id, label, context(meta))),
    comment: (id, text) => backend.update((draft, meta) => addComment(draft, id, text, context(meta))),
    flush: () => backend.flush(),
    ...(backend.version === undefined ? {} : { version: backend.version.bind(backend) }),
  };
}

/** br's `list`: the asked status only; otherwise closed beads only with `-a`, deleted (tombstone) ones never. */
function statusListed(status: string, filter: ListFilter): boolean {
  if (filter.status !== undefined) return status === filter.status;
  if (status === 'tombstone') return false;
  return filter.all === true || status !== 'closed';
}
