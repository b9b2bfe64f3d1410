// br's issues.jsonl line format: parsing (each line's shape checked by hand, errors naming file:line) and
// writing.
import type { CommentRecord, DependencyRecord, IssueRecord } from './records.js';
import { corruptLine } from './errors.js';
import { LineCheck, type JsonObject } from './line-check.js';

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

/** The fields Forge interprets; every other field of a line passes through untouched (`extra`). */
const ISSUE_KEYS = new Set([
  'id',
  'title',
  'status',
  'priority',
  'issue_type',
  'created_at',
  'updated_at',
  'labels',
  'dependencies',
  'comments',
  ...OPTIONAL_ISSUE_FIELDS,
]);
const DEPENDENCY_KEYS = new Set(['issue_id', 'depends_on_id', 'type', 'created_at', 'created_by']);
const COMMENT_KEYS = new Set(['id', 'issue_id', 'author', 'text', 'created_at']);

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
  const check = new LineCheck();
  const record = checkIssue(check, json);
  if (record === undefined || check.problems.length > 0) {
    throw corruptLine(path, line, check.problems.join('; '));
  }
  sourceLines.set(record, raw);
  return record;
}

function checkIssue(check: LineCheck, json: unknown): IssueRecord | undefined {
  const value = check.object(json, '');
  if (value === undefined) return undefined;
  const text = (v: unknown, p: string) => check.string(v, p);
  const name = (v: unknown, p: string) => check.string(v, p, true);
  const integer = (v: unknown, p: string) => check.integer(v, p);
  const flag = (v: unknown, p: string) => check.boolean(v, p);
  const time = (v: unknown, p: string) => check.timestamp(v, p);
  const id = name(value.id, 'id');
  const title = text(value.title, 'title');
  // br's serde defaults for a line that omits them.
  const status = check.defaulted(value.status, 'status', 'open', name);
  const priority = check.defaulted(value.priority, 'priority', 2, integer);
  const issueType = check.defaulted(value.issue_type, 'issue_type', 'task', name);
  const createdAt = time(value.created_at, 'created_at');
  const updatedAt = time(value.updated_at, 'updated_at');
  const optionals: { [K in (typeof OPTIONAL_ISSUE_FIELDS)[number]]: IssueRecord[K] | undefined } = {
    description: check.optional(value.description, 'description', text),
    assignee: check.optional(value.assignee, 'assignee', text),
    created_by: check.optional(value.created_by, 'created_by', text),
    closed_at: check.optional(value.closed_at, 'closed_at', time),
    close_reason: check.optional(value.close_reason, 'close_reason', text),
    defer_until: check.optional(value.defer_until, 'defer_until', time),
    source_repo: check.optional(value.source_repo, 'source_repo', text),
    compaction_level: check.optional(value.compaction_level, 'compaction_level', integer),
    original_size: check.optional(value.original_size, 'original_size', integer),
    ephemeral: check.optional(value.ephemeral, 'ephemeral', flag),
    pinned: check.optional(value.pinned, 'pinned', flag),
    is_template: check.optional(value.is_template, 'is_template', flag),
  };
  const labels = check.list(value.labels, 'labels', text);
  const dependencies = check.list(value.dependencies, 'dependencies', (v, p) => checkDependency(check, v, p));
  const comments = check.list(value.comments, 'comments', (v, p) => checkComment(check, v, p));
  if (
    id === undefined ||
    title === undefined ||
    status === undefined ||
    priority === undefined ||
    issueType === undefined ||
    createdAt === undefined ||
    updatedAt === undefined ||
    labels === undefined ||
    dependencies === undefined ||
    comments === undefined
  ) {
    return undefined;
  }
  const record: IssueRecord = {
    id,
    title,
    status,
    priority,
    issue_type: issueType,
    created_at: createdAt,
    updated_at: updatedAt,
    labels,
    dependencies,
    comments,
  };
  Object.assign(record, definedOnly(optionals, OPTIONAL_ISSUE_FIELDS));
  const extra = extraFields(value, ISSUE_KEYS);
  if (extra !== undefined) record.extra = extra;
  return record;
}

function checkDependency(check: LineCheck, json: unknown, path: string): DependencyRecord | undefined {
  const value = check.object(json, path);
  if (value === undefined) return undefined;
  const issueId = check.string(value.issue_id, `${path}.issue_id`, true);
  const dependsOn = check.string(value.depends_on_id, `${path}.depends_on_id`, true);
  const type = check.string(value.type, `${path}.type`, true);
  const createdAt = check.timestamp(value.created_at, `${path}.created_at`);
  const createdBy = check.optional(value.created_by, `${path}.created_by`, (v, p) => check.string(v, p));
  if (issueId === undefined || dependsOn === undefined || type === undefined || createdAt === undefined) {
    return undefined;
  }
  const dependency: DependencyRecord = {
    issue_id: issueId,
    depends_on_id: dependsOn,
    type,
    created_at: createdAt,
  };
  if (createdBy !== undefined) dependency.created_by = createdBy;
  const extra = extraFields(value, DEPENDENCY_KEYS);
  if (extra !== undefined) dependency.extra = extra;
  return dependency;
}

function checkComment(check: LineCheck, json: unknown, path: string): CommentRecord | undefined {
  const value = check.object(json, path);
  if (value === undefined) return undefined;
  const id = check.integer(value.id, `${path}.id`);
  const issueId = check.string(value.issue_id, `${path}.issue_id`, true);
  const author = check.string(value.author, `${path}.author`);
  const text = check.string(value.text, `${path}.text`);
  const createdAt = check.timestamp(value.created_at, `${path}.created_at`);
  if (
    id === undefined ||
    issueId === undefined ||
    author === undefined ||
    text === undefined ||
    createdAt === undefined
  ) {
    return undefined;
  }
  const comment: CommentRecord = { id, issue_id: issueId, author, text, created_at: createdAt };
  const extra = extraFields(value, COMMENT_KEYS);
  if (extra !== undefined) comment.extra = extra;
  return comment;
}

function definedOnly<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const result: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) result[key] = value[key];
  return result;
}

function extraFields(value: JsonObject, known: ReadonlySet<string>): Record<string, unknown> | undefined {
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
