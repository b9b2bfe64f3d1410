// The branch and HEAD a loop stands on: recorded after every commit Forge makes, checked before every
// bead, so a HEAD moved by anyone but a doer stops the loop before anything is scored.
import { join } from 'node:path';
import type { Bead } from '../beads/types.js';
import { fileStat } from '../infra/fs-ops.js';
import type { Git } from '../infra/git.js';
import type { LoopFiles } from '../infra/loop-files.js';
import type { GuardVeto } from '../loop/types.js';
import { readIterationState } from './iteration-state.js';
import { appendLedgerEvent } from './ledger.js';
import { iterOf } from '../infra/labels.js';

export interface HeadCheckContext {
  workspace: string;
  files: LoopFiles;
  git: Git;
  now: () => number;
  /** The person moved HEAD on purpose: take the current HEAD as the loop's. */
  accept: boolean;
}

interface HeadRecord {
  /** By working tree (its absolute top level): the branch and commit the runner last left it at. */
  trees: Record<string, { branch: string | null; head: string }>;
}

const HEAD_FILE = 'head.json';
/** Subjects of the commits Forge itself makes in a loop (doer commits, guard and arbiter commits). */
const FORGE_SUBJECT = /^autoresearch iter \d+: /;

async function readHeadRecord(files: LoopFiles, workspace: string): Promise<HeadRecord> {
  const text = await files.readIfExists(join(workspace, HEAD_FILE));
  if (text === undefined) return { trees: {} };
  try {
    const value = JSON.parse(text) as Partial<HeadRecord>;
    return typeof value.trees === 'object' && value.trees !== null ? { trees: value.trees } : { trees: {} };
  } catch {
    return { trees: {} };
  }
}

/** Records the tree's branch and HEAD as the loop's own; call after every commit Forge makes. */
export async function recordHead(
  files: LoopFiles,
  workspace: string,
  git: Pick<Git, 'topLevel' | 'headState'>,
): Promise<void> {
  const record = await readHeadRecord(files, workspace);
  const top = await git.topLevel();
  // A tree that is gone (a population candidate's worktree, removed after its iteration) is forgotten,
  // so the record holds the trees that exist, not one entry per candidate ever made.
  for (const tree of Object.keys(record.trees)) {
    if (tree !== top && (await fileStat(tree)) === undefined) delete record.trees[tree];
  }
  const { sha, branch } = await git.headState();
  record.trees[top] = { branch: branch ?? null, head: sha };
  await files.writeJson(join(workspace, HEAD_FILE), record);
}

/** The branch the loop's tree was on when Forge last left it (undefined: not recorded yet). */
export async function recordedBranch(
  files: LoopFiles,
  workspace: string,
  git: Git,
): Promise<string | null | undefined> {
  return (await readHeadRecord(files, workspace)).trees[await git.topLevel()]?.branch;
}

const short = (sha: string) => sha.slice(0, 10);

/**
 * Before a bead: the tree must be on the loop's branch, at the HEAD Forge last left it (or past it
 * through Forge's own commits only). A retried doer may find its earlier attempt's commits. With
 * `accept`, the current HEAD becomes the loop's, recorded in the ledger.
 */
export async function checkHead(
  ctx: HeadCheckContext,
  bead: Bead,
  role: string,
): Promise<GuardVeto | undefined> {
  const { git } = ctx;
  const top = await git.topLevel();
  const record = await readHeadRecord(ctx.files, ctx.workspace);
  const known = record.trees[top];
  const state = await git.headState();
  const branch = state.branch ?? null;
  const head = state.sha;
  if (known === undefined || ctx.accept) {
    if (known !== undefined && (known.head !== head || known.branch !== branch)) {
      await appendLedgerEvent(ctx.files, join(ctx.workspace, 'research-log.jsonl'), {
        kind: 'head_accepted',
        ts: new Date(ctx.now()).toISOString(),
        paths: [branch ?? head],
        message: `HEAD accepted at ${short(head)} on ${branch ?? 'a detached HEAD'} (was ${short(known.head)} on ${known.branch ?? 'a detached HEAD'})`,
      });
    }
    await recordHead(ctx.files, ctx.workspace, git);
    return undefined;
  }
  const hint = `If you moved it on purpose, run again with --accept-head to take the current HEAD as the loop's.`;
  if (known.branch !== null && branch !== known.branch) {
    return {
      reason: 'refused',
      message:
        `The loop runs on branch ${known.branch}, but ${top} is now on ${branch ?? `a detached HEAD (${short(head)})`}. ` +
        `Nothing was scored. Switch back with: git switch ${known.branch}. ${hint}`,
    };
  }
  if (head === known.head) return undefined;
  // A retried doer starts again from its iteration's base, whatever an earlier attempt left.
  const iter = iterOf(bead);
  if (
    role === 'doer' &&
    iter !== undefined &&
    (await readIterationState(ctx.files, ctx.workspace, iter)).base_sha
  )
    return undefined;
  if (await git.isAncestor(known.head, head)) {
    const subjects = await git.subjectsBetween(known.head, head);
    if (subjects.every((subject) => FORGE_SUBJECT.test(subject))) {
      await recordHead(ctx.files, ctx.workspace, git); // Forge's own commit, made just before an interruption
      return undefined;
    }
  }
  return {
    reason: 'refused',
    message:
      `HEAD of ${top} moved from ${short(known.head)} to ${short(head)} since the loop last left it, and not by a doer. ` +
      `Nothing was scored. Put it back with: git reset --keep ${short(known.head)}. ${hint}`,
  };
}
