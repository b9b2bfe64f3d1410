// The embedded bead store: br's JSONL format on disk without br, and the same engine in memory.
export { createEmbeddedStore, createEngineStore, createMemoryBeadStore, DEFAULT_ACTOR } from './store.js';
export type { EmbeddedStoreOptions, EngineOptions, MemoryStoreOptions } from './store.js';
export { createMemoryBackend } from './backend.js';
export type { RecordBackend, StoreMeta } from './backend.js';
export { createFileBackend, ISSUES_FILE, LOCK_FILE, META_FILE } from './file-backend.js';
export { EmbeddedErrorCode } from './errors.js';
export { acquireStoreLock } from './lock.js';
export type { StoreLock, StoreLockOptions } from './lock.js';
export { parseIssuesJsonl, serializeIssuesJsonl, serializeIssueLine } from './line-format.js';
export type { CommentRecord, DependencyRecord, IssueRecord } from './records.js';
