// What a doer leaves past the loop's size limits (`scope.max_file_bytes`, `scope.max_change_bytes`)
// goes before anything reads it whole: git hashes every byte of a file each guard or commit adds, so a
// 3 GB sparse file (made in an instant) cost minutes, and nothing bounded a 300 GB one (size-limits.ts).
// A change of more files than `scope.max_change_files` goes whole: each file costs every guard a look.
import {
  describeOverLimits,
  overFileCount,
  overLimits,
  regularFileSizes,
  sizeLimitsOf,
  type SizeLimits,
} from '../../infra/size-limits.js';
import { isPathInScope } from '../keep-revert.js';
import type { AutoresearchContext } from './context.js';

export interface SizeCheck {
  baseSha: string;
  /** The loop's bookkeeping: the file vault's, never this check's. */
  ignored: readonly string[];
  /** The metric's files: a change there is tamper, which the guard records and puts back. */
  protectedPaths: readonly string[];
  /** The user's files, dirty before the doer started: theirs, left as they are. */
  userFiles: { has(path: string): boolean };
}

/**
 * Takes away, of what the doer changed since the base (in its scope or not), each file over a limit,
 * or all of it when it changed more files than the limit: one the base had is put back as it was, one
 * it did not is removed. Returns what the bead's notes say of them, or undefined when none was.
 */
export async function keepOutOversized(
  context: AutoresearchContext,
  o: SizeCheck,
  /** Told what was taken away, as the bead's activity. */
  request: { onActivity?: ((message: string) => void) | undefined },
): Promise<string | undefined> {
  const limits: SizeLimits = sizeLimitsOf(context.config.scope);
  if (limits.file === 0 && limits.total === 0 && limits.files === 0) return undefined;
  const metric = new Set(o.protectedPaths);
  const changes = (await context.git.changedSince(o.baseSha)).filter(
    ({ path }) => !metric.has(path) && !o.userFiles.has(path) && !isPathInScope(path, o.ignored),
  );
  let over = overFileCount(
    changes.map(({ path }) => path),
    limits,
  );
  if (over.length === 0) {
    const kept = changes.filter(({ change }) => change !== 'deleted').map(({ path }) => path);
    over = overLimits(await regularFileSizes(context.repo, kept), limits);
  }
  if (over.length === 0) return undefined;
  const paths = over.map(({ path }) => path);
  // Of the base's, as the comparison with it told (cheaper than asking git of 100,000 paths again).
  const inBase = new Set(
    changes.filter(({ change }) => change !== 'added' && change !== 'untracked').map(({ path }) => path),
  );
  await context.git.checkoutPathsFrom(
    o.baseSha,
    paths.filter((path) => inBase.has(path)),
  );
  await context.git.removePaths(paths.filter((path) => !inBase.has(path)));
  const what = over[0]?.limit === 'files' ? 'none of the change committed' : 'not committed';
  const note = `${what}, over the loop's size limits: ${describeOverLimits(over, limits)}`;
  request.onActivity?.(note);
  return note;
}
