// br's issues.jsonl line format: parsing (zod at the boundary, errors naming file:line) and writing.
import { z } from 'zod';
import { describeZodFields } from '../../infra/zod-issues.js';
import type { CommentRecord, DependencyRecord, IssueRecord } from './records.js';
import { corruptLine } from './errors.js';

/** RFC 3339 as br writes it (chrono, UTC, up to nanoseconds); offsets are accepted on read. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const timestamp = z
  .string()
  .regex(TIMESTAMP, 'expected an RFC 3339 timestamp')
  .refine((value) => Number.isFinite(Date.parse(value)), 'expected a valid date');

/** Optional in br (`Option<T>`, skipped when None); a null some writers emit means the same. */
function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined);
}

const dependencySchema = z.looseObject({
  issue_id: z.string().min(1),
  depends_on_id: z.string().min(1),
  type: z.string().min(1),
  created_at: timestamp,
  created_by: optional(z.string()),
});

const commentSchema = z.looseObject({
  id: z.number().int(),
  issue_id: z.string().min(1),
  author: z.string(),
  text: z.string(),
  created_at: timestamp,
});

/** The fields Forge interprets, typed; every other field passes through untouched. */
const issueSchema = z.looseObject({
  id: z.string().min(1),
  title: z.string(),
  description: optional(z.string()),
  // br's serde defaults for a line that omits them.
  status: z.string().min(1).default('open'),
  priority: z.number().int().default(2),
  issue_type: z.string().min(1).default('task'),
  assignee: optional(z.string()),
  created_at: timestamp,
  created_by: optional(z.string()),
  updated_at: timestamp,
  closed_at: optional(timestamp),
  close_reason: optional(z.string()),
  defer_until: optional(timestamp),
  source_repo: optional(z.string()),
  compaction_level: optional(z.number().int()),
  original_size: optional(z.number().int()),
  ephemeral: optional(z.boolean()),
  pinned: optional(z.boolean()),
  is_template: optional(z.boolean()),
  labels: optional(z.array(z.string())),
  dependencies: optional(z.array(dependencySchema)),
  comments: optional(z.array(commentSchema)),
});

/** Field order of beads_rust's `Issue` struct (serde writes fields in declaration order). */
// prettier-ignore
const ISSUE_FIELD_ORDER = [
  'id', 'title', 'description', 'design', 'acceptance_criteria', 'notes', 'status', 'priority',
  'issue_type', 'assignee', 'owner', 'lease_owner', 'lease_id', 'lease_expires_at',
  'lease_heartbeat_at', 'estimated_minutes', 'created_at', 'created_by', 'updated_at', 'closed_at',
  'close_reason', 'closed_by_session', 'due_at', 'defer_until', 'external_ref', 'source_system',
  'source_repo', 'source_repo_path', 'agent_context', 'deleted_at', 'deleted_by', 'delete_reason',
  'original_type', 'compaction_level', 'compacted_at', 'compacted_at_commit', 'original_size',
  'retry_count', 'max_retries', 'sender', 'ephemeral', 'pinned', 'is_template',
  'labels', 'dependencies', 'comments',
] as const;
const DEPENDENCY_FIELD_ORDER = [
  'issue_id',
  'depends_on_id',
  'type',
  'created_at',
  'created_by',
  'metadata',
  'thread_id',
];
const COMMENT_FIELD_ORDER = ['id', 'issue_id', 'author', 'text', 'created_at'];

/** The text each parsed record came from: a record never edited is written back byte for byte. */
const sourceLines = new WeakMap<IssueRecord, string>();

const ISSUE_KEYS = new Set(Object.keys(issueSchema.shape));
const DEPENDENCY_KEYS = new Set(Object.keys(dependencySchema.shape));
const COMMENT_KEYS = new Set(Object.keys(commentSchema.shape));

/**
 * Parses the whole file. A later line for an id replaces an earlier one (the store appends a changed
 * issue as a new line, and br's import applies lines in file order, so the last one stands). Any bad
 * line (not JSON, wrong shape) throws a BeadStoreError naming `path:line`; blank lines are skipped.
 */
export function parseIssuesJsonl(text: string, path: string): Map<string, IssueRecord> {
  const issues = new Map<string, IssueRecord>();
  for (const record of parseIssueLines(text, path, 1)) issues.set(record.id, record);
  return issues;
}

/** The records of `text`, whose first line is line `firstLine` of `path`, in file order. */
export function parseIssueLines(text: string, path: string, firstLine: number): IssueRecord[] {
  const records: IssueRecord[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const raw = (lines[index] ?? '').replace(/\r$/, '');
    if (raw.trim() === '') continue;
    records.push(parseIssueLine(raw, path, firstLine + index));
  }
  return records;
}

