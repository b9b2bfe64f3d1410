// The arbiter: plain TypeScript over the ledger decides keep/revert/crash, applies it in git, signals.
import type { ExecutionRequest, ExecutionResult, Executor } from '../../loop/types.js';
import { decide, type DecideResult } from '../arbiter.js';
import { judgeOutputPath, readJudgeOutput, type JudgeVerdict } from '../judge-output.js';
import { readIterationState, totalCost, withTamper, type IterationState } from '../iteration-state.js';
import { applyDecision, isPathInScope } from '../keep-revert.js';
import { loadLedgerSummary, recordLedgerLine } from '../ledger-summary.js';
import { writeArbiterSignal } from '../signals.js';
import { recordHead } from '../loop-head.js';
import { readSpend } from '../spend.js';
import { bookkeepingPaths, placeInLoop, ledgerPath, type AutoresearchContext } from './context.js';
import { remeasureWithinNoise } from './remeasure.js';
import { decidePopulation } from './population-arbiter.js';
import type { CandidateLine, LedgerLine, TamperRecord } from '../ledger.js';

export function createArbiterExecutor(context: AutoresearchContext): Executor {
  return {
    kind: 'arbiter',
    writesCode: false,
    builtin: true,
    // Arithmetic over files: a failure is a bug or a broken workspace, retrying once is plenty.
    maxAttempts: 2,
    async execute(request) {
      const placed = placeInLoop(request.bead);
      if (!placed.ok) return placed.result;
      const { iter } = placed;
      const { workspace } = context;
      let decided: Decided;
      if (context.config.population > 1 && iter > 0) {
        const population = await decidePopulation(context, request, iter);
        if (!population.ok) return population.result;
        decided = {
          result: population.result,
          line: population.line,
          remeasured: population.remeasured,
          note: population.note,
          candidates: describeCandidates(population.candidates),
        };
      } else {
        const single = await decideSingle(context, request, iter);
        if (!single.ok) return single.result;
        decided = single.decided;
      }
      const { result, line, remeasured } = decided;
      await writeArbiterSignal(context.files, workspace, result.signal);

      const scores = `${String(line.best_before)} → ${String(line.score_after)}`;
      const next = result.signal.type === 'terminal' ? `terminal: ${result.signal.reason}` : 'continue';
      const noise =
        line.noise_band === undefined
          ? ''
          : `, noise ±${line.noise_band}${remeasured ? ' (measured again)' : ''}`;
      const summaryText = `${line.decision} (${scores}${line.delta === null ? '' : `, Δ ${line.delta}`}${noise}); ${next}${decided.note === undefined ? '' : `; ${decided.note}`}${decided.candidates === undefined ? '' : `; ${decided.candidates}`}`;
      return {
        outcome: 'ok',
        agent: 'arbiter',
        message: `${result.replayed ? 'already decided: ' : ''}${summaryText}`,
        closeReason: `arbiter-${iter}: ${summaryText}`,
        record: {
          type: 'decided',
          iter,
          decision: line.decision,
          score: line.score_after,
          best_before: line.best_before,
          best_after: line.best_after,
          delta: line.delta,
          terminal: line.terminal ?? null,
          ...(line.noise_band === undefined
            ? {}
            : {
                noise_band: line.noise_band,
                within_noise: line.reason?.startsWith('within the noise band') === true,
              }),
        },
      };
    },
  };
}

interface Decided {
  result: DecideResult;
  line: LedgerLine;
  remeasured: boolean;
  note?: string | undefined;
  /** A population's candidates in one phrase (`c2 kept 15; c1 12, c3 crashed`). */
  candidates?: string;
}

