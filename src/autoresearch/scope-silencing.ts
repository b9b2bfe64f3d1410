// The doer's changed files in its scope, read as they were at the iteration's base and as it left
// them, handed to silenced-checks.ts; and what the loop allows of what that finds.
import { join } from 'node:path';
import type { Git } from '../infra/git.js';
import { readBytesIfReadable } from '../infra/fs-ops.js';
import { isProjectToolPath } from '../infra/tool-config.js';
import type { LoopConfig } from './config.js';
import { normalizeRelativePath } from './config-values.js';
import { isPathInScope } from './keep-revert.js';
import { metricFolderNames, metricNames } from './runtime-reach.js';
import { silencedChecks, type FileVersions, type Silencing } from './silenced-checks.js';

/**
 * What of the doer's changes to `paths` (relative to `repo`) silences a checker or the test runner and
 * the loop does not allow it: `checks` unless `scope.doer_may_silence_checks`, `tests` unless
 * `scope.doer_may_change_tests`; and `tools`, a file a tool reads from the folder it runs in (seen: a
 * `.npmrc` in the package the metric ran `npm --prefix=… run score` in, whose `node-options` preloaded
 * a script into the metric's node that printed 1000), unless the scope names that very file; and
 * `runtime`, code that reaches into the process measuring it (patches its runtime, names the
 * `metricFiles`; prints or ends it from code the metric loads, as `loadedWith` finds it with the tree
 * as it is and, given the texts the changed files had at `base`, as it was), unless
 * `scope.doer_may_patch_runtime`; and `judge`, text for the judge in the files a soft judge reads
 * (`judged`), unless `scope.doer_may_address_judge`.
 */
export async function disallowedSilencing(
  git: Git,
  repo: string,
  base: string,
  paths: readonly string[],
  scope: Omit<LoopConfig['scope'], 'max_file_bytes' | 'max_change_bytes' | 'max_change_files'>,
  metricFiles: readonly string[] = [],
  loadedWith?: (then: ReadonlyMap<string, string | undefined>) => Promise<ReadonlySet<string>>,
  judged: (path: string) => boolean = () => false,
): Promise<Silencing[]> {
  const named = new Set(scope.doer_paths.map(normalizeRelativePath));
  const tools: Silencing[] = paths
    .filter((path) => isProjectToolPath(path) && !named.has(path))
    .map((path) => ({ kind: 'tools', path }));
  if (
    scope.doer_may_silence_checks &&
    scope.doer_may_change_tests &&
    scope.doer_may_patch_runtime &&
    (scope.doer_may_address_judge || !paths.some(judged))
  )
    return tools;
  const before = await git.readTexts(base, paths);
  const files: FileVersions[] = [];
  // Every file is read whole, however large or binary-looking: a source padded past a size limit, or
  // given a NUL byte in a comment (JavaScript's parsers take one), would otherwise go unread.
  for (const path of paths) {
    const now = await readBytesIfReadable(join(repo, path));
    files.push({ path, before: before.get(path), after: now?.toString('utf8') });
  }
  const loaded = { now: new Set<string>(), then: new Set<string>() };
  if (loadedWith !== undefined && !scope.doer_may_patch_runtime && files.length > 0) {
    loaded.now = new Set(await loadedWith(new Map()));
    loaded.then = new Set(await loadedWith(new Map(files.map((file) => [file.path, file.before]))));
    // A file the doer's change brought into the metric's process, itself unchanged, is read whole: its
    // prints and exits are the change's (an import of a CLI that ends the process at load).
    for (const path of loaded.now) {
      if (loaded.then.has(path) || paths.includes(path)) continue;
      const text = (await readBytesIfReadable(join(repo, path)))?.toString('utf8');
      files.push({ path, before: text, after: text });
    }
  }
  const allowed: Record<Silencing['kind'], boolean> = {
    checks: scope.doer_may_silence_checks,
    tests: scope.doer_may_change_tests,
    tools: false,
    runtime: scope.doer_may_patch_runtime,
    skips: scope.doer_may_silence_checks,
    judge: scope.doer_may_address_judge,
  };
  const tree = files.length === 0 ? [] : (await git.listTree(base, [])).map((entry) => entry.path);
  const names = [
    ...metricNames(metricFiles),
    ...metricFolderNames(tree, metricFiles, (path) => isPathInScope(path, scope.doer_paths)),
  ];
  const silenced = silencedChecks(files, names, loaded, judged).filter((found) => !allowed[found.kind]);
  return [...silenced, ...tools];
}
