// What a git call of Forge's does when git waits on a FIFO (a named pipe) where it reads a file: the FIFO
// is taken away and the call made again (git-command.ts), so that one line of an agent's shell
// (`mkfifo .git/index`) cannot hold every later git call of the runner, or end its run. Git makes no
// FIFO in a tree it tracks nor in its own folders, so what takes the FIFO's place is what git would find
// there had the FIFO never been made, as near as Forge knows it:
// - in the tree, a `.gitignore` or another of git's settings files: nothing (git tracks no FIFO);
// - a small file git reads on every call (HEAD, its branch, the config, packed refs, excludes, the
//   user's config): the file as this process last read it, or nothing where it last found none
//   (noteReads);
// - the index: the index of HEAD, rebuilt;
// - anything else in the repository's own folders (a loose ref, a log, `info/attributes`): nothing.
// Where none of these applies (HEAD or the config of a repository this process never read, a user's
// config it never read) the call stops and names the FIFO (fifoError).
import { lstat, readdir, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { readSmallRegularFileSync, writeFileAtomic } from './atomic-file.js';
import { fifoRemoved, type FifoWait } from './fifo-wait.js';

/** Where a repository's own folders are (git-command.ts asks git once). */
export interface GitFolders {
  /** This working tree's git directory (`.git`, or `.git/worktrees/<name>` in a linked worktree). */
  gitDir: string;
  /** The directory every worktree of the repository shares (`.git`). */
  commonDir: string;
}

/** Makes the index of HEAD at `indexFile` for the git folder `gitDir`; false when git could not. */
export type IndexBuilder = (gitDir: string, indexFile: string) => Promise<boolean>;

/** How many FIFOs one call takes away before it gives up and says so. */
export const MAX_FIFOS_REMOVED = 8;

/**
 * Takes away the FIFO git waited on, by the rules above; true when it did (the call is then made again),
 * false when the call is to stop. `folders` is the repository's, once known; `buildIndex` makes an index.
 */
export async function takeAwayFifo(
  wait: FifoWait,
  folders: GitFolders | undefined,
  buildIndex: IndexBuilder,
): Promise<boolean> {
  return (
    (await removeTreeFifo(wait)) ||
    (await restoreRead(wait)) ||
    (folders !== undefined && (await clearGitFolderFifo(wait, folders, buildIndex)))
  );
}

/** Whether a FIFO is at `path` now (not a link to one: lstat). */
async function isFifo(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info?.isFIFO() === true;
}

/** The files of the tree git reads as its own settings, by name, in any folder. */
const GIT_READ_NAMES = new Set(['.gitignore', '.gitattributes', '.gitmodules', '.mailmap']);

/**
 * Removes the FIFO git waited on when it is one of the tree's settings files (GIT_READ_NAMES, not under
 * a `.git` folder) and still a FIFO; true when it did.
 */
async function removeTreeFifo(wait: FifoWait): Promise<boolean> {
  const path = wait.path;
  if (path === undefined || !GIT_READ_NAMES.has(basename(path))) return false;
  if (path.split(sep).includes('.git')) return false;
  if (!(await isFifo(path))) return false;
  await rm(path, { force: true });
  fifoRemoved(path);
  return true;
}

/**
 * Files of a git folder without which git reads the repository wrong (not a repository, another object
 * format, branches gone): one goes back only as last read (restoreRead), else the call stops.
 */
const GIT_ESSENTIAL = new Set(['HEAD', 'config', 'commondir', 'gitdir', 'packed-refs']);

/**
 * A FIFO in the repository's own folders (its git dir and common dir, a linked worktree's folder and a
 * submodule's within them): the index of a git folder rebuilt from its HEAD, anything but an essential
 * file (GIT_ESSENTIAL) removed. What the FIFO took the place of was gone before Forge came to it; git
 * now finds what it would without that file (a ref packed or absent, a log begun again).
 */
async function clearGitFolderFifo(
  wait: FifoWait,
  folders: GitFolders,
  buildIndex: IndexBuilder,
): Promise<boolean> {
  if (wait.path === undefined) return false;
  // The path as the kernel saw it may name a folder through a link: both sides are compared real.
  const roots = [
    ...new Set(
      await Promise.all([folders.gitDir, folders.commonDir].map((root) => realpath(root).catch(() => root))),
    ),
  ];
  if (!(await clearFolderFifo(wait.path, roots, buildIndex))) return false;
  // The others there are taken away now, not one a git call, each after a second's wait for it.
  for (const root of roots) {
    if (roots.some((other) => root.startsWith(`${other}${sep}`))) continue;
    for (const fifo of await fifosUnder(root)) {
      if (!(await restoreAt(fifo))) await clearFolderFifo(fifo, roots, buildIndex);
    }
  }
  return true;
}

/** Every FIFO under `dir`, no link followed. */
async function fifosUnder(dir: string, found: string[] = []): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isFIFO()) found.push(path);
    else if (entry.isDirectory()) await fifosUnder(path, found);
  }
  return found;
}

/** Takes away the FIFO at `fifo` when it is in one of `roots` (real paths), by the rules above. */
async function clearFolderFifo(fifo: string, roots: string[], buildIndex: IndexBuilder): Promise<boolean> {
  if (!(await isFifo(fifo))) return false;
  const dir = await realpath(dirname(fifo)).catch(() => undefined);
  if (dir === undefined) return false;
  if (!roots.some((root) => dir === root || dir.startsWith(`${root}${sep}`))) return false;
  const name = basename(fifo);
  const path = join(dir, name);
  // The index and the essential files are those of a git folder, not a ref or a log of the same name.
  if (roots.includes(dir) || (await isGitFolder(dir))) {
    if (name === 'index') return rebuildIndex(dir, path, buildIndex);
    if (GIT_ESSENTIAL.has(name)) return false;
  }
  await rm(path, { force: true });
  fifoRemoved(path, 'removed from git');
  return true;
}

