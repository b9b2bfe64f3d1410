// Records in `.beads/issues.jsonl`: read whole, changed under the lock file, replaced atomically.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { isNotFound, readFileIfExists, writeFileAtomic, writeJsonAtomic } from '../../infra/atomic-file.js';
import { createSerialQueue } from '../../infra/serial-queue.js';
import { describeZodError } from '../../infra/zod-issues.js';
import { resolveInitPrefix } from './backend.js';
import type { RecordBackend, StoreMeta } from './backend.js';
import { configError, notInitialized } from './errors.js';
import { DEFAULT_PREFIX, assertValidPrefix, inferPrefix } from './ids.js';
import { parseIssuesJsonl, serializeIssuesJsonl } from './line-format.js';
import { acquireStoreLock } from './lock.js';
import type { StoreLock, StoreLockOptions } from './lock.js';
import { RecordDraft } from './records.js';
import type { IssueRecord } from './records.js';

export const ISSUES_FILE = 'issues.jsonl';
/** Forge's own metadata, kept apart so br's files stay exactly br's. */
export const META_FILE = 'forge-embedded.json';
export const LOCK_FILE = 'forge-embedded.lock';

export interface FileBackendOptions {
  beadsDir: string;
  lock?: StoreLockOptions | undefined;
}

const metaSchema = z.strictObject({ prefix: z.string() });

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
      if (isNotFound(error)) throw notInitialized(beadsDir);
      throw error;
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

  // Records are never modified in place (drafts copy on write), so the set parsed from the file's
  // current text can be handed out again until the text changes.
  let cached: { text: string; records: Map<string, IssueRecord> } | undefined;
  const load = async (): Promise<Map<string, IssueRecord>> => {
    const text = await readFileIfExists(issuesPath);
    if (text === undefined) throw notInitialized(beadsDir);
    if (cached?.text !== text) cached = { text, records: parseIssuesJsonl(text, issuesPath) };
    return cached.records;
  };

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
    const parsed = metaSchema.safeParse(json);
    if (!parsed.success) {
      throw configError(describeZodError(metaPath, parsed.error), 'Expected {"prefix": "<id prefix>"}.');
    }
    assertValidPrefix(parsed.data.prefix);
    return parsed.data;
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
    // Readers need no lock: writers replace the file by rename, so a read sees one version whole.
    read: () => load(),
    update: (mutate) =>
      serialised(() =>
        locked(async () => {
          const records = await load();
          const meta = (await readMeta()) ?? { prefix: inferPrefix(records) ?? DEFAULT_PREFIX };
          const draft = new RecordDraft(records);
          const result = mutate(draft, meta);
          if (draft.changed) {
            const text = serializeIssuesJsonl(draft.records.values());
            await writeFileAtomic(issuesPath, text);
            cached = { text, records: draft.records };
          }
          return result;
        }),
      ),
    // Every write is fsynced and renamed before its operation resolves; flushing waits for queued
    // writes and checks the file still reads back whole.
    flush: () => serialised(async () => void (await load())),
  };
}
