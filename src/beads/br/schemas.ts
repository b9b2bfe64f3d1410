// zod schemas for every br `--json` shape the adapter reads (all generations, plus bd's). Their mapping to
// Bead types is rows.ts. The store loads this module while its first br calls run (store.ts), so nothing
// imports it statically but tests.
import { z } from 'zod';

const text = z.string();
const optionalText = z.string().nullish();
/** bd and older br print priorities as numbers; accept `"2"` and `"P2"` too rather than fail a whole run. */
const priority = z.union([
  z.number(),
  z
    .string()
    .regex(/^[Pp]?\d$/)
    .transform((p) => Number(p.replace(/^[Pp]/, ''))),
]);

const issueFields = {
  id: text,
  title: text,
  status: text,
  priority,
  issue_type: text.default('task'),
  created_at: text,
  updated_at: text,
  description: optionalText,
  assignee: optionalText,
  labels: z.array(text).nullish(),
  parent: optionalText,
  closed_at: optionalText,
  close_reason: optionalText,
};

/** create's object, ready's slim rows, list rows and show details all carry at least these. */
export const issueSchema = z.object(issueFields);

/** A dependency row in `show`: `dependency_type`, `dep_type` before v0.1.8, `type` in bd. */
const edgeSchema = z
  .object({
    id: text.optional(),
    depends_on_id: text.optional(),
    issue_id: text.optional(),
    title: optionalText,
    status: optionalText,
    priority: priority.nullish(),
    dependency_type: optionalText,
    dep_type: optionalText,
    type: optionalText,
  })
  .transform((row) => ({ ...row, kind: row.dependency_type ?? row.dep_type ?? row.type ?? 'blocks' }));

export const commentSchema = z
  .object({
    id: z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]),
    issue_id: text,
    author: text.nullish(),
    text: text.optional(),
    body: text.optional(),
    created_at: text,
  })
  .refine((comment) => comment.text !== undefined || comment.body !== undefined, 'comment has no text');

export const detailSchema = z.object({
  ...issueFields,
  dependencies: z.array(edgeSchema).nullish(),
  dependents: z.array(edgeSchema).nullish(),
  comments: z.array(commentSchema).nullish(),
});

/** show prints an array even for one id; bd sometimes prints the bare object. */
export const showSchema = z.union([z.array(detailSchema), detailSchema.transform((detail) => [detail])]);

/** ready prints an array; accept list's envelope too in case a br grows one. */
export const readySchema = z.union([
  z.array(issueSchema),
  z.object({ issues: z.array(issueSchema) }).transform((envelope) => envelope.issues),
]);

/** list: a bare array up to v0.1.29, `{issues,total,limit,offset,has_more}` from v0.1.30. */
export const listSchema = readySchema;

const closedRow = z.object({ id: text });
const skippedRow = z.object({ id: text, reason: optionalText });

/** close: a bare array of closed issues, or `{closed, skipped}` (v0.1.25+ when something was skipped). */
export const closeSchema = z.union([
  z.array(closedRow).transform((closed) => ({ closed, skipped: [] as z.infer<typeof skippedRow>[] })),
  z
    .object({ closed: z.array(closedRow).nullish(), skipped: z.array(skippedRow).nullish() })
    .transform((r) => ({
      closed: r.closed ?? [],
      skipped: r.skipped ?? [],
    })),
]);

/** update (claim, status, labels): an array of `{id,title,status,priority,updated_at}`. */
export const updateSchema = z.union([
  z.array(z.object({ id: text, status: text, updated_at: optionalText })),
  z.object({ id: text, status: text, updated_at: optionalText }).transform((row) => [row]),
]);

export const depAddSchema = z.object({ status: text.optional() }).transform((r) => ({
  status: r.status === 'exists' ? ('exists' as const) : ('ok' as const),
}));

/** `br dep list … --json`: issue_id depends on depends_on_id. */
export const depListSchema = z.array(
  z.object({ issue_id: text, depends_on_id: text, type: optionalText, dependency_type: optionalText }),
);

export const commentAddSchema = z.union([
  commentSchema,
  z
    .array(commentSchema)
    .length(1)
    .transform((c) => c[0]!),
]);

/** `br sync --flush-only --json`: success unless `errors` lists something. */
export const syncSchema = z.object({ errors: z.union([z.array(z.unknown()), z.number()]).nullish() });

export type IssueRow = z.infer<typeof issueSchema>;
export type DetailRow = z.infer<typeof detailSchema>;
export type EdgeRow = z.infer<typeof edgeSchema>;
export type CommentRow = z.infer<typeof commentSchema>;
