// The doer: a full-tools agent makes one improvement; the runner then guards its scope and commits it.
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import type { Executor } from '../../loop/types.js';
import type { HardMetricConfig, LoopConfig } from '../config.js';
import { extractHypothesis, readIterationState, updateIterationState } from '../iteration-state.js';
import { guardDoerChanges, keepIteration, snapshotWorkingTree } from '../keep-revert.js';
import { recordSpend } from '../spend.js';
import { bookkeepingPaths, iterOf, type AutoresearchContext } from './context.js';

export function createDoerExecutor(context: AutoresearchContext): Executor {
  return {
    kind: 'doer',
    // The doer's work is committed here, scoped and named by iteration, not by the runner's --auto-commit.
    writesCode: false,
    async execute(request) {
      const placed = iterOf(request.bead);
      if (!placed.ok) return placed.result;
      const { iter } = placed;
      const { git, workspace } = context;

      // The base and the user's uncommitted work are recorded once per iteration, before its first
      // attempt, so a retried or resumed doer is judged against the tree it really started from.
      let state = await readIterationState(workspace, iter);
      if (state.base_sha === undefined || state.user_snapshot === undefined) {
        const taken = await snapshotWorkingTree(git);
        state = await updateIterationState(workspace, iter, (s) => ({
          ...s,
          base_sha: taken.headSha,
          doer_started_at: new Date(context.clock.now()).toISOString(),
          user_snapshot: { head_sha: taken.headSha, files: Object.fromEntries(taken.files) },
        }));
      }
      const baseSha = state.base_sha ?? '';
      const snapshot = {
        headSha: state.user_snapshot?.head_sha ?? baseSha,
        files: new Map(Object.entries(state.user_snapshot?.files ?? {})),
      };

      const result = await context.agents.full.execute(request);
      await updateIterationState(workspace, iter, (s) => ({
        ...s,
        costs: { ...s.costs, doer: (s.costs.doer ?? 0) + (result.costUsd ?? 0) },
      }));
      await recordSpend(workspace, 'doer', result);
      if (result.outcome !== 'ok') return result;

      const ignored = bookkeepingPaths(context);
      const guard = await guardDoerChanges({
        git,
        baseSha,
        allowedPaths: context.config.scope.doer_paths,
        protectedPaths: metricFiles(context.config, context.repo),
        message: `autoresearch iter ${iter}: guard reverted changes outside the doer's scope`,
        snapshot,
        ignoredPaths: ignored,
      });
      const guarded = guard.violations.map((v) => v.path);
      if (guarded.length > 0) {
        request.onActivity?.(
          `guard reverted ${guarded.length} change(s) outside scope: ${guarded.join(', ')}`,
        );
      }
      const kept = await keepIteration({
        git,
        scopePaths: context.config.scope.doer_paths,
        message: `autoresearch iter ${iter}: ${request.bead.title}`,
        ignoredPaths: ignored,
      });
      const hypothesis = extractHypothesis(result.finalText) ?? firstLine(result.finalText);
      await updateIterationState(workspace, iter, (s) => ({
        ...s,
        ...(hypothesis === undefined ? {} : { hypothesis }),
        guard_reverted_paths: [...new Set([...s.guard_reverted_paths, ...guarded])],
      }));
      const notes = [
        kept.commitSha === undefined
          ? 'no new changes to commit'
          : `committed ${kept.commitSha.slice(0, 10)}`,
        guarded.length > 0 ? `guard reverted ${guarded.join(', ')}` : undefined,
      ].filter((note) => note !== undefined);
      return {
        ...result,
        message: `${result.message} (${notes.join('; ')})`,
        closeReason: `doer-${iter} done: ${hypothesis ?? 'no hypothesis given'}`.slice(0, 500),
      };
    },
  };
}

/**
 * Files the doer must never change: the rubric, and files named in the metric command (a scoring
 * script, a test file) that exist in the repo.
 */
export function metricFiles(config: LoopConfig, repo: string): string[] {
  if (config.metric.type === 'soft') return [config.metric.rubric_path];
  const metric: HardMetricConfig = config.metric;
  const files: string[] = [];
  for (const arg of metric.argv) {
    if (arg.startsWith('-') || arg.includes('=')) continue;
    const path = isAbsolute(arg) ? relative(repo, arg) : arg;
    if (path.startsWith('..') || path === '') continue;
    if (/[/\\.]/.test(path) && existsSync(join(repo, path))) files.push(path.split('\\').join('/'));
  }
  return files;
}

function firstLine(text: string | undefined): string | undefined {
  const line = text
    ?.split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line === undefined ? undefined : line.slice(0, 200);
}
