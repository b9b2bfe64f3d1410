// The fake br's commands over its JSON state, printing the JSON shapes each br generation prints.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blockersOf, blockingPath, isDependencyBlocked, parentOf, readyIssues } from './graph.mjs';
import { emptyState, isInitialised, nextId, nextTimestamp, saveState } from './state.mjs';

const LABEL = /^[A-Za-z0-9_:-]{1,50}$/;
const TYPES = new Set(['task', 'bug', 'feature', 'epic', 'chore', 'docs', 'question']);
const STATUSES = new Set(['open', 'in_progress', 'blocked', 'deferred', 'closed']);

/** A br error: code, message, hint; the entry point prints it where this generation prints errors. */
export class BrFailure extends Error {
  constructor(code, message, hint = null, context = null) {
    super(message);
    this.code = code;
    this.hint = hint;
    this.context = context;
  }
}

const notFound = (id) =>
  new BrFailure('ISSUE_NOT_FOUND', `Issue not found: ${id}`, "Run 'br list' to see available issues.", {
    searched_id: id,
    similar_ids: [],
  });
const invalid = (reason) => new BrFailure('VALIDATION_FAILED', `Validation failed: ${reason}`, null);

function issueOf(state, id) {
  const issue = state.issues[id];
  if (issue === undefined) throw notFound(id);
  return issue;
}

function parsePriority(raw) {
  const match = /^[Pp]?([0-4])$/.exec(String(raw));
  if (match === null)
    throw new BrFailure('INVALID_PRIORITY', `Invalid priority: ${raw}`, 'Priority must be 0-4');
  return Number(match[1]);
}

function checkLabel(label) {
  if (!LABEL.test(label))
    throw invalid(`label: invalid label '${label}': only letters, digits, _ : - allowed`);
}

function core(issue) {
  const row = {
    id: issue.id,
    title: issue.title,
    status: issue.status,
    priority: issue.priority,
    issue_type: issue.issue_type,
    created_at: issue.created_at,
    updated_at: issue.updated_at,
  };
  if (issue.description !== undefined) row.description = issue.description;
  if (issue.assignee !== undefined) row.assignee = issue.assignee;
  if (issue.closed_at !== undefined) row.closed_at = issue.closed_at;
  if (issue.close_reason !== undefined) row.close_reason = issue.close_reason;
  return row;
}

function edgeRow(state, otherId, type, gen) {
  const other = state.issues[otherId];
  return {
    id: otherId,
    title: other?.title ?? '',
    status: other?.status ?? 'tombstone',
    priority: other?.priority ?? 2,
    [gen.depTypeField]: type,
  };
}

function detail(state, issue, gen) {
  const row = { ...core(issue), labels: [...issue.labels] };
  const deps = state.dependencies.filter((d) => d.issue_id === issue.id);
  const dependents = state.dependencies.filter((d) => d.depends_on_id === issue.id);
  if (deps.length > 0) row.dependencies = deps.map((d) => edgeRow(state, d.depends_on_id, d.type, gen));
  if (dependents.length > 0) row.dependents = dependents.map((d) => edgeRow(state, d.issue_id, d.type, gen));
  const parent = parentOf(state, issue.id);
  if (parent !== undefined && gen.showParent) row.parent = parent;
  const comments = state.comments.filter((c) => c.issue_id === issue.id);
  if (comments.length > 0) row.comments = comments;
  return row;
}

const updatedRow = (issue) => ({
  id: issue.id,
  title: issue.title,
  status: issue.status,
  priority: issue.priority,
  updated_at: issue.updated_at,
});

function warnRedundant(ctx, issue) {
  if (ctx.gen.redundantWarning) {
    ctx.out.stderr += `warning: ${issue.id} is already '${issue.status}' — another agent may be working on this issue; consider re-checking before proceeding\n`;
  }
}

