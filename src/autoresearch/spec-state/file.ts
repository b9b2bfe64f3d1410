// `specs/<slug>/run-state.json` on disk: read and validated (a corrupt file is an error naming the
// field, never overwritten), changed under a short lock so two agents cannot lose each other's
// writes, written atomically. Also what other code asks of it: does the readiness gate pass.
import { join } from 'node:path';
import { acquireStoreLock } from '../../beads/embedded/lock.js';
import { writeJsonAtomic } from '../../infra/atomic-file.js';
import { AppError, BeadStoreError, ExitCode, UsageError } from '../../infra/errors.js';
import { makeDir } from '../../infra/fs-ops.js';
import { readJsonFile } from '../../infra/json-file.js';
import { gateVerdict, reenterAfterLoop, type GateVerdict } from './machine.js';
import { runStateSchema, SLUG_PATTERN, type LoopOutcome, type RunState } from './schema.js';

export const SPECS_DIR = 'specs';
export const RUN_STATE_FILE = 'run-state.json';

/** `specs/<slug>/run-state.json`, as messages name it. */
export function runStateFile(slug: string): string {
  return `${SPECS_DIR}/${slug}/${RUN_STATE_FILE}`;
}

function checkSlug(slug: string): void {
  if (!SLUG_PATTERN.test(slug))
    throw new UsageError(`Not a spec slug: ${JSON.stringify(slug)}.`, {
      hint: 'A slug is lower-case letters, digits and -, e.g. rate-limiter (the directory under specs/).',
    });
}

/** The run state, or undefined when the spec has none yet. A file that does not validate is a ConfigError. */
export async function readRunState(repo: string, slug: string): Promise<RunState | undefined> {
  checkSlug(slug);
  const file = runStateFile(slug);
  return readJsonFile(join(repo, file), runStateSchema, {
    file,
    hint: `Fix the field named above in ${file} (the last good state is in its history and in git); Forge changes nothing until it reads.`,
  });
}

export interface RunStateChange<T> {
  /** The state to write; undefined writes nothing. */
  write?: RunState;
  result: T;
}

/**
 * Reads the run state, lets `change` decide, and writes its new state, all under the spec's lock so
 * a concurrent record or advance waits instead of overwriting. A corrupt file stops it before `change`.
 */
export async function changeRunState<T>(
  repo: string,
  slug: string,
  change: (current: RunState | undefined) => RunStateChange<T>,
): Promise<T> {
  checkSlug(slug);
  const dir = join(repo, SPECS_DIR, slug);
  await makeDir(dir);
  const lock = await takeLock(join(dir, '.run-state.lock'), runStateFile(slug));
  try {
    const outcome = change(await readRunState(repo, slug));
    if (outcome.write !== undefined) {
      // Checked again on the way out: Forge never writes a run state it would refuse to read.
      await writeJsonAtomic(join(dir, RUN_STATE_FILE), runStateSchema.parse(outcome.write));
    }
    return outcome.result;
  } finally {
    await lock.release();
  }
}

async function takeLock(path: string, file: string): Promise<{ release(): Promise<void> }> {
  try {
    return await acquireStoreLock(path, { waitMs: 10_000 });
  } catch (error) {
    if (error instanceof BeadStoreError && error.code === 'DATABASE_LOCKED') {
      throw new AppError(`${file} is being changed by another process (lock ${path}).`, {
        exitCode: ExitCode.locked,
        hint: `Try again in a moment; if no Forge command is running, delete ${path}.`,
      });
    }
    throw error;
  }
}

/** The readiness gate for a spec: a spec without a run state has not reached it. */
export async function readSpecGate(repo: string, slug: string): Promise<GateVerdict> {
  const state = await readRunState(repo, slug);
  if (state === undefined) {
    return {
      passes: false,
      needs: [{ rule: 'run-state-exists', message: `${runStateFile(slug)} does not exist` }],
    };
  }
  return gateVerdict(state);
}

/** Whether the spec passes its readiness gate: what a pipeline's SPEC stage asks before it passes. */
export async function specGatePasses(repo: string, slug: string): Promise<boolean> {
  return (await readSpecGate(repo, slug)).passes;
}

export type LoopReentry = { recorded: true; state: RunState } | { recorded: false; reason: string };

/** A serving loop's end: its outcome goes into the run state and the spec returns to the readiness gate. */
export async function recordLoopOutcome(
  repo: string,
  slug: string,
  outcome: LoopOutcome,
  by: string,
): Promise<LoopReentry> {
  return changeRunState<LoopReentry>(repo, slug, (current) => {
    if (current === undefined)
      return { result: { recorded: false, reason: `${runStateFile(slug)} does not exist` } };
    const state = reenterAfterLoop(current, outcome, by);
    return { write: state, result: { recorded: true, state } };
  });
}
