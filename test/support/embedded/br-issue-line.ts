// A strict zod schema of one line of br's issues.jsonl, written from beads_rust's `Issue` model (src/model/mod.rs).
//
// Field names, types and serde rules as found in Dicklesworthstone/beads_rust: `Option<_>` fields carry
// `skip_serializing_if = "Option::is_none"` (absent, never null), booleans `is_false` (absent or true),
// the three relation lists `Vec::is_empty` (absent or non-empty), `compaction_level` is always written
// (0 when None), `Comment.body` is renamed `text`, `Dependency.dep_type` is renamed `type`. The lease_*
// and retry fields exist in one generation, source_repo_path and agent_context in a later one; the
// union is accepted. Unknown keys are rejected.
import { z } from 'zod';
import { compareTimestamps } from '../../../src/beads/types.js';

const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, 'RFC 3339 UTC timestamp')
  .refine((value) => Number.isFinite(Date.parse(value)));
const text = z.string().optional();
const when = timestamp.optional();
const int = z.number().int();

export const brDependencySchema = z.strictObject({
  issue_id: z.string().min(1),
  depends_on_id: z.string().min(1),
  type: z.string().min(1),
  created_at: timestamp,
  created_by: text,
  metadata: text,
  thread_id: text,
});

export const brCommentSchema = z.strictObject({
  id: int.positive(),
  issue_id: z.string().min(1),
  author: z.string().min(1).max(200),
  text: z.string().min(1),
  created_at: timestamp,
});

export const brIssueLineSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9_.-]+-[a-z0-9]+(\.\d+)*$/, 'prefix-hash id'),
    title: z.string().min(1).max(500),
    description: text,
    design: text,
    acceptance_criteria: text,
    notes: text,
    status: z.string().min(1),
    priority: int.min(0).max(4),
    issue_type: z.string().min(1),
    assignee: text,
    owner: text,
    lease_owner: text,
    lease_id: text,
    lease_expires_at: when,
    lease_heartbeat_at: when,
    estimated_minutes: int.optional(),
    created_at: timestamp,
    created_by: text,
    updated_at: timestamp,
    closed_at: when,
    close_reason: text,
    closed_by_session: text,
    due_at: when,
    defer_until: when,
    external_ref: text,
    source_system: text,
    source_repo: text,
    source_repo_path: text,
    agent_context: text,
    deleted_at: when,
    deleted_by: text,
    delete_reason: text,
    original_type: text,
    compaction_level: int,
    compacted_at: when,
    compacted_at_commit: text,
    original_size: int.optional(),
    retry_count: int.optional(),
    max_retries: int.optional(),
    sender: text,
    ephemeral: z.literal(true).optional(),
    pinned: z.literal(true).optional(),
    is_template: z.literal(true).optional(),
    labels: z
      .array(z.string().regex(/^[A-Za-z0-9_:-]{1,50}$/))
      .min(1)
      .optional(),
    dependencies: z.array(brDependencySchema).min(1).optional(),
    comments: z.array(brCommentSchema).min(1).optional(),
  })
  .refine(
    (issue) => Date.parse(issue.updated_at) >= Date.parse(issue.created_at),
    'updated_at before created_at',
  );

export type BrIssueLine = z.infer<typeof brIssueLineSchema>;

/** Every line of the file, parsed strictly; throws naming the line that br would not take. */
export function parseBrJsonl(content: string): BrIssueLine[] {
  const lines = content.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, index) => {
    const result = brIssueLineSchema.safeParse(JSON.parse(line));
    if (!result.success) throw new Error(`line ${index + 1}: ${z.prettifyError(result.error)}\n${line}`);
    return result.data;
  });
}

/**
 * The issue each id stands for after br imports the file: its last line. Throws when a later line for
 * an id is not strictly newer (updated_at) than the one before it: br's import skips a line that is not
 * newer than what its database already holds, so it would keep the earlier version.
 */
export function lastLinePerId(lines: readonly BrIssueLine[]): Map<string, BrIssueLine> {
  const last = new Map<string, BrIssueLine>();
  for (const [index, line] of lines.entries()) {
    const earlier = last.get(line.id);
    if (earlier !== undefined && !(compareTimestamps(line.updated_at, earlier.updated_at) > 0)) {
      throw new Error(
        `line ${index + 1}: ${line.id} again with updated_at ${line.updated_at}, not after ${earlier.updated_at}`,
      );
    }
    last.set(line.id, line);
  }
  return last;
}
