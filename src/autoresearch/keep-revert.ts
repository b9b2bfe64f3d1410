// The arbiter's git step (keep or revert an iteration) and the doer guard, by content rather than by commits.
//
// A revert brings the files in scope back to their content at the iteration's base commit and records
// that as one new commit. It does not care how the doer got there (no commit, one, several, a reset,
// uncommitted edits, new or deleted files), never rewrites history, and leaves every path outside the
// scope, and any staged work on them, exactly as it was.
import type { ChangedPath, Git, SavedFile, StatusEntry } from '../infra/git.js';
import { GitError } from '../infra/git.js';
import { ForgedObjectError } from '../infra/git-command.js';
import { isMark } from '../infra/file-marks.js';
import { keeper, keptFiles } from './kept-refs.js';
import type { DecideResult } from './arbiter.js';
import { normalizeRelativePath, WORKSPACE_DIR } from './config-values.js';
import type { LedgerLine } from './ledger.js';

/** True when `path` (repository-relative, as git prints it) is one of `scopePaths` or inside one. */
export function isPathInScope(path: string, scopePaths: readonly string[]): boolean {
  const target = normalizeRelativePath(path);
  return scopePaths.some((scope) => {
    const root = normalizeRelativePath(scope);
    return root === '' || target === root || target.startsWith(`${root}/`);
  });
}

export interface RestoreResult {
  /** Paths brought back to their base content, sorted. */
  paths: string[];
  /** The new commit, or undefined when nothing committed had to change. */
  commitSha: string | undefined;
  headSha: string;
}

export interface RevertIterationOptions {
  git: Git;
  baseSha: string;
  scopePaths: readonly string[];
  message: string;
  /** Never touched even inside the scope (default: the loop's own `.autoresearch/`). */
  ignoredPaths?: readonly string[];
}

/**
 * Brings the files in scope back to `baseSha` with one new commit; a no-op when nothing in scope
 * changed. "Changed" covers both the tree and HEAD: after an interrupted revert the tree may already
 * hold the base content while HEAD still holds the rejected commit, and the commit must still be made.
 */
export async function revertIteration(options: RevertIterationOptions): Promise<RestoreResult> {
  const { git, baseSha } = options;
  await assertCleanState(git, baseSha);
  await distrustIndex(git);
  const ignored = options.ignoredPaths ?? [WORKSPACE_DIR];
  const changed = (await changedInTreeOrHead(git, baseSha)).filter(
    (path) => isPathInScope(path, options.scopePaths) && !isPathInScope(path, ignored),
  );
  return restoreToBase(git, baseSha, changed, options.message);
}

/**
 * Paths that differ from `base` in the working tree or in HEAD's commit; `inTree`: the tree's changes
 * when the caller has just asked git for them (nothing written since).
 */
export async function changedInTreeOrHead(
  git: Git,
  base: string,
  inTree?: readonly ChangedPath[],
): Promise<string[]> {
  const tree = (inTree ?? (await git.changedSince(base))).map((c) => c.path);
  const inHead = await git.diffCommits(base, 'HEAD');
  return [...new Set([...tree, ...inHead])].sort();
}

export interface KeepIterationOptions {
  git: Git;
  scopePaths: readonly string[];
  message: string;
  ignoredPaths?: readonly string[];
}

export interface KeepResult {
  headSha: string;
  commitSha: string | undefined;
  /** Uncommitted in-scope paths that this commit picked up. */
  paths: string[];
}

/** Commits whatever in-scope change is still uncommitted and returns HEAD, the kept state. */
export async function keepIteration(options: KeepIterationOptions): Promise<KeepResult> {
  const { git } = options;
  await distrustIndex(git);
  const ignored = options.ignoredPaths ?? [WORKSPACE_DIR];
  const paths = new Set<string>();
  for (const entry of await git.statusPorcelain()) {
    for (const path of [entry.path, entry.origPath]) {
      if (path !== undefined && isPathInScope(path, options.scopePaths) && !isPathInScope(path, ignored)) {
        paths.add(path);
      }
    }
  }
  const sorted = [...paths].sort();
  const commitSha = await git.commitPaths(sorted, options.message);
  // A commit just made is HEAD (commitPaths moved it there from the HEAD it read): no need to ask again.
  return { headSha: commitSha ?? (await git.headSha()), commitSha, paths: sorted };
}

/** The uncommitted files before the doer ran, saved, so the guard can tell the user's work from the doer's. */
export interface WorkingTreeSnapshot {
  headSha: string;
  files: ReadonlyMap<string, SavedFile>;
}

/** A snapshot as taken, with the branch HEAD was on (undefined: detached). */
export interface TakenSnapshot extends WorkingTreeSnapshot {
  branch: string | undefined;
}