/** A one-candidate iteration: the judge's verdict on the loop's tree, decided and applied. */
async function decideSingle(
  context: AutoresearchContext,
  request: ExecutionRequest,
  iter: number,
): Promise<{ ok: true; decided: Decided } | { ok: false; result: ExecutionResult }> {
  const { config, workspace, git } = context;
  const params = { direction: config.metric.direction, target: config.target };
  const state = await readIterationState(context.files, workspace, iter);
  const judged: JudgeVerdict =
    state.judge_failure !== undefined
      ? { ok: false, reason: state.judge_failure }
      : await readJudgeOutput(context.files, judgeOutputPath(workspace, iter));
  const { summary } = await loadLedgerSummary(context.files, ledgerPath(workspace), params);
  // Not for a replay (decided already): the arbiter's own commit may have moved HEAD since.
  const drift = iter > summary.last_iter ? await changedSinceJudged(context, state, iter) : undefined;
  const measured =
    drift === undefined
      ? await remeasureWithinNoise(context, request, iter, summary, judged)
      : { ok: true as const, judge: judged, samples: undefined, remeasured: false };
  if (!measured.ok) {
    return {
      ok: false,
      result: { outcome: 'aborted', agent: 'metric', message: 'The metric command was stopped.' },
    };
  }
  const { judge } = measured;

  let baseSha = state.base_sha ?? null;
  if (baseSha === null && iter === 0) baseSha = await git.headSha();
  if (baseSha === null) {
    return {
      ok: false,
      result: {
        outcome: 'error',
        fatal: true,
        agent: 'arbiter',
        message: `No base commit is recorded for iteration ${iter} (did doer-${iter} run?); see ${workspace}/iterations/.`,
      },
    };
  }
  const now = context.clock.now();
  const started = summary.first_ts === null ? now : Date.parse(summary.first_ts);
  const result = decide({
    config,
    ledger: summary,
    iter,
    judge,
    baseSha,
    now: new Date(now).toISOString(),
    hypothesis: state.hypothesis,
    iterationCostUsd: totalCost(state),
    costSoFarUsd: Math.max(
      (await readSpend(context.files, workspace)).cost_usd,
      summary.total_cost_usd + totalCost(state),
    ),
    wallClockElapsedSeconds: Math.max(0, (now - started) / 1000),
    ...(state.doer_started_at === undefined ? {} : { durationMs: now - Date.parse(state.doer_started_at) }),
    guardRevertedPaths: state.guard_reverted_paths,
    tamper: [
      ...(measured.tamper === undefined
        ? state.tamper
        : withTamper(state, { role: 'doer', ...measured.tamper }).tamper),
      ...(drift === undefined ? [] : [drift]),
    ],
    samples: measured.samples,
    ...(measured.remeasured ? { remeasured: true } : {}),
    guardFailure: state.guard_failure,
    tracks: state.tracks,
  });
  let line = result.line;
  if (!result.replayed) {
    line = await applyDecision({ git, result, scopePaths: config.scope.doer_paths });
    await recordHead(context.files, workspace, git);
    await recordLedgerLine(context.files, ledgerPath(workspace), line, params);
  }
  return { ok: true, decided: { result, line, remeasured: measured.remeasured, note: measured.note } };
}

/**
 * What changed in the loop's tree between the judge's measurement and this arbiter: HEAD moved (but for
 * this arbiter's own commit, left by a killed run) or the scope holds uncommitted changes, which a keep
 * would commit unmeasured. Only a bead between the two can do it (one another agent made: red team).
 */
async function changedSinceJudged(
  context: AutoresearchContext,
  state: IterationState,
  iter: number,
): Promise<TamperRecord | undefined> {
  const judged = state.judged_head;
  if (iter === 0 || judged === undefined) return undefined;
  const { git, config } = context;
  const { head: at, entries } = await git.statusWithHead();
  const head = at.sha;
  const moved =
    head !== judged &&
    !(
      (await git.isAncestor(judged, head)) &&
      (await git.subjectsBetween(judged, head)).every(
        (subject) => subject === `autoresearch iter ${iter}: arbiter`,
      )
    );
  const ignored = bookkeepingPaths(context);
  const dirty = entries
    .flatMap((entry) => [entry.path, entry.origPath])
    .filter(
      (path): path is string =>
        path !== undefined && isPathInScope(path, config.scope.doer_paths) && !isPathInScope(path, ignored),
    );
  if (!moved && dirty.length === 0) return undefined;
  const what = [
    moved ? `HEAD moved from ${judged.slice(0, 10)} to ${head.slice(0, 10)}` : undefined,
    dirty.length > 0 ? `uncommitted changes in the scope` : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(' and ');
  return {
    role: 'loop',
    paths: dirty.length > 0 ? [...new Set(dirty)].sort() : ['HEAD'],
    what: `${what} after judge-${iter} measured, before its arbiter`,
  };
}

function describeCandidates(candidates: readonly CandidateLine[]): string {
  return candidates
    .map((c) => `c${c.candidate} ${c.decision} ${c.score === null ? 'no score' : String(c.score)}`)
    .join(', ');
}
