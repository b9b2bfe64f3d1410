// What travels through the queue, both ways, as zod schemas: a job is an attempt plus the git remote a
// worker fetches its base from (never an env, never a secret); a result is checked when it comes back,
// and anything a worker sends that does not fit is an 'error' outcome naming what was wrong.
import { z } from 'zod';
import { parseAgentSpec } from '../../agents/spec.js';
import type { AttemptJob, AttemptResult } from '../../loop/attempt-dispatch.js';

const beadSchema = z.object({
  id: z.string().min(1),
  title: z.string(),
  status: z.string().min(1),
  priority: z.number(),
  issue_type: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  description: z.string().optional(),
  assignee: z.string().optional(),
  labels: z.array(z.string()),
  parent: z.string().optional(),
  closed_at: z.string().optional(),
  close_reason: z.string().optional(),
});

export const queueJobSchema = z.object({
  attemptId: z.string().min(1),
  epicId: z.string().min(1),
  bead: beadSchema,
  role: z.string().min(1),
  agentSpec: z.string().min(1),
  agentFromLabel: z.boolean(),
  attempt: z.number().int().positive(),
  feedback: z.string().optional(),
  timeoutMs: z.number().int().positive(),
  budgetUsd: z.number().nonnegative().optional(),
  base: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'a full commit id'),
  branch: z.string().startsWith('forge/attempts/'),
  /** The git remote holding `baseRef`, where the worker pushes `branch`. */
  remote: z.string().min(1),
  /** The ref the runner pushed the base commit to before dispatching. */
  baseRef: z.string().startsWith('refs/forge/'),
  /**
   * Where in the tree the runner runs ('' at its top, else `packages/api`): the agent starts there, as
   * it would in the runner's own tree. Never absolute, never `..`: a job cannot send an agent out.
   */
  subdir: z
    .string()
    .default('')
    .refine(
      (path) => !path.startsWith('/') && !path.includes('\\') && !path.split('/').includes('..'),
      'a path inside the tree, without ..',
    ),
  /**
   * The argv of the user's named agent `agentSpec` (the runner's `agent_commands`), which the worker
   * runs under that name; a bead label still only names it.
   */
  agentCommand: z.array(z.string()).min(1).optional(),
  /**
   * What the attempt's commit may hold, in bytes and files (0: no limit): the runner's, never the
   * worker's. A job from a runner that sets no limit on files has none.
   */
  sizeLimits: z
    .object({
      file: z.number().int().nonnegative(),
      total: z.number().int().nonnegative(),
      files: z.number().int().nonnegative().default(0),
    })
    .optional(),
});

export type QueueJob = z.infer<typeof queueJobSchema>;

/** How much of an attempt's transcript a worker sends back: its end, where a failure is told. */
export const TRANSCRIPT_BACK_BYTES = 256 * 1024;

const outcomes = [
  'ok',
  'error',
  'rate_limited',
  'overloaded',
  'auth',
  'timeout',
  'aborted',
  'needs_human',
  'budget',
] as const;

export const queueResultSchema = z.object({
  outcome: z.enum(outcomes),
  message: z.string(),
  agent: z.string().optional(),
  model: z.string().optional(),
  scripted: z.boolean().optional(),
  exitCode: z.number().optional(),
  inputTokens: z.number().nonnegative().optional(),
  outputTokens: z.number().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
  resetAt: z.number().optional(),
  finalText: z.string().optional(),
  writeAttempts: z.array(z.string()).optional(),
  fatal: z.boolean().optional(),
  environment: z.boolean().optional(),
  detail: z.string().optional(),
  commit: z
    .string()
    .regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/)
    .optional(),
  /** Files the attempt left past the job's size limits, not in its commit. */
  tooLarge: z
    .array(
      z.object({
        path: z.string(),
        size: z.number().nonnegative(),
        limit: z.enum(['file', 'total', 'files']),
      }),
    )
    .optional(),
  /** `host:pid` of the worker process. */
  worker: z.string().regex(/^[^\s:]+:\d+$/, 'host:pid'),
  /**
   * The attempt's transcript as the worker wrote it (its last TRANSCRIPT_BACK_BYTES), for the runner's
   * own `logs/<bead>.log`: a failure's hint names `ralph-loop logs`, on the runner's machine.
   */
  transcript: z
    .object({
      text: z.string().max(TRANSCRIPT_BACK_BYTES),
      /** Where the whole of it stays, on the worker. */
      path: z.string(),
      /** Bytes left out from its start. */
      omitted: z.number().int().nonnegative(),
    })
    .optional(),
});

export type QueueResult = z.infer<typeof queueResultSchema>;

/** The ref a runner pushes an attempt's base commit to, so a worker on another machine can fetch it. */
export function baseRefOf(attemptId: string): string {
  return `refs/forge/bases/${attemptId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** The job for `job`, to be fetched from and pushed to `remote`. */
export function toQueueJob(
  job: AttemptJob,
  remote: string,
  subdir = '',
  agentCommand?: readonly string[],
): QueueJob {
  const { bead } = job;
  return queueJobSchema.parse({
    ...job,
    bead: { ...bead },
    remote,
    baseRef: baseRefOf(job.attemptId),
    subdir,
    ...(agentCommand === undefined ? {} : { agentCommand: [...agentCommand] }),
  });
}

/** What a worker answered, checked; garbage becomes an 'error' result that says so. */
export function fromWorkerResult(value: unknown): AttemptResult {
  const parsed = queueResultSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(result)'}: ${issue.message}`)
    .join('; ');
  return { outcome: 'error', message: `the worker's result is not a valid attempt result (${where})` };
}

/**
 * The queue an attempt goes to: one per agent kind (`claude`, `codex`, `command`, …), so a worker's
 * limit per kind is that queue's concurrency. A spec that does not parse still gets a queue; the
 * worker's own parse reports it as the attempt's error.
 */
export function queueNameOf(agentSpec: string): string {
  const parsed = parseAgentSpec(agentSpec, { allowCommand: true });
  return queueNameForKind(parsed.ok ? parsed.spec.cli : 'command');
}

export function queueNameForKind(kind: string): string {
  return `forge-attempts-${kind.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
