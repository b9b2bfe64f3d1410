// The judge: a hard metric is run by the runner itself; a soft one by a read-only agent whose answer is parsed.
import type { Executor, ExecutionResult } from '../../loop/types.js';
import { judgeHardMetric, judgeOutputPath, parseJudgeAnswer, writeJudgeOutput } from '../judge-output.js';
import { updateIterationState } from '../iteration-state.js';
import { snapshotWorkingTree } from '../keep-revert.js';
import { restoreTree } from '../tree-snapshot.js';
import { recordSpend } from '../spend.js';
import { bookkeepingPaths, iterOf, type AutoresearchContext } from './context.js';

/** Soft-judge runs whose answer was unusable (garbage, or the tree changed) before the iteration is a crash. */
export const SOFT_JUDGE_TRIES = 2;

export function createJudgeExecutor(context: AutoresearchContext): Executor {
  return {
    kind: context.config.metric.type === 'hard' ? 'metric command' : 'read-only judge',
    writesCode: false,
    builtin: context.config.metric.type === 'hard',
    async execute(request) {
      const placed = iterOf(request.bead);
      if (!placed.ok) return placed.result;
      const { iter } = placed;
      await updateIterationState(context.workspace, iter, (s) => {
        const { judge_failure: _dropped, ...rest } = s;
        return rest;
      });
      return context.config.metric.type === 'hard'
        ? judgeWithCommand(context, request, iter)
        : judgeWithAgent(context, request, iter);
    },
  };
}

async function judgeWithCommand(
  context: AutoresearchContext,
  request: Parameters<Executor['execute']>[0],
  iter: number,
): Promise<ExecutionResult> {
  const metric = context.config.metric;
  if (metric.type !== 'hard') throw new Error('unreachable: hard metric expected');
  const [file, ...args] = metric.argv as [string, ...string[]];
  const result = await context.runMetric(
    { file, args },
    {
      cwd: request.cwd,
      timeoutMs: Math.min(metric.timeout_seconds * 1000, request.timeoutMs),
      signal: request.signal,
    },
  );
  if (result.aborted)
    return { outcome: 'aborted', message: 'The metric command was stopped.', agent: 'metric' };
  const verdict = judgeHardMetric(metric, result);
  if (!verdict.ok)
    return judgeFailed(context, iter, `the metric command gave no score: ${verdict.reason}`, 'metric');
  await writeJudgeOutput(judgeOutputPath(context.workspace, iter), verdict.output);
  return {
    outcome: 'ok',
    message: `score ${verdict.output.score} (metric command, exit ${String(result.exitCode)})`,
    agent: 'metric',
    closeReason: `judge-${iter}: score ${verdict.output.score}`,
  };
}

async function judgeWithAgent(
  context: AutoresearchContext,
  request: Parameters<Executor['execute']>[0],
  iter: number,
): Promise<ExecutionResult> {
  const ignored = bookkeepingPaths(context);
  const problems: string[] = [];
  let cost = 0;
  let last: ExecutionResult | undefined;
  for (let round = 1; round <= SOFT_JUDGE_TRIES; round += 1) {
    const before = await snapshotWorkingTree(context.git);
    const result = await context.agents.readOnly.execute(request);
    last = result;
    cost += result.costUsd ?? 0;
    const changed = await restoreTree(context.git, before, ignored);
    await updateIterationState(context.workspace, iter, (s) => ({
      ...s,
      costs: { ...s.costs, judge: (s.costs.judge ?? 0) + (result.costUsd ?? 0) },
    }));
    await recordSpend(context.workspace, 'judge', result);
    if (changed.paths.length > 0 || changed.headMoved) {
      const what = changed.headMoved ? 'moved HEAD' : `changed ${changed.paths.join(', ')}`;
      problems.push(`round ${round}: the judge ${what}; its changes were discarded`);
      request.onActivity?.(`judge tried to write (${what}); changes discarded`);
      continue;
    }
    // Limits, timeouts and auth go back to the runner, which waits or stops as for any agent.
    if (result.outcome !== 'ok') return { ...result, costUsd: cost };
    const verdict = parseJudgeAnswer(result.finalText ?? '');
    if (result.writeAttempts !== undefined) {
      problems.push(`round ${round}: the judge tried ${result.writeAttempts.length} write(s), all refused`);
      request.onActivity?.(`judge tried to write (${result.writeAttempts.join('; ')}); refused`);
    }
    if (verdict.ok) {
      await writeJudgeOutput(judgeOutputPath(context.workspace, iter), {
        ...verdict.output,
        raw_output: (result.finalText ?? '').slice(-4000),
      });
      return {
        ...result,
        costUsd: cost,
        message: `score ${verdict.output.score} (${verdict.output.findings.length} finding(s))${
          problems.length > 0 ? `; ${problems.join('; ')}` : ''
        }`,
        closeReason: `judge-${iter}: score ${verdict.output.score}`,
      };
    }
    problems.push(`round ${round}: ${verdict.reason}`);
    request.onActivity?.(`judge answer unusable: ${verdict.reason}`);
  }
  const failed = await judgeFailed(context, iter, problems.join('; '), last?.agent ?? 'judge');
  return { ...failed, costUsd: cost, ...(last?.model === undefined ? {} : { model: last.model }) };
}

/** A judge that cannot score is not a failed bead: the arbiter records the iteration as a crash. */
async function judgeFailed(
  context: AutoresearchContext,
  iter: number,
  reason: string,
  agent: string,
): Promise<ExecutionResult> {
  await updateIterationState(context.workspace, iter, (s) => ({ ...s, judge_failure: reason }));
  return {
    outcome: 'ok',
    message: `no score (${reason}); the arbiter will record a crash`,
    agent,
    closeReason: `judge-${iter}: no score; ${reason}`.slice(0, 500),
  };
}
