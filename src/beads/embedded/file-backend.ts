// Records in `.beads/issues.jsonl`: followed by what was appended, changed under the lock file by
// appending the changed issues, compacted (replaced atomically) when superseded lines pile up or on flush.
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isNotFound, readFileIfExists, writeFileAtomic, writeJsonAtomic } from '../../infra/atomic-file.js';
import { createSerialQueue } from '../../infra/serial-queue.js';
import { resolveInitPrefix } from './backend.js';
import type { RecordBackend, StoreMeta } from './backend.js';
import { configError, notInitialized } from './errors.js';
import { DEFAULT_PREFIX, assertValidPrefix, inferPrefix } from './ids.js';
import { appendToLog, compactLog, needsCompaction, refreshLog } from './issues-log.js';
import type { LogState } from './issues-log.js';
import { parseIssuesJsonl } from './line-format.js';
import { acquireStoreLock } from './lock.js';
import type { StoreLock, StoreLockOptions } from './lock.js';
import { RecordDraft } from './draft.js';
import { isJsonObject } from '../../infra/json-object.js';
import { kindOf } from './line-check.js';
import type { IssueMap } from './records.js';

export const ISSUES_FILE = 'issues.jsonl';
/** Forge's own metadata, kept apart so br's files stay exactly br's. */
export const META_FILE = 'forge-embedded.json';
export const LOCK_FILE = 'forge-embedded.lock';

export interface FileBackendOptions {
  beadsDir: string;
  lock?: StoreLockOptions | undefined;
  /**
   * Compact once the file holds more superseded lines than this and than it has issues, so a change
   * costs the same however many issues there are, and the file stays under about twice its compact
   * size. Default 256.
   */
  compactAfter?: number | undefined;
  /**
   * Told when the issues file, gone under this process, was written back (`lost` undefined), or when
   * beads this process had read vanished from it and were written back (`lost`: how many). See `refresh`.
   */
  onRestored?: ((path: string, lost?: number) => void) | undefined;
}

const DEFAULT_COMPACT_AFTER = 256;