/**
 * Take it right before the doer runs. Costs one `git status` (which says where HEAD is too) and one
 * `git hash-object` over dirty files.
 */
export async function snapshotWorkingTree(git: Git): Promise<TakenSnapshot> {
  const { head, entries } = await git.statusWithHead();
  return { headSha: head.sha, branch: head.branch, files: await saveDirty(git, entries) };
}

/** The files of these status entries (a rename's both sides), saved: one `git hash-object`. */
export function saveDirty(
  git: Git,
  entries: readonly StatusEntry[],
): Promise<ReadonlyMap<string, SavedFile>> {
  const dirty = new Set<string>();
  for (const entry of entries) {
    dirty.add(entry.path);
    if (entry.origPath !== undefined) dirty.add(entry.origPath);
  }
  return git.saveFiles([...dirty].sort());
}

export interface GuardOptions {
  git: Git;
  baseSha: string;
  /** The doer's scope. */
  allowedPaths: readonly string[];
  /** Never the doer's to change, even inside its scope: the metric command's files, the rubric. */
  protectedPaths: readonly string[];
  message: string;
  /**
   * The working tree before the doer ran. With it, a user's uncommitted file outside the scope that
   * the doer did not touch is left alone, and one the doer did touch gets the user's content back.
   * Without it, every out-of-scope difference from `baseSha` counts as the doer's.
   */
  snapshot?: WorkingTreeSnapshot;
  ignoredPaths?: readonly string[];
}

export interface GuardResult extends RestoreResult {
  /** Violations found, with how each path had changed relative to the base. */
  violations: ChangedPath[];
  /**
   * The tree's changes from the base (`changedSince`) when the guard wrote nothing, so they still hold;
   * undefined when it put something back, and the tree must be asked again.
   */
  treeChanges: ChangedPath[] | undefined;
  /** Where what the guard overwrote is kept (`refs/forge/undone/<stamp>/files/…`), when anything was. */
  keptUnder?: string;
  /**
   * A user's files the guard could not put back, their saved content gone from git's store (its pin
   * deleted and the objects pruned): left as they were found.
   */
  unrestored: string[];
}

