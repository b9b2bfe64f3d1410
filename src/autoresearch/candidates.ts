// The candidates of a population iteration (`population` > 1 in config.json): which candidate a bead
// works on (its `candidate:<i>` label), where each candidate's state lives, and its git worktree.
//
// Every candidate of iteration N starts from the iteration's base in a worktree of its own inside git's
// common directory (`forge/candidates/<epic>/iter-N/c<i>`, on branch `forge/candidates/<epic>/iter-N/c<i>`),
// so nothing shows in the user's tree. Its state and its judge's output are kept apart from the other
// candidates' under `<workspace>/candidates/iter-N/`: the executors read and write them through a view
// of the loop's files that maps the iteration's paths to the candidate's.
import { join } from 'node:path';
import type { Bead } from '../beads/types.js';
import type { Git } from '../infra/git.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { labelValue } from '../infra/labels.js';
import { iterationStatePath } from './iteration-state.js';
import { judgeOutputPath } from './judge-output.js';

/** The bead's candidate index (`candidate:<i>`, i ≥ 1); undefined for a bead of a one-candidate loop. */
export function candidateOf(bead: Pick<Bead, 'labels'>): number | undefined {
  const value = labelValue(bead, 'candidate');
  return value !== undefined && /^[1-9]\d*$/.test(value) ? Number(value) : undefined;
}

export function candidateStatePath(workspace: string, iter: number, candidate: number): string {
  return join(workspace, 'candidates', `iter-${iter}`, `c${candidate}.json`);
}

export function candidateJudgePath(workspace: string, iter: number, candidate: number): string {
  return join(workspace, 'candidates', `iter-${iter}`, `judge-c${candidate}.json`);
}

/**
 * The loop's files as candidate `candidate` of iteration `iter` sees them: the iteration's state and
 * judge output are the candidate's own; everything else (ledger, spend, head record) is shared.
 */
export function candidateFiles(
  files: LoopFiles,
  workspace: string,
  iter: number,
  candidate: number,
): LoopFiles {
  const map = new Map([
    [iterationStatePath(workspace, iter), candidateStatePath(workspace, iter, candidate)],
    [judgeOutputPath(workspace, iter), candidateJudgePath(workspace, iter, candidate)],
  ]);
  const to = (path: string) => map.get(path) ?? path;
  return {
    locate: (path) => files.locate(to(path)),
    readIfExists: (path) => files.readIfExists(to(path)),
    scanLog: (path, query) => files.scanLog(to(path), query),
    writeText: (path, text) => files.writeText(to(path), text),
    writeJson: (path, value) => files.writeJson(to(path), value),
    appendJsonLine: (path, value) => files.appendJsonLine(to(path), value),
    readLastLine: (path) => files.readLastLine(to(path)),
    openRange: (path) => files.openRange(to(path)),
    stat: (path) => files.stat(to(path)),
    exists: (path) => files.exists(to(path)),
    list: (path) => files.list(to(path)),
    mkdir: (path) => files.mkdir(to(path)),
    rename: (from, target) => files.rename(to(from), to(target)),
    remove: (path) => files.remove(to(path)),
  };
}

function safeName(epic: string): string {
  return epic.replace(/[^A-Za-z0-9._-]/g, '_');
}

export interface CandidateTree {
  dir: string;
  branch: string;
}

/** Where candidate `candidate` of iteration `iter` works (`commonDir`: git's common directory). */
export function candidateTree(
  commonDir: string,
  epic: string,
  iter: number,
  candidate: number,
): CandidateTree {
  const name = `iter-${iter}/c${candidate}`;
  return {
    dir: join(commonDir, 'forge', 'candidates', safeName(epic), name),
    branch: `forge/candidates/${safeName(epic)}/${name}`,
  };
}

/**
 * The candidate's worktree at `base`: reused when a worktree is already registered there (a retried or
 * resumed doer; the doer itself puts its tree back to the base), else made afresh (a leftover branch of
 * a crashed run is deleted first).
 */
export async function ensureCandidateTree(git: Git, tree: CandidateTree, base: string): Promise<void> {
  const listed = await git.worktreeList();
  if (listed.some((entry) => samePath(entry.path, tree.dir))) return;
  await git.worktreeRemove(tree.dir);
  await git.deleteBranch(tree.branch);
  await git.worktreeAdd(tree.dir, { branch: tree.branch, base });
}

/** Removes every candidate worktree and branch of iteration `iter` (1…k); missing ones are skipped. */
export async function removeCandidateTrees(
  git: Git,
  commonDir: string,
  epic: string,
  iter: number,
  k: number,
): Promise<void> {
  for (let candidate = 1; candidate <= k; candidate += 1) {
    const tree = candidateTree(commonDir, epic, iter, candidate);
    await git.worktreeRemove(tree.dir);
    await git.deleteBranch(tree.branch);
  }
}

function samePath(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/\/+$/, '');
  return norm(a) === norm(b);
}