export function createFileBackend(options: FileBackendOptions): RecordBackend {
  const { beadsDir } = options;
  const issuesPath = join(beadsDir, ISSUES_FILE);
  const metaPath = join(beadsDir, META_FILE);
  const lockPath = join(beadsDir, LOCK_FILE);
  // One writer at a time inside this process too, so its own operations queue instead of spinning on the lock.
  const writes = createSerialQueue();
  const serialised = <T>(fn: () => Promise<T>): Promise<T> => writes.run(fn);

  const lock = async (): Promise<StoreLock> => {
    try {
      return await acquireStoreLock(lockPath, options.lock);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // The folder is gone: a store this process has read is put back (refresh), one never read is none.
      if (state === undefined) throw notInitialized(beadsDir);
      await mkdir(beadsDir, { recursive: true });
      return acquireStoreLock(lockPath, options.lock);
    }
  };

  const locked = async <T>(fn: () => Promise<T>): Promise<T> => {
    const held = await lock();
    try {
      return await fn();
    } finally {
      await held.release();
    }
  };

  // What this process last read of the file, and the records as of then. Every look at the file and
  // every change to this state runs in `reads`, so a read never applies an append twice.
  const reads = createSerialQueue();
  let state: LogState | undefined;
  const refresh = async (): Promise<LogState> => {
    const before = state;
    const next = await refreshLog(issuesPath, state);
    if (next !== undefined) {
      state = next;
      if (before !== undefined && next !== before) await writeBackVanished(before, next);
      return next;
    }
    if (state === undefined) throw notInitialized(beadsDir);
    // Gone under a process that had read it: an agent's `git clean -fdx` or `rm -rf .beads` took every
    // bead of every epic with it, the run's own included (fault injection). Written back as this
    // process last read it, with what it changes next: what was lost is only what others wrote since.
    await mkdir(beadsDir, { recursive: true });
    await compactLog(issuesPath, state);
    options.onRestored?.(issuesPath);
    return state;
  };
  // A whole new read (the file was replaced or edited, not appended to) that lacks beads this process
  // had read: no store writer drops a bead (a delete leaves a tombstone line, compaction keeps every
  // id), so the file was truncated or swapped by something else, an agent's `: > issues.jsonl` or a
  // link to an empty file (fault injection: the run died on "Issue not found" and the store stayed
  // empty). The vanished beads are put back beside what the file holds now, and the file rewritten
  // (a link is replaced, not written through). Kept here rather than lost: a bead the file still has
  // is taken as the file says, whoever changed it.
  const writeBackVanished = async (before: LogState, now: LogState): Promise<void> => {
    const vanished = [...before.issues.map.values()].filter((record) => !now.issues.map.has(record.id));
    if (vanished.length === 0) return;
    now.issues.put(vanished);
    await compactLog(issuesPath, now);
    options.onRestored?.(issuesPath, vanished.length);
  };
  // Without Forge's metadata (a store br created), the prefix most ids use: worked out once per full read.
  const inferred = new WeakMap<object, string>();
  const inferredPrefix = (current: LogState): string => {
    const known = inferred.get(current.issues);
    if (known !== undefined) return known;
    const prefix = inferPrefix(current.issues.map) ?? DEFAULT_PREFIX;
    inferred.set(current.issues, prefix);
    return prefix;
  };
  const load = (): Promise<IssueMap> => reads.run(async () => (await refresh()).issues.map);

  const readMeta = async (): Promise<StoreMeta | undefined> => {
    const text = await readFileIfExists(metaPath);
    if (text === undefined) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw configError(
        `${metaPath}: not valid JSON (${(error as Error).message})`,
        `Fix it, or delete it to use the prefix of the existing ids.`,
      );
    }
    const meta = metaProblems(json);
    if (typeof meta !== 'string') {
      throw configError(
        meta.map((problem) => `${metaPath}: ${problem}`).join('; '),
        'Expected {"prefix": "<id prefix>"}.',
      );
    }
    assertValidPrefix(meta);
    return { prefix: meta };
  };

  return {
    init: (prefix) =>
      serialised(async () => {
        await mkdir(beadsDir, { recursive: true });
        await locked(async () => {
          const text = await readFileIfExists(issuesPath);
          const records = text === undefined ? new Map() : parseIssuesJsonl(text, issuesPath);
          const meta = await readMeta();
          const next = resolveInitPrefix(meta?.prefix ?? inferPrefix(records), prefix, records.size === 0);
          if (text === undefined) await writeFileAtomic(issuesPath, '');
          if (meta?.prefix !== next) await writeJsonAtomic(metaPath, { prefix: next });
        });
      }),
    // Readers need no lock: writers append whole lines (a torn one is ignored) or replace the file by rename.
    read: () => load(),
    update: (mutate) =>
      serialised(() =>
        locked(() =>
          reads.run(async () => {
            const current = await refresh();
            const records = current.issues.map;
            const meta = (await readMeta()) ?? { prefix: inferredPrefix(current) };
            const draft = new RecordDraft(records);
            const result = mutate(draft, meta);
            await appendToLog(issuesPath, current, draft.changes);
            if (needsCompaction(current, options.compactAfter ?? DEFAULT_COMPACT_AFTER))
              await compactLog(issuesPath, current);
            return result;
          }),
        ),
      ),
    // Every change is fsynced before its operation resolves; flushing waits for queued changes and
    // leaves the file as br exports it: sorted, one line per issue.
    flush: () =>
      serialised(() =>
        locked(() =>
          reads.run(async () => {
            const current = await refresh();
            if (!current.file.compact) await compactLog(issuesPath, current);
          }),
        ),
      ),
    // Every change appends to the file (its size and times move) or replaces it by rename (another
    // inode), and the file is all a read takes the records from.
    version: async () => {
      const info = await stat(issuesPath, { bigint: true }).catch(() => undefined);
      if (info === undefined || !info.isFile()) return undefined;
      const last = info.ctimeNs > info.mtimeNs ? info.ctimeNs : info.mtimeNs;
      return {
        token: `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`,
        changedAtMs: Number(last / 1_000_000n),
      };
    },
  };
}

/** The metadata's prefix, or what is wrong with the document (it holds `{"prefix": "<id prefix>"}` only). */
function metaProblems(json: unknown): string | string[] {
  if (!isJsonObject(json)) return [`expected object, received ${kindOf(json)}`];
  const problems = Object.keys(json)
    .filter((key) => key !== 'prefix')
    .map((key) => `${key}: unknown key`);
  const prefix = json.prefix;
  if (typeof prefix !== 'string') {
    problems.unshift(`prefix: expected string, received ${kindOf(prefix)}`);
  }
  return problems.length === 0 && typeof prefix === 'string' ? prefix : problems;
}
