// The options every command of both programs takes, and the repository they point at: no commander
// here, so the short `ralph-loop status` path (status-shortcut.ts) shares them with the full program.
import { resolve } from 'node:path';
import type { StoreChoice } from '../beads/open-store.js';
import { findRepoRoot } from '../infra/repo-root.js';

export interface GlobalOptions {
  json?: boolean;
  debug?: boolean;
  store?: StoreChoice;
  actor?: string;
  cwd?: string;
}

/**
 * The repository a command works on: `-C <dir>` exactly as given, else the nearest directory above
 * the current one holding `.forge/` or `.beads/` (up to the git top level), as git and br do.
 */
export function workingDir(deps: { cwd: string }, options: GlobalOptions): string {
  return options.cwd === undefined ? findRepoRoot(deps.cwd) : resolve(deps.cwd, options.cwd);
}
