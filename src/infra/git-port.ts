// The Git port: what Forge asks of a repository (paths relative to the top of its working tree).
import type { ChangedPath, HeadState, StatusEntry, TreeEntry, WorktreeEntry } from './git-parse.js';

export interface GitOptions {
  /** The working tree every command runs in. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The git executable (default `git`, found on env.PATH). */
  gitBinary?: string;
}

/** Content of a working-tree file saved in the object database (null: the file did not exist). */
export interface SavedFile {
  blob: string | null;
  mode: '100644' | '100755';
}

/** The index flags that hide a tracked file's content from status and diff. */
export interface IndexFlags {
  skipWorktree: boolean;
  assumeUnchanged: boolean;
}

/** Paths given to and returned by a Git are relative to the top of its working tree. */
export interface Git {
  /** The directory it was created for (any directory inside the working tree). */
  readonly cwd: string;
  headSha(): Promise<string>;
  /** The commit a revision names, or undefined when it names none. */
  resolveCommit(rev: string): Promise<string | undefined>;
  statusPorcelain(): Promise<StatusEntry[]>;
  /** The status and where HEAD is, from one git call (`headState`'s error when HEAD has no commit). */
  statusWithHead(): Promise<{ head: HeadState; entries: StatusEntry[] }>;
  /** Everything that differs from `base`: committed since, staged, unstaged, and untracked (not ignored). */
  changedSince(base: string): Promise<ChangedPath[]>;
  /**
   * What git ignores in the working tree and does not track: a directory ignored whole is one entry,
   * ending in `/` (`node_modules/`). Optional: a Git without it has nothing ignored to show.
   */
  ignoredPaths?(): Promise<string[]>;
  /**
   * Untracked, not ignored entries under `paths` (a wholly untracked folder as one entry ending in `/`,
   * an empty one too), as the bytes git gives, which need not be UTF-8. Optional, like ignoredPaths.
   */
  untrackedBytes?(paths: readonly string[]): Promise<Buffer[]>;
  /**
   * Tracked paths whose index entry tells git to pass over their content (`update-index
   * --skip-worktree`, `--assume-unchanged`): status and diff show no change there. Optional, like
   * ignoredPaths.
   */
  indexFlags?(): Promise<Map<string, IndexFlags>>;
  /**
   * Tracked paths whose index entry vouches for content the file no longer holds: stat data that
   * matches the file on disk beside the blob of other content. Git trusts matching stat data without
   * reading the file, so status and diff show no change there; an agent can write the index itself
   * to get that. Each such entry loses its stat data (blob and flags stay), so every later git call
   * hashes the file and sees the change. Costs a hash of every tracked file. Optional, like indexFlags.
   */
  exposeForgedEntries?(): Promise<string[]>;
  /** Sets each path's index flags as given. */
  setIndexFlags?(flags: ReadonlyMap<string, IndexFlags>): Promise<void>;
  /** Which of `paths` exist as files in `commit`. */
  pathsInCommit(commit: string, paths: readonly string[]): Promise<Set<string>>;
  /** Sets index and working tree of `paths` to their content in `commit` (they must exist there). */
  checkoutPathsFrom(commit: string, paths: readonly string[]): Promise<void>;
  /** Removes `paths` from the index and the working tree, and directories left empty by that. */
  removePaths(paths: readonly string[]): Promise<void>;
  /**
   * Stages and commits exactly `paths` (other staged work is left staged) and moves HEAD to the commit,
   * which it returns; undefined when nothing changed.
   */
  commitPaths(paths: readonly string[], message: string): Promise<string | undefined>;
  isMergeOrRebaseInProgress(): Promise<boolean>;
  /** Saves the current content of `paths` as blobs, so it can be written back after a restore. */
  saveFiles(paths: readonly string[]): Promise<Map<string, SavedFile>>;
  /** Writes saved content back to the working tree (or deletes the file when it had none); index untouched. */
  writeSavedFiles(files: ReadonlyMap<string, SavedFile>): Promise<void>;
  /** Every entry under `paths` in `commit`, recursively (an empty path, or none: the whole tree). */
  listTree(commit: string, paths: readonly string[]): Promise<TreeEntry[]>;
  /**
   * Writes regular-file entries (modes 100644/100755) from the object database under `dir`, an absolute
   * directory anywhere, at their paths; refuses symlinks and submodules. The index is untouched.
   */
  exportFiles(entries: readonly TreeEntry[], dir: string): Promise<void>;
  /**
   * The text of each regular file of `paths` in `commit` (a path it does not hold is left out), each
   * object hashed first: what it held, not what a rewritten object file says.
   */
  readTexts(commit: string, paths: readonly string[]): Promise<Map<string, string>>;
  /** Detaches HEAD at `commit`, leaving index, working tree and every branch as they are. */
  detachHead(commit: string): Promise<void>;
  /** The index written as a tree object; fails while it holds unmerged entries. */
  writeIndexTree(): Promise<string>;
  /** Replaces the index with the content of `tree`; the working tree is untouched. */
  readIndexTree(tree: string): Promise<void>;
  worktreeAdd(path: string, options?: { branch?: string; base?: string }): Promise<void>;
  worktreeList(): Promise<WorktreeEntry[]>;
  /** Removes a linked worktree (its changes too) and prunes stale entries; nothing when it is gone. */
  worktreeRemove(path: string): Promise<void>;
  /** Deletes a local branch; nothing when there is none. */
  deleteBranch(name: string): Promise<void>;
  // ---- where HEAD points (the loop's branch and history checks) ----
  /** The commit HEAD is at and the branch it is on (undefined: detached), from one git call. */
  headState(): Promise<HeadState>;
  /** True when `ancestor` is `descendant` or one of its ancestors. */
  isAncestor(ancestor: string, descendant: string): Promise<boolean>;
  /** Paths whose content differs between two commits. */
  diffCommits(from: string, to: string): Promise<string[]>;
  /** Points the current branch at `commit`, leaving index and working tree as they are. */
  resetSoft(commit: string): Promise<void>;
  /**
   * Points each ref (under refs/forge/) at its object, in one transaction, so that git's gc keeps
   * them: what Forge undid, kept where a user can get it back. Optional: a Git without it keeps nothing.
   */
  keepRefs?(refs: ReadonlyMap<string, string>): Promise<void>;
  /**
   * Points `ref` (under refs/forge/) at one tree holding `blobs` and `trees`, so that git's gc keeps
   * objects nothing else reaches (a snapshot of a user's uncommitted files). Fails when one is missing.
   */
  pinObjects?(ref: string, objects: { blobs: readonly string[]; trees: readonly string[] }): Promise<void>;
  /** Deletes the refs (under refs/forge/); one already gone is no error. */
  dropRefs?(refs: readonly string[]): Promise<void>;
  /** The refs under `prefix` (a refs/forge/ folder: whole components, as for-each-ref matches), full names. */
  listRefs?(prefix: string): Promise<string[]>;
  /** Every ref of the repository (full name → the object it names), Forge's own too. */
  refTips?(): Promise<Map<string, string>>;
  /** Sets each ref to its object, or deletes it where the object is undefined, in one transaction. */
  setRefs?(refs: ReadonlyMap<string, string | undefined>): Promise<void>;
  /**
   * The objects every ref, HEAD and index of the repository reaches (not its reflogs), walking no
   * further than the objects `known` (tips taken earlier) reach: what is new since, and still used.
   */
  reachableSince?(known: readonly string[]): Promise<Set<string>>;
  /**
   * Puts HEAD back on `branch` without touching index or working tree (`git symbolic-ref`). A branch
   * that is gone (an agent renamed or deleted it) is made again at `orAt` first, where one is given:
   * HEAD on a branch that does not exist has no commit, and every later call fails.
   */
  attachHead(branch: string, orAt?: string): Promise<void>;
  /**
   * Throws ForgedObjectError unless each object (name → what it is, for the message) is stored as its
   * name says: its type, size and bytes hash to that name.
   */
  checkObjects(objects: ReadonlyMap<string, string>): Promise<void>;
  /**
   * Of the pack indexes (absolute `.idx` paths), those whose pack does not hold what they name, every
   * object of it hashed (`git verify-pack`); one gone meanwhile is not named.
   */
  forgedPacks?(indexes: readonly string[]): Promise<string[]>;
  /** Absolute path of the repository's common git directory (shared by all its worktrees). */
  commonDir(): Promise<string>;
  /** Absolute path of this working tree's own git directory (per worktree). */
  gitDir(): Promise<string>;
  /** Absolute path of the top of this working tree. */
  topLevel(): Promise<string>;
  /** Subjects of the commits in `from..to`, newest first. */
  subjectsBetween(from: string, to: string): Promise<string[]>;
}
