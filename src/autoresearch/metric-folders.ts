// The metric's own folders: where its scripts are kept with the cases they check and nothing of the
// doer's scope. The copy check reads their files as the metric's (metric-copies.ts), the link check
// closes them to the doer's links, and the read watches log what is read there (outside-reads.ts).
import { isPathInScope } from './keep-revert.js';
import { metricFolders } from './runtime-reach.js';

/** The folders that hold the metric's scripts and nothing of the doer's `scope`: the metric's own files. */
export function metricKeyFolders(scope: readonly string[], metricFiles: readonly string[]): string[] {
  return metricFolders(
    metricFiles,
    (folder) =>
      isPathInScope(folder, scope) ||
      scope.some((path) => path.replace(/^\.\//, '').startsWith(`${folder}/`)),
  );
}
