// The in-memory record model (br's issue line, field for field) and its projection to Bead shapes.
import type { Bead, BeadComment, BeadEdge, BeadStatus } from '../types.js';

export interface DependencyRecord {
  issue_id: string;
  depends_on_id: string;
  type: string;
  created_at: string;
  created_by?: string;
  /** Fields br writes that Forge does not interpret (metadata, thread_id, …), kept verbatim. */
  extra?: Record<string, unknown>;
}

export interface CommentRecord {
  id: number;
  issue_id: string;
  author: string;
  text: string;
  created_at: string;
  extra?: Record<string, unknown>;
}

export interface IssueRecord {
  id: string;
  title: string;
  description?: string;
  status: BeadStatus;
  priority: number;
  issue_type: string;
  assignee?: string;
  created_at: string;
  created_by?: string;
  updated_at: string;
  closed_at?: string;
  close_reason?: string;
  defer_until?: string;
  source_repo?: string;
  compaction_level?: number;
  original_size?: number;
  ephemeral?: boolean;
  pinned?: boolean;
  is_template?: boolean;
  labels: string[];
  dependencies: DependencyRecord[];
  comments: CommentRecord[];
  /** Every other field of the line (design, notes, external_ref, …), kept verbatim and in place. */
  extra?: Record<string, unknown>;
}

export type IssueMap = ReadonlyMap<string, IssueRecord>;

export const PARENT_CHILD = 'parent-child';

export function cloneRecord(record: IssueRecord): IssueRecord {
  return {
    ...record,
    labels: [...record.labels],
    dependencies: record.dependencies.map((d) => ({ ...d })),
    comments: record.comments.map((c) => ({ ...c })),
  };
}

export function parentOf(record: IssueRecord): string | undefined {
  return record.dependencies.find((d) => d.type === PARENT_CHILD)?.depends_on_id;
}

export function toBead(record: IssueRecord): Bead {
  return {
    id: record.id,
    title: record.title,
    status: record.status,
    priority: record.priority,
    issue_type: record.issue_type,
    created_at: record.created_at,
    updated_at: record.updated_at,
    description: record.description,
    assignee: record.assignee,
    labels: [...record.labels],
    parent: parentOf(record),
    closed_at: record.closed_at,
    close_reason: record.close_reason,
  };
}

export function toComment(comment: CommentRecord): BeadComment {
  return {
    id: comment.id,
    issue_id: comment.issue_id,
    author: comment.author,
    text: comment.text,
    created_at: comment.created_at,
  };
}

export function edgeTo(id: string, type: string, issues: IssueMap): BeadEdge {
  const other = issues.get(id);
  if (other === undefined) return { id, dependency_type: type };
  return { id, title: other.title, status: other.status, priority: other.priority, dependency_type: type };
}
