// Pure mutations of a record draft: each validates everything first, then changes records.
import { LABEL_PATTERN, compareTimestamps } from '../types.js';
import type {
  Bead,
  BeadComment,
  ClaimResult,
  CloseResult,
  CreateBeadInput,
  DependencyResult,
} from '../types.js';
import { cycleDetected, issueNotFound, selfDependency, validationFailed } from './errors.js';
import { createBlockedCheck, findCyclePath, mustStayAcyclic } from './graph.js';
import { generateIssueId, nextChildId } from './ids.js';
import { PARENT_CHILD, parentOf, toBead, toComment } from './records.js';
import type { DependencyRecord, IssueMap, IssueRecord } from './records.js';
import type { RecordDraft } from './draft.js';
import { indexOf } from './record-index.js';
import { timestampAfter } from './timestamps.js';

export interface MutationContext {
  /** One timestamp for everything this mutation writes. */
  now: string;
  actor: string;
  prefix: string;
}

const MAX_TITLE_LENGTH = 500;
const TYPE_PATTERN = /^[a-z][a-z0-9_-]*$/;

export function requireIssue(issues: IssueMap, id: string): IssueRecord {
  const record = issues.get(id);
  if (record === undefined) throw issueNotFound(id);
  return record;
}

export function assertValidLabel(label: string): void {
  if (!LABEL_PATTERN.test(label)) {
    throw validationFailed(
      `label "${label}" is not allowed`,
      'Labels are 1 to 50 letters, digits, `_`, `:` or `-` (no spaces, dots or slashes).',
    );
  }
}

export function createIssue(draft: RecordDraft, input: CreateBeadInput, ctx: MutationContext): Bead {
  const title = input.title;
  if (title.trim() === '') throw validationFailed('title: cannot be empty');
  if (title.length > MAX_TITLE_LENGTH)
    throw validationFailed(`title: exceeds ${MAX_TITLE_LENGTH} characters`);
  const priority = input.priority ?? 2;
  if (!Number.isInteger(priority) || priority < 0 || priority > 4) {
    throw validationFailed(`priority: must be 0-4, got ${String(priority)}`, '0 is critical, 4 is backlog.');
  }
  const type = (input.type ?? 'task').toLowerCase();
  if (!TYPE_PATTERN.test(type)) throw validationFailed(`type: "${input.type ?? ''}" is not an issue type`);
  const labels = [...new Set(input.labels ?? [])].sort();
  labels.forEach(assertValidLabel);
  if (input.parent !== undefined) requireIssue(draft.records, input.parent);
  const blockers = [...new Set(input.dependsOn ?? [])].filter((id) => id !== input.parent);
  for (const blocker of blockers) requireIssue(draft.records, blocker);

  const id =
    input.parent === undefined
      ? generateIssueId(
          ctx.prefix,
          {
            title,
            creator: ctx.actor,
            createdAt: ctx.now,
            description: input.description,
          },
          draft.records.size,
          (candidate) => draft.records.has(candidate),
        )
      : nextChildId(draft.records, input.parent);
  const edge = (dependsOn: string, type: string): DependencyRecord => ({
    issue_id: id,
    depends_on_id: dependsOn,
    type,
    created_at: ctx.now,
    created_by: ctx.actor,
  });
  const record: IssueRecord = {
    id,
    title,
    ...(input.description === undefined || input.description === ''
      ? {}
      : { description: input.description }),
    status: 'open',
    priority,
    issue_type: type,
    created_at: ctx.now,
    created_by: ctx.actor,
    updated_at: ctx.now,
    source_repo: '.',
    compaction_level: 0,
    original_size: 0,
    labels,
    dependencies: [
      ...(input.parent === undefined ? [] : [edge(input.parent, PARENT_CHILD)]),
      ...blockers.map((blocker) => edge(blocker, 'blocks')),
    ],
    comments: [],
  };
  draft.insert(record);
  return toBead(record);
}

/** open → in_progress, assigned to the actor; refused (not thrown) when not open or blocked. */
export function claimIssue(draft: RecordDraft, id: string, ctx: MutationContext): ClaimResult {
  const current = requireIssue(draft.records, id);
  if (current.status !== 'open') return { ok: false, reason: `${id} is ${current.status}, not open` };
  if (createBlockedCheck(draft.records)(id))
    return { ok: false, reason: `${id} is blocked by an open dependency` };
  const record = draft.edit(id);
  record.status = 'in_progress';
  record.assignee = ctx.actor;
  touch(record, ctx.now);
  return { ok: true, bead: toBead(record) };
}