function writeJsonl(ctx, state) {
  const lines = Object.values(state.issues)
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((issue) => {
      const line = {
        ...core(issue),
        created_by: issue.created_by,
        source_repo: '.',
        compaction_level: 0,
        original_size: 0,
      };
      if (issue.labels.length > 0) line.labels = issue.labels;
      const deps = state.dependencies.filter((d) => d.issue_id === issue.id);
      if (deps.length > 0) line.dependencies = deps;
      const comments = state.comments.filter((c) => c.issue_id === issue.id);
      if (comments.length > 0) line.comments = comments;
      return JSON.stringify(line);
    });
  writeFileSync(join(ctx.beadsDir, 'issues.jsonl'), lines.map((l) => `${l}\n`).join(''));
  return lines.length;
}

/** Each command gets `{ gen, state, options, positionals, actor, beadsDir, out }` and returns the JSON to print. */
export const COMMAND_HANDLERS = {
  version: (ctx) => ({ version: ctx.gen.version, build: 'fake', commit: 'fake-br' }),

  init(ctx) {
    if (isInitialised(ctx.beadsDir)) {
      throw new BrFailure(
        'ALREADY_INITIALIZED',
        `Already initialized at ${ctx.beadsDir}`,
        'Use --force to reinitialize',
      );
    }
    mkdirSync(ctx.beadsDir, { recursive: true });
    saveState(ctx.beadsDir, emptyState(ctx.options.prefix ?? 'bd'));
    // What real br init writes beside its database (and a clone carries): how Forge tells br's .beads/.
    writeFileSync(
      join(ctx.beadsDir, 'metadata.json'),
      '{\n  "database": "beads.db",\n  "jsonl_export": "issues.jsonl"\n}',
    );
    ctx.out.stdout += `Initialized beads workspace in ${ctx.beadsDir}\n`;
    return undefined;
  },

  create({ state, options, positionals, actor }) {
    const title = positionals.title ?? options.title;
    if (title === undefined || title.trim() === '') throw invalid('title: title is required');
    const type = options.type ?? 'task';
    if (!TYPES.has(type))
      throw new BrFailure(
        'INVALID_TYPE',
        `Invalid issue type: ${type}`,
        'Valid types: task, bug, feature, epic, chore',
      );
    const priority = parsePriority(options.priority ?? 2);
    const labels = [...new Set((options.labels ?? []).map((l) => l.trim()).filter((l) => l !== ''))];
    labels.forEach(checkLabel);
    if (options.parent !== undefined) issueOf(state, options.parent);
    const deps = (options.deps ?? []).map((spec) => {
      const [kind, id] = spec.includes(':') ? spec.split(/:(.*)/s) : ['blocks', spec];
      issueOf(state, id);
      return { kind, id };
    });
    const now = nextTimestamp(state);
    const id = nextId(state, options.parent);
    const issue = {
      id,
      title,
      status: 'open',
      priority,
      issue_type: type,
      created_at: now,
      updated_at: now,
      labels,
      created_by: actor,
    };
    if (options.description !== undefined) issue.description = options.description;
    state.issues[id] = issue;
    const edge = (dependsOn, kind) => ({
      issue_id: id,
      depends_on_id: dependsOn,
      type: kind,
      created_at: now,
      created_by: actor,
    });
    if (options.parent !== undefined) state.dependencies.push(edge(options.parent, 'parent-child'));
    for (const dep of deps) state.dependencies.push(edge(dep.id, dep.kind));
    const row = core(issue);
    if (labels.length > 0) row.labels = labels;
    const mine = state.dependencies.filter((d) => d.issue_id === id);
    if (mine.length > 0) row.dependencies = mine;
    return row;
  },

  show: ({ gen, state, positionals }) => positionals.ids.map((id) => detail(state, issueOf(state, id), gen)),

  list({ gen, state, options }) {
    const statuses = options.status ?? [];
    let rows = Object.values(state.issues).filter((issue) =>
      statuses.length > 0
        ? statuses.includes(issue.status)
        : options.all === true || issue.status !== 'closed',
    );
    for (const label of options.label ?? []) rows = rows.filter((issue) => issue.labels.includes(label));
    if (options.type !== undefined) rows = rows.filter((issue) => options.type.includes(issue.issue_type));
    rows.sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
    const total = rows.length;
    const limit = options.limit === undefined ? 50 : Number(options.limit);
    if (limit > 0) rows = rows.slice(0, limit);
    const issues = rows.map((issue) => ({
      ...core(issue),
      labels: issue.labels,
      dependency_count: 0,
      dependent_count: 0,
    }));
    return gen.listEnvelope ? { issues, total, limit, offset: 0, has_more: issues.length < total } : issues;
  },

  ready({ gen, state, options }) {
    let scope;
    if (options.epic !== undefined) scope = { parent: issueOf(state, options.epic).id, recursive: true };
    else if (options.parent !== undefined)
      scope = { parent: issueOf(state, options.parent).id, recursive: options.recursive === true };
    let rows = readyIssues(state, gen, scope);
    for (const label of options.label ?? []) rows = rows.filter((issue) => issue.labels.includes(label));
    const limit = options.limit === undefined ? gen.readyDefaultLimit : Number(options.limit);
    if (limit > 0) rows = rows.slice(0, limit);
    return rows.map((issue) => (gen.readyLabels ? { ...core(issue), labels: issue.labels } : core(issue)));
  },

  update(ctx) {
    const { state, options, positionals, actor } = ctx;
    const issues = positionals.ids.map((id) => issueOf(state, id));
    if (options.status !== undefined && !STATUSES.has(options.status)) {
      throw new BrFailure(
        'INVALID_STATUS',
        `Invalid status: ${options.status}`,
        'Valid statuses: open, in_progress, blocked, deferred, closed',
      );
    }
    for (const label of options['add-label'] ?? []) checkLabel(label);
    for (const issue of issues) {
      const target = options.claim === true ? 'in_progress' : options.status;
      if (target === 'in_progress' && options.force !== true && isDependencyBlocked(state, issue.id)) {
        throw invalid(
          `claim: cannot claim blocked issue: ${blockersOf(state, issue.id).join(', ') || 'blocking dependencies'}`,
        );
      }
      if (options.claim === true && issue.assignee !== undefined && issue.assignee !== actor) {
        throw invalid(`assignee: Issue '${issue.id}' is already assigned to '${issue.assignee}'`);
      }
      if (target !== undefined && issue.status === target) warnRedundant(ctx, issue);
      if (target !== undefined) {
        issue.status = target;
        if (target === 'open' || target === 'in_progress') {
          delete issue.closed_at;
          delete issue.close_reason;
        }
      }
      if (options.claim === true) issue.assignee = actor;
      if (options.assignee !== undefined)
        issue.assignee = options.assignee === '' ? undefined : options.assignee;
      if (options.title !== undefined) issue.title = options.title;
      if (options.description !== undefined) issue.description = options.description;
      if (options.priority !== undefined) issue.priority = parsePriority(options.priority);
      for (const label of options['add-label'] ?? [])
        if (!issue.labels.includes(label)) issue.labels.push(label);
      issue.labels = issue.labels.filter((label) => !(options['remove-label'] ?? []).includes(label));
      issue.updated_at = nextTimestamp(state);
    }
    return issues.map(updatedRow);
  },

  close(ctx) {
    const { gen, state, options, positionals } = ctx;
    const closed = [];
    const skipped = [];
    for (const issue of positionals.ids.map((id) => issueOf(state, id))) {
      if (issue.status === 'closed') {
        warnRedundant(ctx, issue);
        skipped.push({ id: issue.id, reason: 'already closed' });
      } else if (options.force !== true && isDependencyBlocked(state, issue.id)) {
        skipped.push({ id: issue.id, reason: `blocked by: ${blockersOf(state, issue.id).join(', ')}` });
      } else {
        const now = nextTimestamp(state);
        Object.assign(issue, {
          status: 'closed',
          closed_at: now,
          updated_at: now,
          close_reason: options.reason ?? 'done',
        });
        closed.push({
          id: issue.id,
          title: issue.title,
          status: 'closed',
          closed_at: now,
          close_reason: issue.close_reason,
        });
      }
    }
    const result = skipped.length > 0 && gen.closeEnvelopeOnSkip ? { closed, skipped } : closed;
    if (closed.length === 0 && skipped.length > 0 && gen.nothingToDo) {
      ctx.out.stdout += `${JSON.stringify(result, null, 2)}\n`;
      throw new BrFailure('NOTHING_TO_DO', `Nothing to do: all ${skipped.length} issue(s) skipped`, null);
    }
    return result;
  },

  'dep add'({ state, options, positionals, actor }) {
    const issue = issueOf(state, positionals.issue);
    const target = issueOf(state, positionals.depends_on);
    const type = options.type ?? 'blocks';
    if (issue.id === target.id)
      throw new BrFailure('SELF_DEPENDENCY', `Issue cannot depend on itself: ${issue.id}`, null);
    // One edge per ordered pair, whatever its type; the reverse edge is a cycle, checked below.
    const existing = state.dependencies.find((d) => d.issue_id === issue.id && d.depends_on_id === target.id);
    if (existing !== undefined) {
      return {
        status: 'exists',
        issue_id: existing.issue_id,
        depends_on_id: existing.depends_on_id,
        type: existing.type,
        action: 'none',
      };
    }
    const path = type === 'parent-child' ? undefined : blockingPath(state, target.id, issue.id);
    if (path !== undefined) {
      const cycle = [issue.id, ...path].join(' -> ');
      throw new BrFailure(
        'CYCLE_DETECTED',
        `Cycle detected in dependencies: ${cycle}`,
        'Remove one dependency to break the cycle.',
        { cycle_path: cycle },
      );
    }
    state.dependencies.push({
      issue_id: issue.id,
      depends_on_id: target.id,
      type,
      created_at: nextTimestamp(state),
      created_by: actor,
    });
    return { status: 'ok', issue_id: issue.id, depends_on_id: target.id, type, action: 'added' };
  },

  'dep list'({ state, options, positionals }) {
    const id = issueOf(state, positionals.issue).id;
    const direction = options.direction ?? 'down';
    return state.dependencies
      .filter(
        (d) => (direction !== 'up' && d.issue_id === id) || (direction !== 'down' && d.depends_on_id === id),
      )
      .filter((d) => options.type === undefined || d.type === options.type)
      .map((d) => {
        const other = state.issues[d.issue_id === id ? d.depends_on_id : d.issue_id];
        return {
          issue_id: d.issue_id,
          depends_on_id: d.depends_on_id,
          type: d.type,
          title: other?.title ?? '',
          status: other?.status ?? 'tombstone',
          priority: other?.priority ?? 2,
        };
      });
  },

  'comments add'({ state, options, positionals, actor }) {
    const issue = issueOf(state, positionals.id);
    const text = options.message ?? positionals.text.join(' ');
    if (text.trim() === '') throw invalid('text: comment text is required');
    const comment = {
      id: state.nextCommentId++,
      issue_id: issue.id,
      author: options.author ?? actor,
      text,
      created_at: nextTimestamp(state),
    };
    state.comments.push(comment);
    return comment;
  },

  sync(ctx) {
    if (ctx.options['flush-only'] !== true) return { status: 'ok', imported: 0, errors: [] };
    const exported = writeJsonl(ctx, ctx.state);
    return { exported, path: join(ctx.beadsDir, 'issues.jsonl'), errors: [] };
  },
};
