// br rows (as the schemas in schemas.ts give them) mapped to Bead types. Kept apart from the schemas so
// that reading them needs no zod: only its types come from there.
import type { Bead, BeadComment, BeadDetail, BeadEdge } from '../types.js';
import type { CommentRow, DetailRow, EdgeRow, IssueRow } from './schemas.js';

/** A br issue row as a Bead; optional fields are left out rather than set to undefined. */
export function toBead(
  row: IssueRow,
  fallback: { labels?: readonly string[] | undefined; parent?: string | undefined } = {},
): Bead {
  const bead: Bead = {
    id: row.id,
    title: row.title,
    status: row.status,
    priority: row.priority,
    issue_type: row.issue_type,
    created_at: row.created_at,
    updated_at: row.updated_at,
    labels: [...(row.labels ?? fallback.labels ?? [])],
  };
  const parent = row.parent ?? fallback.parent;
  if (row.description != null) bead.description = row.description;
  if (row.assignee != null) bead.assignee = row.assignee;
  if (parent != null) bead.parent = parent;
  if (row.closed_at != null) bead.closed_at = row.closed_at;
  if (row.close_reason != null) bead.close_reason = row.close_reason;
  return bead;
}

function toEdge(row: EdgeRow, self: string): BeadEdge | undefined {
  // Rows from bd's dependency tables name both ends; keep the one that is not this bead.
  const other = row.id ?? (row.issue_id === self ? row.depends_on_id : row.issue_id) ?? row.depends_on_id;
  if (other === undefined) return undefined;
  const edge: BeadEdge = { id: other, dependency_type: row.kind };
  if (row.title != null) edge.title = row.title;
  if (row.status != null) edge.status = row.status;
  if (row.priority != null) edge.priority = row.priority;
  return edge;
}

export function toComment(row: CommentRow): BeadComment {
  return {
    id: row.id,
    issue_id: row.issue_id,
    author: row.author ?? '',
    text: row.text ?? row.body ?? '',
    created_at: row.created_at,
  };
}

export function toDetail(row: DetailRow): BeadDetail {
  const dependencies = (row.dependencies ?? []).flatMap((e) => toEdge(e, row.id) ?? []);
  const dependents = (row.dependents ?? []).flatMap((e) => toEdge(e, row.id) ?? []);
  const parent = row.parent ?? dependencies.find((e) => e.dependency_type === 'parent-child')?.id;
  return {
    ...toBead(row, { parent }),
    dependencies,
    dependents,
    comments: (row.comments ?? []).map(toComment),
  };
}

/** The Bead part of a BeadDetail (or a Bead as it is). */
export function beadOnly(bead: Bead | BeadDetail): Bead {
  if (!('dependencies' in bead)) return bead;
  const { dependencies: _dependencies, dependents: _dependents, comments: _comments, ...rest } = bead;
  return rest;
}