/** Finds the doer's changes outside its scope or to protected files and undoes them (one commit if needed). */
export async function guardDoerChanges(options: GuardOptions): Promise<GuardResult> {
  const { git, baseSha, snapshot } = options;
  await assertCleanState(git, baseSha);
  await distrustIndex(git);
  const ignored = options.ignoredPaths ?? [WORKSPACE_DIR];
  const watched = (path: string) =>
    !isPathInScope(path, ignored) &&
    (!isPathInScope(path, options.allowedPaths) || isPathInScope(path, options.protectedPaths));
  // A change the doer committed and then undid only in the tree still sits in HEAD: look at both.
  const treeChanges = await git.changedSince(baseSha);
  const inTree = new Map(treeChanges.map((c) => [c.path, c.change] as const));
  const candidates: ChangedPath[] = (await changedInTreeOrHead(git, baseSha, treeChanges))
    .filter(watched)
    .map((path) => ({ path, change: inTree.get(path) ?? 'modified' }));

  let violations = candidates;
  const userFiles = new Map<string, SavedFile>();
  if (snapshot !== undefined) {
    // The user's files as they were before the doer ran, including ones the doer put back to the base
    // content or deleted (those no longer differ from the base, so changedSince does not list them).
    const listed = new Set(candidates.map((c) => c.path));
    const userPaths = [...snapshot.files.keys()].filter(watched);
    const now = await git.saveFiles(userPaths);
    violations = candidates.filter(({ path }) => !snapshot.files.has(path));
    for (const path of userPaths) {
      const before = snapshot.files.get(path);
      const after = now.get(path);
      if (before === undefined || after?.blob === before.blob) continue; // untouched: not a violation
      userFiles.set(path, before);
      if (listed.has(path))
        violations.push({ path, change: candidates.find((c) => c.path === path)?.change ?? 'modified' });
      else violations.push({ path, change: after?.blob === null ? 'deleted' : 'modified' });
    }
    violations.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  // What the put-back overwrites is kept first: a change outside the scope may be the user's own, made
  // while the doer ran (fault injection), and it is not the runner's to lose.
  const keep = keeper(git);
  if (violations.length > 0) await keep(keptFiles(await git.saveFiles(violations.map((v) => v.path))));
  const unrestored = await missingSaved(git, userFiles);
  for (const path of unrestored) userFiles.delete(path);
  const restored = await restoreToBase(
    git,
    baseSha,
    violations.map((v) => v.path).filter((path) => !unrestored.includes(path)),
    options.message,
  );
  await git.writeSavedFiles(userFiles);
  const wroteNothing = violations.length === 0 && userFiles.size === 0;
  const keptUnder = keep.prefix();
  return {
    ...restored,
    violations,
    treeChanges: wroteNothing ? treeChanges : undefined,
    ...(keptUnder === undefined ? {} : { keptUnder }),
    unrestored,
  };
}

/**
 * The saved files whose blob git no longer has (sorted). A blob stored as something else is no lost
 * copy but a forged one: ForgedObjectError, as for any file written from the store.
 */
async function missingSaved(git: Git, files: ReadonlyMap<string, SavedFile>): Promise<string[]> {
  const blobs = new Map<string, string>();
  // A file saved as a mark (too large to copy, file-marks.ts) has no copy to go back to either.
  const marks = [...files].filter(([, file]) => isMark(file.blob)).map(([path]) => path);
  for (const [path, file] of files) if (file.blob !== null && !isMark(file.blob)) blobs.set(file.blob, path);
  try {
    await git.checkObjects(blobs);
    return marks.sort();
  } catch (error) {
    if (!(error instanceof ForgedObjectError) || error.objects.some((o) => o.found !== 'is missing'))
      throw error;
    const gone = new Set(error.objects.map((o) => o.object));
    return [...files]
      .filter(([, file]) => isMark(file.blob) || (file.blob !== null && gone.has(file.blob)))
      .map(([path]) => path)
      .sort();
  }
}

export interface ApplyDecisionOptions {
  git: Git;
  result: DecideResult;
  scopePaths: readonly string[];
}

/**
 * Runs the git step for a decision and returns the ledger line with its `sha`: keep commits leftovers
 * and records HEAD; revert and crash restore the scope to `base_sha`; a baseline or a replay touches
 * nothing. Safe to repeat after a crash: a second revert finds nothing to change.
 */
export async function applyDecision(options: ApplyDecisionOptions): Promise<LedgerLine> {
  const { git, result } = options;
  const line = result.line;
  if (result.replayed) return line;
  switch (line.decision) {
    case 'baseline':
      return { ...line, sha: line.sha ?? (await git.headSha()) };
    case 'keep': {
      const kept = await keepIteration({
        git,
        scopePaths: options.scopePaths,
        message: arbiterCommitMessage(line),
      });
      return { ...line, sha: kept.headSha };
    }
    case 'revert':
    case 'crash':
    case 'tamper':
    case 'guard_failed': {
      if (line.base_sha === null) {
        throw new GitError(`iteration ${line.iter} has no base commit to revert to`);
      }
      const reverted = await revertIteration({
        git,
        baseSha: line.base_sha,
        scopePaths: options.scopePaths,
        message: arbiterCommitMessage(line),
      });
      return { ...line, sha: reverted.headSha };
    }
  }
}

/**
 * The arbiter's commit message: `autoresearch iter 4: arbiter` with the base in the body. It says no
 * score, best score, decision or reason: every agent of the loop can read commit messages (Claude Code
 * even puts recent subjects in every request), and the ledger is where decisions are recorded.
 */
export function arbiterCommitMessage(line: Pick<LedgerLine, 'iter' | 'base_sha'>): string {
  return `autoresearch iter ${line.iter}: arbiter\n\nBase: ${line.base_sha ?? 'unknown'}`;
}

/**
 * Makes git read the tree's content before Forge asks it what changed: an index entry whose stat data
 * vouches for content the file no longer holds (an agent, or the code a metric ran, can write the
 * index) would hide that file's change from status and diff, and so from the scope check, the keep
 * and the revert.
 */
async function distrustIndex(git: Git): Promise<void> {
  await git.exposeForgedEntries?.();
}

async function assertCleanState(git: Git, baseSha: string): Promise<void> {
  if (await git.isMergeOrRebaseInProgress()) {
    throw new GitError(
      `a merge, rebase, cherry-pick or revert is in progress in ${git.cwd}: finish or abort it, then resume`,
    );
  }
  if ((await git.resolveCommit(baseSha)) === undefined) {
    throw new GitError(`the base commit ${baseSha} does not exist in ${git.cwd}`);
  }
}

/** Restores `paths` to their content at `base` (removing those that did not exist) and commits them once. */
async function restoreToBase(
  git: Git,
  base: string,
  paths: readonly string[],
  message: string,
): Promise<RestoreResult> {
  if (paths.length === 0) return { paths: [], commitSha: undefined, headSha: await git.headSha() };
  const sorted = [...paths].sort();
  const inBase = await git.pathsInCommit(base, sorted);
  // Removals first: a file that replaced a directory (or the reverse) must go before the other comes back.
  await git.removePaths(sorted.filter((path) => !inBase.has(path)));
  await git.checkoutPathsFrom(
    base,
    sorted.filter((path) => inBase.has(path)),
  );
  const commitSha = await git.commitPaths(sorted, message);
  return { paths: sorted, commitSha, headSha: commitSha ?? (await git.headSha()) };
}
