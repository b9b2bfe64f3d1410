// What an agent can leave in git's own store besides its commits, which the code it commits can read
// back while the judge measures it: a tag or a branch (`git show boost:answers.json`), a stash entry, a
// file of its own in `.git/`, a changed `.git/description`. None of it is in the kept commit, and a
// clean clone of that commit has none of it (red team: each kept a worse 5 as 1000). So what a run made
// there is taken back once it ends:
// - a ref it made is deleted (named, with its commit, in what the caller reports: nothing is lost),
//   and a tag or a note it moved or deleted is put back;
// - the stash is put back with its log, which is what `git stash list` reads;
// - a file it made in git's own folders that is not one of git's is removed, and `description` put back;
// - an object it wrote that no ref, HEAD or index reaches once that is done (`git hash-object -w`, what
//   a deleted ref held) is removed: `git cat-file --batch-all-objects` lists every object the store
//   holds, and a blob found that way is as much a note to the artifact as a ref. Not while another git
//   command is at work (an index.lock, a git process: an editor's fetch writes objects before the refs
//   that name them): those may be about to be used. One packed by the run (gc) stays;
// - the reflogs lose the entries naming those objects, and the text of the rest (reflogs.ts).
// The branch the run works on and what the runner kept meanwhile are the runner's; refs of the shapes
// Forge makes stay while another Forge run is at work. What the user does in another worktree of the
// repository meanwhile is theirs and stays: a branch checked out there, a stash made there. A branch
// that existed before and moved is left alone too: the user, or another run, may be working on it.
import { readdirSync, readlinkSync } from 'node:fs';
import { readdir, readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { OPERATION_DIRS, OPERATION_FILES } from './git-control.js';
import type { Git } from './git-port.js';
import { looseObjects } from './loose-objects.js';
import { processCommandLine, processParent } from './pid.js';
import { readReflogs, settleReflogs } from './reflogs.js';

/**
 * Refs Forge writes itself, by shape: kept copies, pins, attempts' bases, attempts' and candidates'
 * branches, loops' branches. One of these a run made is another Forge run's while one is at work (a
 * parallel run, another loop's worktree), so it stays then; anything else under refs/forge/ is no
 * ref Forge makes, and goes like any other.
 */
const FORGE_REFS =
  /^refs\/(?:forge\/(?:undone|saved|bases)\/|heads\/forge\/(?:attempts|candidates)\/|heads\/ralph-loop\/)/;
/** Refs that never move on their own: one that did was moved by the run. */
const FIXED_REFS = /^refs\/(?:tags|notes)\//;
const STASH = 'refs/stash';

/** What git itself keeps at the top of its folders (a linked worktree's too); anything else is not git's. */
const GIT_OWN = new Set([
  // The markers of an operation under way (git-control.ts), and the rest of git's own.
  ...OPERATION_FILES,
  ...OPERATION_DIRS,
  'HEAD',
  'ORIG_HEAD',
  'FETCH_HEAD',
  'COMMIT_EDITMSG',
  'TAG_EDITMSG',
  'SQUASH_MSG',
  'NOTES_MERGE_PARTIAL',
  'NOTES_MERGE_REF',
  'index',
  'index.lock',
  'packed-refs',
  'packed-refs.lock',
  'shallow',
  'config',
  'config.worktree',
  'description',
  'gitdir',
  'commondir',
  'locked',
  'gc.log',
  'gc.pid',
  'objects',
  'refs',
  'logs',
  'hooks',
  'info',
  'worktrees',
  'modules',
  'rr-cache',
  'lfs',
  'fsmonitor--daemon',
  'fsmonitor--daemon.ipc',
  'reftable',
  'branches',
  'remotes',
  'forge',
]);

export interface GitStateUndo {
  /** Refs the run made, deleted: name and the object it named. */
  removedRefs: { ref: string; object: string }[];
  /** Tags, notes and the stash it moved or deleted, put back. */
  restoredRefs: string[];
  /** Files in git's folders it made (removed) or changed (put back), absolute. */
  files: string[];
  /** Loose objects it wrote that nothing reaches, removed. */
  objects: string[];
  /** Reflogs settled (reflogs.ts): every run's own commits append to them, so this is no finding. */
  reflogs: string[];
}

export interface GitStateWatch {
  /**
   * Takes back what the run left, as the header says. `branch` is the one it works on; refs under
   * `own` (the prefix of what the runner kept since the run began) are the runner's.
   */
  undo(branch: string | undefined, own?: readonly string[]): Promise<GitStateUndo>;
}

/**
 * Whether another Forge runner is at work on this machine (a process whose command line names
 * ralph-loop, not this one nor one it runs under): then refs of Forge's shapes may be its. Where
 * /proc cannot be read, one is taken to be.
 */
export function otherRunnerLive(): boolean {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  const ours = new Set<number>();
  for (
    let pid: number | undefined = process.pid;
    pid !== undefined && pid > 1 && !ours.has(pid);
    pid = processParent(pid)
  )
    ours.add(pid);
  return pids.some(
    (name) => !ours.has(Number(name)) && /ralph-loop/.test(processCommandLine(Number(name)) ?? ''),
  );
}

/**
 * Whether a git process of someone else's is at work in this repository (in one of its worktrees, or
 * its git folder: an editor's background fetch, the user's commit in another worktree): it may have
 * written objects it has not yet named in a ref, which are no stray. The doer's own are gone by now
 * (its processes end with it). Where /proc cannot be read, one is taken to be.
 */
export function otherGitAtWork(places: readonly string[]): boolean {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  return pids.some((name) => {
    const pid = Number(name);
    if (pid === process.pid) return false;
    const program = (processCommandLine(pid) ?? '').split(' ')[0] ?? '';
    if (!/(?:^|\/)git(?:-[a-z-]+)?$/.test(program)) return false;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      return true; // not ours to read: it may be at work here
    }
    return places.some((place) => cwd === place || cwd.startsWith(`${place}/`));
  });
}

