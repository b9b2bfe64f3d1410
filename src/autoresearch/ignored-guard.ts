// The files git ignores in the loop's tree besides installed dependencies and caches: data, local
// settings, build outputs. No scope check or revert sees them, yet the metric may read them: a doer
// that changed the ignored weights the metric multiplies by was kept at ten times its score (seen). In
// the doer's own scope too: git keeps no ignored file, so a score resting on one is not the commit's,
// and a revert would leave it behind (seen: a factor the doer's turn cached in an ignored `src/cache/`,
// kept at a hundred times its score). So what an agent changes there never reaches the metric: a file it made is removed, one it changed
// or removed is put back from the runner's copy, or, with no copy, removed when it is a build output
// its tool writes again. What is left (a large data file changed in place) cannot be undone: the
// caller makes it the agent's tamper and stops the loop until a person looks.
import { dirname, isAbsolute, join } from 'node:path';
import { insideTree, putBack, putTimesBack, type FileCopies } from '../infra/file-copies.js';
import { realPath, removePath } from '../infra/fs-ops.js';
import { changedFiles } from '../infra/ignored-files.js';
import { isPathInScope } from './keep-revert.js';

/** Build outputs, scratch and run logs that their tools write again: with no copy, what changed there is removed. */
const DERIVED_DIRS = new Set([
  'dist',
  'build',
  'out',
  'target',
  '_build',
  '.next',
  '.nuxt',
  '.svelte-kit',
  'coverage',
  'htmlcov',
  '.nyc_output',
  '.tox',
  '.nox',
  'tmp',
  'temp',
  'logs',
  'wandb',
  'mlruns',
  'lightning_logs',
  '.ipynb_checkpoints',
]);

/** A build output or scratch file, or a log. */
export function isDerived(path: string): boolean {
  const segments = path.split('/');
  return (
    segments.some((segment) => DERIVED_DIRS.has(segment) || segment.endsWith('.egg-info')) ||
    path.endsWith('.log')
  );
}

export interface IgnoredUndo {
  /** Put back from the copy. */
  restored: string[];
  /** Removed: made by the agent, or a build output or a path the metric writes again. */
  removed: string[];
  /** Changed and not undone: no copy, not derived, or reached through a link leading out of the tree. */
  lost: string[];
}

/**
 * Undoes each change from `before` to `after` (paths relative to `root`), as the file header says.
 */
export async function undoIgnoredChanges(
  root: string,
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  copies: FileCopies,
  options: {
    /** Paths the metric writes again itself: removed. */
    rebuilt?: readonly string[];
    /** Files found to hold the same bytes and mode as before: only their times are put back. */
    sameBytes?: ReadonlySet<string>;
  } = {},
): Promise<IgnoredUndo> {
  const { rebuilt = [], sameBytes = new Set<string>() } = options;
  const undo: IgnoredUndo = { restored: [], removed: [], lost: [] };
  const tree = await realPath(root);
  for (const path of changedFiles(before, after)) {
    // A followed link's own entry is named `<dir> ->`.
    const file = path.endsWith(' ->') ? path.slice(0, -3) : path;
    // Absolute: the data outside the repository that the loop's commands name (outside-data.ts).
    const outside = isAbsolute(file);
    const at = outside ? file : join(root, file);
    const was = before.get(path);
    const copy = was === undefined ? undefined : copies.get(path, was);
    // Nothing is written or removed through a directory an agent turned into a link out of the tree.
    if (!outside && !(await insideTree(tree, dirname(at)))) {
      undo.lost.push(path);
    } else if (
      was === undefined ||
      isPathInScope(file, rebuilt) ||
      (copy === undefined && !outside && isDerived(file))
    ) {
      await removePath(at, { recursive: true });
      undo.removed.push(path);
    } else if (copy !== undefined) {
      await putBack(at, copy);
      undo.restored.push(path);
    } else if (sameBytes.has(path) && was !== undefined) {
      await putTimesBack(at, was);
      undo.restored.push(path);
    } else {
      undo.lost.push(path);
    }
  }
  return undo;
}
