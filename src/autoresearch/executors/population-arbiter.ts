// The arbiter of a population iteration: picks the best candidate (a usable score, no tamper, no failed
// guard; ties go to the lowest index), then decides it exactly as a one-candidate iteration is decided
// (noise rule, guards, best kept score). A kept candidate's commit becomes the loop's branch; every
// candidate's worktree and branch are then removed. The iteration's line, then one line per candidate,
// go to the ledger; a rerun after a crash writes only what is missing.
import type { ExecutionRequest, ExecutionResult } from '../../loop/types.js';
import { decide, type DecideResult } from '../arbiter.js';
import { removeCandidateTrees } from '../candidates.js';
import type { Git } from '../../infra/git.js';
import { judgeOutputPath, readJudgeOutput, type JudgeVerdict } from '../judge-output.js';
import { readIterationState, totalCost, type IterationState } from '../iteration-state.js';
import { applyDecision } from '../keep-revert.js';
import { appendCandidateLine, readLedger, type CandidateLine, type LedgerLine } from '../ledger.js';
import { loadLedgerSummary, recordLedgerLine } from '../ledger-summary.js';
import { recordHead } from '../loop-head.js';
import { angleFilePath } from '../population-stamp.js';
import { isImprovement } from '../score-rules.js';
import { readSpend } from '../spend.js';
import type { WorkspacePaths } from '../workspace.js';
import { workspacePaths } from '../workspace.js';
import { candidateSlot } from './candidate.js';
import { ledgerPath, type AutoresearchContext } from './context.js';
import { remeasureWithinNoise } from './remeasure.js';

export interface CandidateFacts {
  candidate: number;
  state: IterationState;
  judge: JudgeVerdict;
  /** Why it cannot be kept whatever it scored (tamper, a failed guard, no score). */
  unusable?: string;
}

async function candidateFacts(
  context: AutoresearchContext,
  iter: number,
  candidate: number,
): Promise<CandidateFacts> {
  const { context: own } = await candidateSlot(context, iter, candidate);
  const state = await readIterationState(own.files, context.workspace, iter);
  const judge: JudgeVerdict =
    state.judge_failure !== undefined
      ? { ok: false, reason: state.judge_failure }
      : await readJudgeOutput(own.files, judgeOutputPath(context.workspace, iter));
  const tamper = state.tamper.find((record) => record.role === 'doer');
  const unusable =
    tamper !== undefined
      ? `tamper: changed ${tamper.paths.join(', ')}`
      : state.guard_failure !== undefined
        ? `guard failed: ${state.guard_failure.reason}`
        : !judge.ok
          ? judge.reason
          : Number.isFinite(judge.output.score)
            ? undefined
            : 'the score is not a number';
  return { candidate, state, judge, ...(unusable === undefined ? {} : { unusable }) };
}

/** The best usable candidate by the metric's direction, the lowest index among equals; else the first. */
export function pickBest(
  facts: readonly CandidateFacts[],
  direction: 'maximize' | 'minimize',
): CandidateFacts {
  let best: CandidateFacts | undefined;
  for (const fact of facts) {
    if (fact.unusable !== undefined || !fact.judge.ok) continue;
    if (best === undefined || !best.judge.ok) best = fact;
    else if (isImprovement(fact.judge.output.score, best.judge.output.score, 0, direction)) best = fact;
  }
  const first = facts[0];
  if (best !== undefined) return best;
  if (first === undefined) throw new Error('a population has at least one candidate');
  return first;
}

/** Moves the loop's tree from the base to the kept candidate's commit (a child of the base). */
async function moveToCandidate(git: Git, base: string, commit: string): Promise<void> {
  if ((await git.headSha()) === commit) return;
  const changed = await git.diffCommits(base, commit);
  const present = await git.pathsInCommit(commit, changed);
  await git.checkoutPathsFrom(
    commit,
    changed.filter((path) => present.has(path)),
  );
  await git.removePaths(changed.filter((path) => !present.has(path)));
  await git.resetSoft(commit);
}

export type PopulationDecision =
  | {
      ok: true;
      result: DecideResult;
      line: LedgerLine;
      candidates: CandidateLine[];
      remeasured: boolean;
      note?: string;
    }
  | { ok: false; result: ExecutionResult };

