// Per-iteration facts the executors hand to each other: the doer's base commit, hypothesis, guard and costs.
import { join } from 'node:path';
import { z } from 'zod';
import type { LoopFiles } from '../infra/loop-files.js';
import { failedGuardSchema } from './ledger.js';

const iterationStateSchema = z.object({
  iter: z.number().int().min(0),
  base_sha: z.string().optional(),
  /** The branch the loop was on when the doer started (null: a detached HEAD). */
  branch: z.string().nullable().optional(),
  /** HEAD after the doer's work was committed: what the judge scores. */
  doer_head: z.string().optional(),
  /** HEAD when the judge measured: the only tree the arbiter may keep. */
  judged_head: z.string().optional(),
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
  /** The guard or track threshold that failed after the doer: no judge, the arbiter records `guard_failed`. */
  guard_failure: failedGuardSchema().optional(),
  /** The tracks measured after the doer (for iteration 0: at loop creation). */
  tracks: z.record(z.string(), z.number().nullable()).optional(),
  /** Iteration 0: the tests each guard passed at loop creation, as its runner's summary said. */
  guard_tests: z.record(z.string(), z.number()).optional(),
  /** Iteration 0: the tests a test metric's baseline ran and passed or failed (its report or summary). */
  metric_tests: z.number().int().nonnegative().optional(),
  /** Iteration 0: the tests each test track (TAP, JUnit, an exit code's summary) counted, by name. */
  track_tests: z.record(z.string(), z.number()).optional(),
  /**
   * Iteration 0: the files the loop's commands name that git ignores and that their own runs write (a
   * build's output), relative to the tree: a later run may write them (run-outputs.ts).
   */
  run_outputs: z.array(z.string()).optional(),
  /** What agents of this iteration changed that was not theirs; a doer's entry makes it a `tamper`. */
  tamper: z
    .array(z.object({ role: z.string(), paths: z.array(z.string()), what: z.string().optional() }))
    .default([]),
});

export type IterationState = z.output<typeof iterationStateSchema>;

export function iterationStatePath(workspace: string, iter: number): string {
  return join(workspace, 'iterations', `iter-${iter}.json`);
}

export async function readIterationState(
  files: LoopFiles,
  workspace: string,
  iter: number,
): Promise<IterationState> {
  const path = iterationStatePath(workspace, iter);
  const text = await files.readIfExists(path);
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
  files: LoopFiles,
  workspace: string,
  iter: number,
  change: (state: IterationState) => IterationState,
): Promise<IterationState> {
  const next = change(await readIterationState(files, workspace, iter));
  await files.writeJson(iterationStatePath(workspace, iter), next);
  return next;
}

/** Adds a tamper record (merging paths of the same role). */
export function withTamper(
  state: IterationState,
  record: { role: string; paths: readonly string[]; what?: string },
): IterationState {
  const others = state.tamper.filter((r) => r.role !== record.role);
  const same = state.tamper.find((r) => r.role === record.role);
  const paths = [...new Set([...(same?.paths ?? []), ...record.paths])].sort();
  const what = [same?.what, record.what].filter((w) => w !== undefined && w !== '').join('; ');
  return { ...state, tamper: [...others, { role: record.role, paths, ...(what === '' ? {} : { what }) }] };
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