async function namesIn(dir: string): Promise<Set<string>> {
  return new Set(await readdir(dir).catch(() => []));
}

async function bytesOf(path: string): Promise<Buffer | undefined> {
  return readFile(path).catch(() => undefined);
}

/** Records git's state for `git` before a run; undefined when this Git cannot list refs (a test's). */
export async function watchGitState(git: Git): Promise<GitStateWatch | undefined> {
  if (git.refTips === undefined || git.setRefs === undefined) return undefined;
  const refTips = git.refTips.bind(git);
  const setRefs = git.setRefs.bind(git);
  const [gitDir, commonDir] = await Promise.all([git.gitDir(), git.commonDir()]);
  const folders = [...new Set([gitDir, commonDir])];
  const before = {
    refs: await refTips(),
    reflogs: await readReflogs(folders),
    names: await Promise.all(folders.map(namesIn)),
    description: await bytesOf(join(commonDir, 'description')),
    objects: looseObjects(commonDir),
  };
  return {
    async undo(branch, ownPrefixes = []) {
      const undo: GitStateUndo = { removedRefs: [], restoredRefs: [], files: [], objects: [], reflogs: [] };
      const own = (ref: string) =>
        (branch !== undefined && ref === `refs/heads/${branch}`) ||
        ownPrefixes.some((prefix) => ref.startsWith(`${prefix}/`));
      const now = await refTips();
      const changes = new Map<string, string | undefined>();
      let others: boolean | undefined;
      const anotherRun = (ref: string) => FORGE_REFS.test(ref) && (others ??= otherRunnerLive());
      // What the user does in another worktree meanwhile is theirs: a branch checked out there, a stash
      // made there (its commit's parent is where that worktree stands).
      const elsewhere = await otherWorktrees(git);
      const stashNow = now.get(STASH);
      const usersStash =
        stashNow !== undefined &&
        stashNow !== before.refs.get(STASH) &&
        elsewhere.heads.has((await git.resolveCommit(`${stashNow}^1`)) ?? '');
      const users = (ref: string) => elsewhere.branches.has(ref) || (ref === STASH && usersStash);
      for (const [ref, object] of now) {
        if (own(ref) || before.refs.has(ref) || anotherRun(ref) || users(ref)) continue;
        changes.set(ref, undefined);
        undo.removedRefs.push({ ref, object });
      }
      for (const [ref, object] of before.refs) {
        if (own(ref) || users(ref) || !(FIXED_REFS.test(ref) || ref === STASH) || now.get(ref) === object)
          continue;
        changes.set(ref, object);
        undo.restoredRefs.push(ref);
      }
      await setRefs(changes);
      for (const [index, folder] of folders.entries()) {
        for (const name of await namesIn(folder)) {
          if (GIT_OWN.has(name) || before.names[index]?.has(name)) continue;
          await rm(join(folder, name), { recursive: true, force: true });
          undo.files.push(join(folder, name));
        }
      }
      const description = join(commonDir, 'description');
      const descriptionNow = await bytesOf(description);
      if (before.description !== undefined && !before.description.equals(descriptionNow ?? Buffer.alloc(0))) {
        await writeFileAtomic(description, before.description);
        undo.files.push(description);
      }
      const stray = await strayObjects(git, commonDir, before.objects, [...new Set(before.refs.values())]);
      // The stash's entries are its log: one the run left goes with its objects, and the log is as it was.
      const refsNow = await refTips();
      undo.reflogs = await settleReflogs(
        folders,
        before.reflogs,
        new Set(stray),
        (ref) => refsNow.has(ref),
        users,
      );
      for (const name of stray)
        await rm(join(commonDir, 'objects', name.slice(0, 2), name.slice(2)), { force: true });
      undo.objects = stray;
      undo.removedRefs.sort((a, b) => a.ref.localeCompare(b.ref));
      undo.restoredRefs.sort();
      undo.files.sort();
      return undo;
    },
  };
}

