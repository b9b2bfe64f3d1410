// A population's candidate (a doer or judge bead labelled `candidate:<i>`) runs the ordinary doer or
// judge, but in the candidate's own worktree and against the candidate's own state files: the doer's
// agent works and commits there, the judge measures that commit. Around the doer's agent, the loop's
// main tree and the sibling candidates' worktrees are snapshotted: whatever the candidate changed in
// them is put back and recorded as the candidate's tamper.
import type { ExecutionRequest, ExecutionResult, Executor } from '../../loop/types.js';
import {
  candidateFiles,
  candidateOf,
  candidateTree,
  ensureCandidateTree,
  type CandidateTree,
} from '../candidates.js';
import { readIterationState, updateIterationState, withTamper } from '../iteration-state.js';
import { describeTreeChange, restoreTree, snapshotTree, type TreeSnapshot } from '../tree-snapshot.js';
import type { Git } from '../../infra/git.js';
import { bookkeepingPaths, placeInLoop, type AutoresearchContext } from './context.js';

export interface CandidateSlot {
  iter: number;
  candidate: number;
  tree: CandidateTree;
  /** The executors' context as the candidate sees it: its worktree, its git, its state files. */
  context: AutoresearchContext;
}

function gitFor(context: AutoresearchContext, dir: string): Git {
  if (context.gitAt === undefined) {
    throw new Error('A population loop needs git for its candidate worktrees (AutoresearchContext.gitAt).');
  }
  return context.gitAt(dir);
}

/** Where candidate `candidate` of iteration `iter` works, and the context it works with. */
export async function candidateSlot(
  context: AutoresearchContext,
  iter: number,
  candidate: number,
): Promise<CandidateSlot> {
  const tree = candidateTree(await context.git.commonDir(), epicOf(context), iter, candidate);
  return {
    iter,
    candidate,
    tree,
    context: {
      ...context,
      repo: tree.dir,
      stateRepo: context.stateRepo ?? context.repo,
      git: gitFor(context, tree.dir),
      files: candidateFiles(context.files, context.workspace, iter, candidate),
    },
  };
}

function epicOf(context: AutoresearchContext): string {
  return context.config.epic_id ?? 'loop';
}

/**
 * The iteration's base, the same for every candidate: the loop's HEAD when the first candidate's doer
 * starts, recorded once in the iteration's own state.
 */
async function iterationBase(context: AutoresearchContext, iter: number): Promise<string> {
  const state = await readIterationState(context.files, context.workspace, iter);
  if (state.base_sha !== undefined) return state.base_sha;
  const { sha: head, branch } = await context.git.headState();
  await updateIterationState(context.files, context.workspace, iter, (s) => ({
    ...s,
    base_sha: head,
    branch: branch ?? null,
    doer_started_at: new Date(context.clock.now()).toISOString(),
  }));
  return head;
}

/** Wraps the loop's doer: a bead with a candidate label runs in its candidate's worktree. */
export function candidateDoer(
  context: AutoresearchContext,
  plain: Executor,
  make: (c: AutoresearchContext) => Executor,
): Executor {
  return {
    ...plain,
    async execute(request) {
      const candidate = candidateOf(request.bead);
      if (candidate === undefined) return plain.execute(request);
      const placed = placeInLoop(request.bead);
      if (!placed.ok) return placed.result;
      const slot = await candidateSlot(context, placed.iter, candidate);
      const base = await iterationBase(context, placed.iter);
      await ensureCandidateTree(context.git, slot.tree, base);
      const others = await siblingTrees(context, slot);
      const before = await Promise.all(others.map(async (o) => snapshotTree(o.git)));
      const result = await make(slot.context).execute({ ...request, cwd: slot.tree.dir });
      const tampered = await putBackSiblings(others, before);
      if (tampered.length === 0) return result;
      await updateIterationState(slot.context.files, context.workspace, placed.iter, (s) =>
        withTamper(s, { role: 'doer', paths: tampered, what: 'changed a tree that is not its own' }),
      );
      request.onActivity?.(`tamper: candidate ${candidate} changed ${tampered.join(', ')}; put back`);
      return { ...result, tampered: [...(result.tampered ?? []), ...tampered] };
    },
  };
}

interface Sibling {
  name: string;
  git: Git;
  ignored: readonly string[];
}

/** The loop's main tree and every other candidate worktree of the iteration that exists. */
async function siblingTrees(context: AutoresearchContext, slot: CandidateSlot): Promise<Sibling[]> {
  const listed = new Set((await context.git.worktreeList()).map((entry) => entry.path.replace(/\/+$/, '')));
  const siblings: Sibling[] = [
    { name: 'the loop’s tree', git: context.git, ignored: bookkeepingPaths(context) },
  ];
  for (let i = 1; i <= context.config.population; i += 1) {
    if (i === slot.candidate) continue;
    const other = candidateTree(await context.git.commonDir(), epicOf(context), slot.iter, i);
    if (!listed.has(other.dir)) continue;
    siblings.push({ name: `candidate ${i}’s worktree`, git: gitFor(context, other.dir), ignored: [] });
  }
  return siblings;
}

async function putBackSiblings(
  siblings: readonly Sibling[],
  before: readonly TreeSnapshot[],
): Promise<string[]> {
  const found: string[] = [];
  for (const [index, sibling] of siblings.entries()) {
    const snapshot = before[index];
    if (snapshot === undefined) continue;
    const change = await restoreTree(sibling.git, snapshot, sibling.ignored);
    const what = describeTreeChange(change);
    if (what !== undefined) found.push(`${sibling.name} (${what})`);
  }
  return found;
}

/** Wraps the loop's judge: a bead with a candidate label measures its candidate's commit, blind to the rest. */
export function candidateJudge(
  context: AutoresearchContext,
  plain: Executor,
  make: (c: AutoresearchContext) => Executor,
): Executor {
  return {
    ...plain,
    async execute(request: ExecutionRequest): Promise<ExecutionResult> {
      const candidate = candidateOf(request.bead);
      if (candidate === undefined) return plain.execute(request);
      const placed = placeInLoop(request.bead);
      if (!placed.ok) return placed.result;
      const slot = await candidateSlot(context, placed.iter, candidate);
      const state = await readIterationState(slot.context.files, context.workspace, placed.iter);
      const at = state.doer_head ?? state.base_sha;
      if (at === undefined) {
        return {
          outcome: 'ok',
          agent: 'judge',
          message: `not judged: candidate ${candidate}'s doer left no commit`,
          closeReason: `judge-${placed.iter} c${candidate}: not judged (no commit)`,
          record: { type: 'judged', iter: placed.iter, score: null, failure: 'not judged: no commit' },
        };
      }
      // A worktree lost in a crash is made again at the candidate's commit.
      await ensureCandidateTree(context.git, slot.tree, at);
      const result = await make(slot.context).execute({ ...request, cwd: slot.tree.dir });
      return {
        ...result,
        closeReason: result.closeReason?.replace(/^judge-(\d+)/, `judge-$1 c${candidate}`),
      };
    },
  };
}