export async function decidePopulation(
  context: AutoresearchContext,
  request: Pick<ExecutionRequest, 'cwd' | 'timeoutMs' | 'signal'>,
  iter: number,
): Promise<PopulationDecision> {
  const { config, workspace, git } = context;
  const k = config.population;
  const params = { direction: config.metric.direction, target: config.target };
  const main = await readIterationState(context.files, workspace, iter);
  const facts: CandidateFacts[] = [];
  for (let i = 1; i <= k; i += 1) facts.push(await candidateFacts(context, iter, i));
  const chosen = pickBest(facts, config.metric.direction);
  const slot = await candidateSlot(context, iter, chosen.candidate);
  const { summary } = await loadLedgerSummary(context.files, ledgerPath(workspace), params);
  const measured = await remeasureWithinNoise(
    slot.context,
    { ...request, cwd: slot.tree.dir },
    iter,
    summary,
    chosen.judge,
  );
  if (!measured.ok) {
    return {
      ok: false,
      result: { outcome: 'aborted', agent: 'metric', message: 'The metric command was stopped.' },
    };
  }
  const baseSha = main.base_sha ?? chosen.state.base_sha ?? null;
  if (baseSha === null) {
    return {
      ok: false,
      result: {
        outcome: 'error',
        fatal: true,
        agent: 'arbiter',
        message: `No base commit is recorded for iteration ${iter} (did its doers run?); see ${workspace}/iterations/.`,
      },
    };
  }
  const now = context.clock.now();
  const started = summary.first_ts === null ? now : Date.parse(summary.first_ts);
  const cost = totalCost(main) + facts.reduce((sum, fact) => sum + totalCost(fact.state), 0);
  const { state } = chosen;
  const result = decide({
    config,
    ledger: summary,
    iter,
    judge: measured.judge,
    baseSha,
    now: new Date(now).toISOString(),
    hypothesis: state.hypothesis,
    iterationCostUsd: cost,
    costSoFarUsd: Math.max(
      (await readSpend(context.files, workspace)).cost_usd,
      summary.total_cost_usd + cost,
    ),
    wallClockElapsedSeconds: Math.max(0, (now - started) / 1000),
    ...(main.doer_started_at === undefined ? {} : { durationMs: now - Date.parse(main.doer_started_at) }),
    guardRevertedPaths: state.guard_reverted_paths,
    tamper: state.tamper,
    samples: measured.samples,
    ...(measured.remeasured ? { remeasured: true } : {}),
    guardFailure: state.guard_failure,
    tracks: state.tracks,
  });
  let line: LedgerLine = result.line;
  if (!result.replayed) {
    if (result.decision === 'keep' && state.doer_head !== undefined) {
      await moveToCandidate(git, baseSha, state.doer_head);
    }
    line = await applyDecision({ git, result, scopePaths: config.scope.doer_paths });
    line = { ...line, population: k, candidate: chosen.candidate };
    await recordHead(context.files, workspace, git);
    await recordLedgerLine(context.files, ledgerPath(workspace), line, params);
  }
  const candidates = await recordCandidates(context, facts, line, workspacePaths(workspace));
  await removeCandidateTrees(git, await git.commonDir(), config.epic_id ?? 'loop', iter, k);
  return {
    ok: true,
    result,
    line,
    candidates,
    remeasured: measured.remeasured,
    ...(measured.note === undefined ? {} : { note: measured.note }),
  };
}

/** One ledger line per candidate, each written once (a rerun adds only the missing ones). */
async function recordCandidates(
  context: AutoresearchContext,
  facts: readonly CandidateFacts[],
  line: LedgerLine,
  paths: WorkspacePaths,
): Promise<CandidateLine[]> {
  const path = ledgerPath(context.workspace);
  const written = (await readLedger(context.files, path)).candidates.filter((c) => c.iter === line.iter);
  const kept = line.decision === 'keep' ? line.candidate : undefined;
  const all: CandidateLine[] = [];
  for (const fact of facts) {
    const have = written.find((c) => c.candidate === fact.candidate);
    if (have !== undefined) {
      all.push(have);
      continue;
    }
    const angle = await context.files.readIfExists(angleFilePath({ paths }, line.iter, fact.candidate));
    const reason =
      fact.candidate === kept
        ? undefined
        : (fact.unusable ?? (kept === undefined ? line.reason : 'another candidate scored better'));
    const entry: CandidateLine = {
      kind: 'candidate',
      ts: line.ts,
      iter: line.iter,
      candidate: fact.candidate,
      angle: ((angle ?? `Angle ${fact.candidate}`).split('\n')[0] ?? '').trim().slice(0, 200),
      score: fact.unusable === undefined && fact.judge.ok ? fact.judge.output.score : null,
      decision: kept === undefined ? 'reverted' : fact.candidate === kept ? 'kept' : 'lost',
      iteration_decision: line.decision,
      sha: fact.state.doer_head ?? null,
      hypothesis: fact.state.hypothesis ?? '',
      cost_usd: totalCost(fact.state),
      ...(reason === undefined ? {} : { reason }),
    };
    await appendCandidateLine(context.files, path, entry);
    all.push(entry);
  }
  return all;
}