function parseIssueLine(raw: string, path: string, line: number): IssueRecord {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    const reason = /^(<{7}|={7}|>{7})/.test(raw)
      ? raw.slice(0, 7) + ' (a git merge conflict marker)'
      : (error as Error).message;
    throw corruptLine(path, line, reason);
  }
  const parsed = issueSchema.safeParse(json);
  if (!parsed.success) {
    throw corruptLine(path, line, describeZodFields(parsed.error));
  }
  const value = parsed.data;
  const record: IssueRecord = {
    id: value.id,
    title: value.title,
    status: value.status,
    priority: value.priority,
    issue_type: value.issue_type,
    created_at: value.created_at,
    updated_at: value.updated_at,
    labels: value.labels ?? [],
    dependencies: (value.dependencies ?? []).map(toDependency),
    comments: (value.comments ?? []).map(toCommentRecord),
  };
  Object.assign(record, definedOnly(value, OPTIONAL_ISSUE_FIELDS));
  const extra = extraFields(value, ISSUE_KEYS);
  if (extra !== undefined) record.extra = extra;
  sourceLines.set(record, raw);
  return record;
}

function toDependency(value: z.infer<typeof dependencySchema>): DependencyRecord {
  const dependency: DependencyRecord = {
    issue_id: value.issue_id,
    depends_on_id: value.depends_on_id,
    type: value.type,
    created_at: value.created_at,
  };
  if (value.created_by !== undefined) dependency.created_by = value.created_by;
  const extra = extraFields(value, DEPENDENCY_KEYS);
  if (extra !== undefined) dependency.extra = extra;
  return dependency;
}

function toCommentRecord(value: z.infer<typeof commentSchema>): CommentRecord {
  const comment: CommentRecord = {
    id: value.id,
    issue_id: value.issue_id,
    author: value.author,
    text: value.text,
    created_at: value.created_at,
  };
  const extra = extraFields(value, COMMENT_KEYS);
  if (extra !== undefined) comment.extra = extra;
  return comment;
}

/** The optional fields Forge models, copied only when set so records carry no undefined keys. */
const OPTIONAL_ISSUE_FIELDS = [
  'description',
  'assignee',
  'created_by',
  'closed_at',
  'close_reason',
  'defer_until',
  'source_repo',
  'compaction_level',
  'original_size',
  'ephemeral',
  'pinned',
  'is_template',
] as const;

function definedOnly<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const result: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) result[key] = value[key];
  return result;
}

function extraFields(
  value: Record<string, unknown>,
  known: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  const entries = Object.entries(value).filter(([key]) => !known.has(key));
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/**
 * The whole file: one line per issue, sorted by id (byte order, as br sorts), newline-terminated.
 * Records read from a file and not modified since keep their original text.
 */
export function serializeIssuesJsonl(issues: Iterable<IssueRecord>): string {
  const sorted = [...issues].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return sorted.map((record) => `${sourceLines.get(record) ?? serializeIssueLine(record)}\n`).join('');
}

/** One issue as br writes it: fields in br's order, unset options and empty lists omitted. */
export function serializeIssueLine(record: IssueRecord): string {
  const { extra, labels, dependencies, comments, ...fields } = record;
  const values: Record<string, unknown> = {
    ...extra,
    ...fields,
    // br always writes compaction_level (0 when unset) and skips false booleans.
    compaction_level: record.compaction_level ?? 0,
    ephemeral: record.ephemeral === true ? true : undefined,
    pinned: record.pinned === true ? true : undefined,
    is_template: record.is_template === true ? true : undefined,
    labels: labels.length > 0 ? labels : undefined,
    dependencies:
      dependencies.length > 0
        ? dependencies.map((d) => ordered({ ...d.extra, ...withoutExtra(d) }, DEPENDENCY_FIELD_ORDER))
        : undefined,
    comments:
      comments.length > 0
        ? comments.map((c) => ordered({ ...c.extra, ...withoutExtra(c) }, COMMENT_FIELD_ORDER))
        : undefined,
  };
  return JSON.stringify(ordered(values, ISSUE_FIELD_ORDER, 'labels'));
}

function withoutExtra<T extends { extra?: Record<string, unknown> }>(value: T): Omit<T, 'extra'> {
  const { extra: _extra, ...rest } = value;
  return rest;
}

/** Known keys in `order`; unknown ones (newer br fields) before `unknownBefore`, or last. */
function ordered(
  values: Record<string, unknown>,
  order: readonly string[],
  unknownBefore?: string,
): Record<string, unknown> {
  const known = new Set(order);
  const result: Record<string, unknown> = {};
  const addUnknown = (): void => {
    for (const [key, value] of Object.entries(values)) {
      if (!known.has(key) && value !== undefined) result[key] = value;
    }
  };
  for (const key of order) {
    if (key === unknownBefore) addUnknown();
    const value = values[key];
    if (value !== undefined) result[key] = value;
  }
  if (unknownBefore === undefined) addUnknown();
  return result;
}