export function reopenIssue(
  draft: RecordDraft,
  id: string,
  reason: string | undefined,
  ctx: MutationContext,
): void {
  const current = requireIssue(draft.records, id);
  const hasReason = reason !== undefined && reason.trim() !== '';
  if (current.status === 'open' && !hasReason) return;
  const record = draft.edit(id);
  if (record.status !== 'open') {
    record.status = 'open';
    delete record.closed_at;
    delete record.close_reason;
  }
  if (hasReason) record.comments.push(newComment(draft.records, id, reason, ctx));
  touch(record, ctx.now);
}

export function closeIssue(
  draft: RecordDraft,
  id: string,
  reason: string,
  ctx: MutationContext,
): CloseResult {
  const current = requireIssue(draft.records, id);
  if (current.status === 'closed' || current.status === 'tombstone') {
    return { ok: false, reason: `${id} is already ${current.status}` };
  }
  const record = draft.edit(id);
  record.status = 'closed';
  touch(record, ctx.now);
  record.closed_at = record.updated_at;
  if (reason.trim() === '') delete record.close_reason;
  else record.close_reason = reason;
  return { ok: true };
}

/** `blocked` depends on `blocker`; one edge per pair of issues whatever its type. */
export function addDependency(
  draft: RecordDraft,
  blocked: string,
  blocker: string,
  type: string,
  ctx: MutationContext,
): DependencyResult {
  if (type.trim() === '') throw validationFailed('dependency type: cannot be empty');
  const from = requireIssue(draft.records, blocked);
  requireIssue(draft.records, blocker);
  if (blocked === blocker) throw selfDependency(blocked);
  if (from.dependencies.some((d) => d.depends_on_id === blocker)) return { status: 'exists' };
  const dependencyType = type.toLowerCase();
  if (mustStayAcyclic(dependencyType)) {
    const cycle = findCyclePath(draft.records, blocked, blocker);
    if (cycle !== undefined) throw cycleDetected(cycle);
  }
  if (dependencyType === PARENT_CHILD) {
    const parent = parentOf(from);
    if (parent !== undefined) throw validationFailed(`${blocked} already has a parent (${parent})`);
  }
  const record = draft.edit(blocked);
  record.dependencies.push({
    issue_id: blocked,
    depends_on_id: blocker,
    type: dependencyType,
    created_at: ctx.now,
    created_by: ctx.actor,
  });
  touch(record, ctx.now);
  return { status: 'ok' };
}

export function addLabel(draft: RecordDraft, id: string, label: string, ctx: MutationContext): void {
  assertValidLabel(label);
  if (requireIssue(draft.records, id).labels.includes(label)) return;
  const record = draft.edit(id);
  record.labels = [...record.labels, label].sort();
  touch(record, ctx.now);
}

export function removeLabel(draft: RecordDraft, id: string, label: string, ctx: MutationContext): void {
  if (!requireIssue(draft.records, id).labels.includes(label)) return;
  const record = draft.edit(id);
  record.labels = record.labels.filter((l) => l !== label);
  touch(record, ctx.now);
}

export function addComment(draft: RecordDraft, id: string, text: string, ctx: MutationContext): BeadComment {
  requireIssue(draft.records, id);
  if (text.trim() === '') throw validationFailed('comment: cannot be empty');
  const record = draft.edit(id);
  const comment = newComment(draft.records, id, text, ctx);
  record.comments.push(comment);
  touch(record, ctx.now);
  return toComment(comment);
}

/** Comment ids are unique across the store, as in br's comments table. */
function newComment(issues: IssueMap, issueId: string, text: string, ctx: MutationContext) {
  const id = indexOf(issues).highestCommentId() + 1;
  return { id, issue_id: issueId, author: ctx.actor, text, created_at: ctx.now };
}

/**
 * updated_at moves forward with every change, even when the clock has not (br rejects updated_at
 * before created_at on import, and keeps the version it already has unless a line is strictly newer).
 */
function touch(record: IssueRecord, now: string): void {
  const previous =
    compareTimestamps(record.updated_at, record.created_at) >= 0 ? record.updated_at : record.created_at;
  record.updated_at = compareTimestamps(now, previous) > 0 ? now : timestampAfter(previous);
}
