// What decides how git behaves in a repository beyond its tree: config files at every level (filters,
// fsmonitor, textconv, excludes, hooksPath, include), the hooks, info/ (attributes, exclude, grafts,
// sparse-checkout), the replace refs and the alternate object stores in git's own directory. An agent with a shell can write each of them, and every later git call (Forge's own
// status, add and commit included) then runs the agent's command or sees a tree a filter made up. And the
// files by which git knows a merge, rebase, cherry-pick, revert or bisect is under way.
import { chmod, lstat } from 'node:fs/promises';
import { join, sep } from 'node:path';

export interface GitControlPaths {
  /** Directories every file of which counts (hooks/, info/). */
  dirs: string[];
  /** Single files, wherever they are (config files). */
  files: string[];
  /** The markers of an operation under way (files and directories, see OPERATION_FILES). */
  markers: string[];
}

/**
 * The user's and the system's git files, as git finds them from `env`: config, and the attributes and
 * excludes beside it under XDG_CONFIG_HOME.
 */
export function userGitFiles(env: Readonly<Record<string, string | undefined>>): string[] {
  const home = env.HOME === undefined || env.HOME === '' ? undefined : env.HOME;
  const xdg = env.XDG_CONFIG_HOME || (home === undefined ? undefined : join(home, '.config'));
  return [
    ...(home === undefined ? [] : [join(home, '.gitconfig')]),
    ...(xdg === undefined ? [] : ['config', 'attributes', 'ignore'].map((name) => join(xdg, 'git', name))),
    // `/dev/null` (or any device) is "no config", never a file to put back: restoring it as one removed
    // the machine's /dev/null (seen in a test run, after something wrote a config through it).
    ...[env.GIT_CONFIG_GLOBAL, env.GIT_CONFIG_SYSTEM].filter(
      (path): path is string => path !== undefined && path !== '' && !/^\/dev\/(?!shm\/)/.test(path),
    ),
    '/etc/gitconfig',
  ];
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
  const files = [
    join(commonDir, 'config'),
    join(commonDir, 'config.worktree'),
    join(gitDir, 'config.worktree'),
    ...userGitFiles(env),
    // The files git reads from info/ (what else is there, `git update-server-info`'s refs list written
    // by every repack, nothing reads but a dumb-HTTP client), in the repository's and the worktree's.
    ...[commonDir, gitDir].flatMap((dir) => INFO_FILES.map((name) => join(dir, 'info', name))),
    // Other object stores git reads objects from, their packs before this store's loose objects.
    join(commonDir, 'objects', 'info', 'alternates'),
    join(commonDir, 'objects', 'info', 'http-alternates'),
    // Where git finds the rest of the repository: `commondir` sends every git call (config, refs,
    // objects, hooks) to another directory, a copy an agent made with its own filters (red team), and a
    // worktree's `gitdir` names its checkout; `shallow` cuts history off at the commits it lists.
    join(gitDir, 'commondir'),
    ...(gitDir === commonDir ? [] : [join(gitDir, 'gitdir')]),
    join(commonDir, 'shallow'),
  ] as string[];
  // refs/replace/: `git replace` makes every git call read one object as another (Forge's own calls
  // ignore it, git-command.ts; the user's and the metric's would not).
  const dirs = [
    join(commonDir, 'hooks'),
    join(commonDir, 'refs', 'replace'),
    ...OPERATION_DIRS.map((name) => join(gitDir, ...name.split('/'))),
  ];
  const markers = [...OPERATION_FILES, ...OPERATION_DIRS].map((name) => join(gitDir, ...name.split('/')));
  // The markers' files are watched like the config, so a marker the user's own operation left is put
  // back when an agent rewrites or deletes it; one the agent made, of whatever kind, is found by
  // presentMarkers and removed whole.
  return {
    dirs: [...new Set(dirs)],
    files: [...new Set([...files, ...OPERATION_FILES.map((name) => join(gitDir, name))])],
    markers,
  };
}

/** What git reads from a git directory's info/: attributes, excludes, grafts, the sparse-checkout patterns. */
const INFO_FILES = ['attributes', 'exclude', 'grafts', 'sparse-checkout'];

/** The markers in `control` that exist now, as anything (a file, a directory, a dangling link). */
export async function presentMarkers(control: GitControlPaths): Promise<Set<string>> {
  const present = new Set<string>();
  for (const path of control.markers) if (await lstat(path).catch(() => undefined)) present.add(path);
  return present;
}

/**
 * What git leaves in a working tree's own git directory while an operation waits on a person (the
 * markers `git status` reads to say "you are in the middle of..."). One an agent leaves behind (seen:
 * a doer's `.git/MERGE_HEAD` made the scope guard and the abandon-time revert refuse to run, and the
 * loop stopped with the doer's edit uncommitted) is removed, one it changes is put back. A merge the
 * user had under way before the agent ran is theirs, and still stops the loop as before.
 */
export const OPERATION_FILES = [
  'MERGE_HEAD',
  'MERGE_MSG',
  'MERGE_MODE',
  'MERGE_RR',
  'AUTO_MERGE',
  'CHERRY_PICK_HEAD',
  'REVERT_HEAD',
  'REBASE_HEAD',
  'BISECT_LOG',
  'BISECT_START',
  'BISECT_TERMS',
  'BISECT_NAMES',
  'BISECT_EXPECTED_REV',
  'BISECT_ANCESTORS_OK',
  'BISECT_RUN',
  'BISECT_HEAD',
  'BISECT_FIRST_PARENT',
];
/** Per worktree too, in its own git directory (refs/bisect/ is a worktree's own refs). */
export const OPERATION_DIRS = ['rebase-merge', 'rebase-apply', 'sequencer', 'refs/bisect'];

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
