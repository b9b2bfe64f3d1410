// What decides how git behaves in a repository beyond its tree: config files at every level (filters,
// fsmonitor, textconv, excludes, hooksPath, include), the hooks, info/ (attributes, exclude, grafts) and
// the replace refs in git's own directory. An agent with a shell can write each of them, and every later git call (Forge's own
// status, add and commit included) then runs the agent's command or sees a tree a filter made up.
import { chmod, lstat } from 'node:fs/promises';
import { join, sep } from 'node:path';

export interface GitControlPaths {
  /** Directories every file of which counts (hooks/, info/). */
  dirs: string[];
  /** Single files, wherever they are (config files). */
  files: string[];
}

/**
 * The paths for a working tree whose git directory is `gitDir` (a linked worktree's own) and whose
 * common directory is `commonDir`, with the user's and the system's config as `env` locates them.
 */
export function gitControlPaths(
  gitDir: string,
  commonDir: string,
  env: Readonly<Record<string, string | undefined>>,
): GitControlPaths {
  const home = env.HOME === undefined || env.HOME === '' ? undefined : env.HOME;
  const xdg = env.XDG_CONFIG_HOME || (home === undefined ? undefined : join(home, '.config'));
  const files = [
    join(commonDir, 'config'),
    join(commonDir, 'config.worktree'),
    join(gitDir, 'config.worktree'),
    ...(home === undefined ? [] : [join(home, '.gitconfig')]),
    ...(xdg === undefined ? [] : ['config', 'attributes', 'ignore'].map((name) => join(xdg, 'git', name))),
    ...[env.GIT_CONFIG_GLOBAL, env.GIT_CONFIG_SYSTEM].filter((path) => path !== undefined && path !== ''),
    '/etc/gitconfig',
  ] as string[];
  // refs/replace/: `git replace` makes every git call read one object as another (Forge's own calls
  // ignore it, git-command.ts; the user's and the metric's would not).
  const dirs = [
    join(commonDir, 'hooks'),
    join(commonDir, 'info'),
    join(gitDir, 'info'),
    join(commonDir, 'refs', 'replace'),
  ];
  return { dirs: [...new Set(dirs)], files: [...new Set(files)] };
}

/** The permission bits of each file that exists (a hook runs only when executable). */
export async function readModes(paths: readonly string[]): Promise<Map<string, number>> {
  const modes = new Map<string, number>();
  for (const path of paths) {
    const stats = await lstat(path).catch(() => undefined);
    if (stats?.isFile() === true) modes.set(path, stats.mode & 0o7777);
  }
  return modes;
}

/** Sets each path back to its mode in `modes` (a path with none there is left as it is). */
export async function restoreModes(
  modes: ReadonlyMap<string, number>,
  paths: readonly string[],
): Promise<void> {
  for (const path of paths) {
    const mode = modes.get(path);
    if (mode !== undefined) await chmod(path, mode).catch(() => undefined);
  }
}

/** Whether `path` is one of `control`'s files or lies under one of its directories. */
export function isGitControlPath(control: GitControlPaths, path: string): boolean {
  return control.files.includes(path) || control.dirs.some((dir) => path.startsWith(`${dir}${sep}`));
}