/** A linked worktree's folder (it names the common dir) or a submodule's (it has objects of its own). */
async function isGitFolder(dir: string): Promise<boolean> {
  const found = await Promise.all(
    ['commondir', 'objects'].map((name) =>
      lstat(join(dir, name)).then(
        () => true,
        () => false,
      ),
    ),
  );
  return found.includes(true);
}

/**
 * The index of `gitDir` made again from its HEAD, in a file beside it renamed over the FIFO: the working
 * tree's files are as they were, and git's next look refreshes their stat data. What was staged and not
 * committed is no longer staged. False when git cannot read HEAD's tree (an unborn branch, a broken
 * repository): the call stops and names the FIFO.
 */
async function rebuildIndex(gitDir: string, path: string, buildIndex: IndexBuilder): Promise<boolean> {
  const temp = join(gitDir, `index.forge-rebuilt-${process.pid}`);
  try {
    if (!(await buildIndex(gitDir, temp))) return false;
    if (!(await isFifo(path))) return false;
    await rename(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
  fifoRemoved(path, 'rebuilt');
  return true;
}

/** The most of a file git reads on every call that is kept to put back over a FIFO (restoreRead). */
const READ_KEPT_MAX_BYTES = 64 * 1024;
/**
 * How many files' last looks are kept: about ten a working tree, and the user's config (a runner works
 * in a few trees, a test process in thousands).
 */
const LAST_READ_KEPT = 640;
/**
 * What each file git reads on every call held at this process's newest look at it, by any Git
 * (noteReads): its bytes, or null where nothing was.
 */
const lastRead = new Map<string, Buffer | null>();
/** Each HEAD's path → the loose file of the branch it named at the last look. */
const namedBranch = new Map<string, string>();

/**
 * Looks at `path` again: what it holds now (or that nothing is there) replaces the last look; anything
 * but a small file drops it.
 */
function look(path: string): Buffer | null | undefined {
  const bytes = readSmallRegularFileSync(path, READ_KEPT_MAX_BYTES);
  lastRead.delete(path);
  if (bytes !== undefined) lastRead.set(path, bytes);
  return bytes;
}

/** The branch a HEAD's bytes name (`ref: refs/heads/…`), or undefined when it names none. */
function branchOf(head: Buffer): string | undefined {
  return /^ref: (refs\/heads\/\S+)\n?$/.exec(head.toString('latin1'))?.[1];
}

/**
 * What the small files git reads on every call held when a call last ended (restoreRead), read again
 * after each (~17 µs a file): this working tree's HEAD, which git opens first to know it is in a
 * repository, the branch's loose file it names, the repository's config, packed refs, excludes and
 * alternates, a linked worktree's way to the repository (`commondir`, `gitdir`), and the user's and the
 * system's config (`userFiles`, git-control.ts: agents share the user's HOME). A FIFO put in place
 * of one (an agent's `mkfifo .git/HEAD`) held every later git call, the runner's included, and the run
 * could only stop. The FIFO is replaced by the file as it was; whatever the agent did to the file before
 * is then seen and judged as any such change is (the config's by the git-control watch). Kept per file
 * for the whole process, not per Git: the newest look by any Git (another may have moved the branch
 * since this one looked), and a file found gone is forgotten.
 */
export function noteReads({ gitDir, commonDir }: GitFolders, userFiles: readonly string[]): void {
  const headPath = join(gitDir, 'HEAD');
  const head = look(headPath);
  const branch = head instanceof Buffer ? branchOf(head) : undefined;
  // A branch's loose file (a packed one is in packed-refs), kept only while a HEAD names it: one left
  // behind by a switch may move since, unseen, and putting it back would move it back.
  const branchPath = branch === undefined ? undefined : join(commonDir, ...branch.split('/'));
  const named = namedBranch.get(headPath);
  if (named !== undefined && named !== branchPath) lastRead.delete(named);
  namedBranch.delete(headPath);
  if (branchPath !== undefined) {
    namedBranch.set(headPath, branchPath);
    look(branchPath);
  }
  const shared = ['config', 'packed-refs', join('info', 'exclude'), join('objects', 'info', 'alternates')];
  for (const name of shared) look(join(commonDir, name));
  if (gitDir !== commonDir) for (const name of ['commondir', 'gitdir']) look(join(gitDir, name));
  for (const path of userFiles) look(path);
  for (const [map, kept] of [
    [lastRead, LAST_READ_KEPT],
    [namedBranch, LAST_READ_KEPT / 5],
  ] as const) {
    for (const oldest of map.keys()) {
      if (map.size <= kept) break;
      map.delete(oldest);
    }
  }
}

/** Puts back over the FIFO git waited on the file it replaced, when a look of this process saw it last. */
async function restoreRead(wait: FifoWait): Promise<boolean> {
  return wait.path !== undefined && restoreAt(wait.path);
}

/**
 * Puts back over the FIFO at `path` what a look of this process saw there last, if one did: the file, or
 * nothing (packed refs a repository has none of yet, a user with no `~/.gitconfig`).
 */
async function restoreAt(path: string): Promise<boolean> {
  const bytes = lastRead.get(path);
  if (bytes === undefined || !(await isFifo(path))) return false;
  if (bytes === null) {
    await rm(path, { force: true });
    fifoRemoved(path, 'none before');
    return true;
  }
  // A rename over it: the FIFO goes and the file is back in one step.
  await writeFileAtomic(path, bytes);
  fifoRemoved(path, 'put back');
  return true;
}