/** The branches checked out in the repository's other worktrees, and the commits they stand at. */
async function otherWorktrees(git: Git): Promise<{ branches: Set<string>; heads: Set<string> }> {
  const top = await realpath(await git.topLevel()).catch(() => undefined);
  const branches = new Set<string>();
  const heads = new Set<string>();
  for (const entry of await git.worktreeList().catch(() => [])) {
    if ((await realpath(entry.path).catch(() => entry.path)) === top) continue;
    if (entry.branch !== null) branches.add(entry.branch);
    if (entry.head !== null) heads.add(entry.head);
  }
  return { branches, heads };
}

/** The loose objects written since `before` that no ref, HEAD or index reaches (none while git is at work). */
async function strayObjects(
  git: Git,
  commonDir: string,
  before: ReadonlyMap<string, string>,
  tips: readonly string[],
): Promise<string[]> {
  const fresh = [...looseObjects(commonDir).keys()].filter((name) => !before.has(name));
  if (fresh.length === 0 || git.reachableSince === undefined) return [];
  const worktrees = [...(await namesIn(join(commonDir, 'worktrees')))].map((name) =>
    join(commonDir, 'worktrees', name),
  );
  const locked = await Promise.all([commonDir, ...worktrees].map((dir) => bytesOf(join(dir, 'index.lock'))));
  if (locked.some((lock) => lock !== undefined)) return [];
  const trees = (await git.worktreeList().catch(() => [])).map((entry) => entry.path);
  const places = await Promise.all([commonDir, ...trees].map((path) => realpath(path).catch(() => path)));
  if (otherGitAtWork(places)) return [];
  // A store missing what a ref names cannot say what is reached: nothing is removed then.
  const reachable = await git.reachableSince(tips).catch(() => undefined);
  if (reachable === undefined) return [];
  return fresh.filter((name) => !reachable.has(name)).sort();
}
