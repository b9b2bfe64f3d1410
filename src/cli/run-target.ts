// What a run was given: an epic (or bead) that exists, else a usage error that says what was meant.
import type { BeadDetail, BeadStore, EpicGraph } from '../beads/types.js';
import { BeadStoreError, EnvironmentError, UsageError } from '../infra/errors.js';

export interface RunTargetContext {
  /** The directory the run was started in. */
  dir: string;
  inGitRepo: boolean;
}

/**
 * `ralph-loop <epic>`: the epic exists, and is an epic or a parent of beads, not a bead of its own.
 * With `onlyBead` (`ralph-loop once`) the epic only has to exist.
 */
export async function checkRunTarget(
  store: BeadStore,
  epicId: string,
  context: RunTargetContext & {
    onlyBead?: string | undefined;
    /** The epic's graph when the caller has read it (`readRunGraph`): nothing is read again. */
    graph?: EpicGraph | undefined;
  },
): Promise<void> {
  const target = context.graph?.epic ?? (await showRunTarget(store, epicId, 'epic', context));
  if (context.onlyBead !== undefined || target.issue_type === 'epic') return;
  const hasBeads =
    context.graph === undefined ? (await store.children(epicId)).length > 0 : context.graph.beads.length > 0;
  if (hasBeads) return;
  const parent = target.parent;
  throw new UsageError(
    `${epicId} is a bead${parent === undefined ? '' : ` of epic ${parent}`}, not an epic: it has no beads to run.`,
    {
      hint: `Run this bead alone: ralph-loop once ${epicId}${parent === undefined ? '' : `; or its whole epic: ralph-loop ${parent}`}`,
    },
  );
}

/**
 * The epic's graph, read once for the checks before a run (target, validation, recovery); undefined
 * when the epic or the store is missing, which `checkRunTarget` then says plainly. Other failures throw.
 */
export async function readRunGraph(store: BeadStore, epicId: string): Promise<EpicGraph | undefined> {
  try {
    return await store.graph(epicId);
  } catch (error) {
    if (
      error instanceof BeadStoreError &&
      (error.code === 'ISSUE_NOT_FOUND' || error.code === 'NOT_INITIALIZED')
    )
      return undefined;
    throw error;
  }
}

/** Shows an epic or bead; a missing one is a usage error naming the closest id there is. */
export async function showRunTarget(
  store: BeadStore,
  id: string,
  kind: 'epic' | 'bead',
  context: RunTargetContext,
): Promise<BeadDetail> {
  try {
    return await store.show(id);
  } catch (error) {
    if (!(error instanceof BeadStoreError)) throw error;
    if (error.code === 'NOT_INITIALIZED' && !context.inGitRepo) {
      throw new EnvironmentError(
        `${context.dir} is not a git repository, and holds no bead store: ralph-loop runs in a project.`,
        {
          hint: 'Change to your project (or pass -C <dir>); a new project starts with git init, then forge-pack init.',
          cause: error,
        },
      );
    }
    if (error.code !== 'ISSUE_NOT_FOUND') throw error;
    const candidates = (await store.list({ all: true }).catch(() => []))
      .filter((bead) => (kind === 'epic') === (bead.issue_type === 'epic'))
      .map((bead) => bead.id);
    const closest = closestId(id, candidates);
    throw new UsageError(
      `There is no ${kind} ${id}${closest === undefined ? '' : `; did you mean ${closest}?`}`,
      {
        hint:
          kind === 'epic'
            ? 'List the beads with: forge-pack beads list -a (epics have type epic).'
            : 'List the beads with: forge-pack beads list -a',
        cause: error,
      },
    );
  }
}

/** The id nearest to `id` by edit distance, when it is near enough to be a slip of the keyboard. */
export function closestId(id: string, candidates: readonly string[]): string | undefined {
  let best: { id: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(id.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || distance < best.distance) best = { id: candidate, distance };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.ceil(id.length / 2)) ? best.id : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
