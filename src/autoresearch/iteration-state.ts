// Per-iteration facts the executors hand to each other: the doer's base commit, hypothesis, guard and costs.
import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeJsonAtomic } from '../infra/atomic-file.js';

const iterationStateSchema = z.object({
  iter: z.number().int().min(0),
  base_sha: z.string().optional(),
  doer_started_at: z.string().optional(),
  hypothesis: z.string().optional(),
  guard_reverted_paths: z.array(z.string()).default([]),
  /** Cost by bead role: the doer, judge and the strategist that prepared this iteration. */
  costs: z.record(z.string(), z.number()).default({}),
  duration_ms: z.record(z.string(), z.number()).default({}),
  /** The user's uncommitted files before the doer's first attempt (blobs saved in git's object store). */
  user_snapshot: z
    .object({
      head_sha: z.string(),
      files: z.record(
        z.string(),
        z.object({ blob: z.string().nullable(), mode: z.enum(['100644', '100755']) }),
      ),
    })
    .optional(),
  /** Set when the judge could not produce a score after its retries: the arbiter records a crash. */
  judge_failure: z.string().optional(),
});

export type IterationState = z.output<typeof iterationStateSchema>;

export function iterationStatePath(workspace: string, iter: number): string {
  return join(workspace, 'iterations', `iter-${iter}.json`);
}

export async function readIterationState(workspace: string, iter: number): Promise<IterationState> {
  const path = iterationStatePath(workspace, iter);
  const text = await readFileIfExists(path);
  if (text === undefined) return iterationStateSchema.parse({ iter });
  try {
    return iterationStateSchema.parse(JSON.parse(text));
  } catch (error) {
    throw new Error(
      `${path}: unreadable iteration state (${(error as Error).message}); delete it to start the iteration afresh.`,
    );
  }
}

/** Reads, changes and writes back one iteration's state atomically. */
export async function updateIterationState(
  workspace: string,
  iter: number,
  change: (state: IterationState) => IterationState,
): Promise<IterationState> {
  const next = change(await readIterationState(workspace, iter));
  await writeJsonAtomic(iterationStatePath(workspace, iter), next);
  return next;
}

export function totalCost(state: IterationState): number {
  return Object.values(state.costs).reduce((sum, cost) => sum + cost, 0);
}

/** The doer's one-line hypothesis from its final answer (`HYPOTHESIS: …`), if it gave one. */
export function extractHypothesis(finalText: string | undefined): string | undefined {
  if (finalText === undefined) return undefined;
  const matches = [...finalText.matchAll(/^\s*\**HYPOTHESIS\**\s*:\s*(.+?)\s*$/gim)];
  const last = matches[matches.length - 1]?.[1];
  return last === undefined ? undefined : last.slice(0, 500);
}
