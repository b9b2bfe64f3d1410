// Digests: the ledger and the metric summed up in the words the strategists' and retrospective's
// prompts show.
import type { LoopConfig, ScoreSource } from './config.js';
import type { LedgerSummary } from './ledger-summary.js';
import { formatScore, scoredLine, type LedgerDigest, type MetricDigest } from './templates.js';

/** How many ledger lines the strategist, the retrospective and the resume strategist see inline. */
const DIGEST_LINES = 10;

export function ledgerDigest(summary: LedgerSummary): LedgerDigest {
  const recent = summary.recent.slice(-DIGEST_LINES);
  return {
    lines: recent.map(scoredLine),
    omitted: Math.max(0, summary.lines - recent.length),
    baseline: formatScore(summary.baseline_score),
    best: formatScore(summary.best_score),
    best_iter: summary.best_iter === null ? '—' : String(summary.best_iter),
    current: formatScore(summary.current_score),
    kept: summary.kept,
    reverted: summary.reverted,
    crashed: summary.crashed,
    non_improvement_streak: summary.non_improvement_streak,
    cost: `$${summary.total_cost_usd.toFixed(2)}`,
  };
}

export function metricDigest(config: LoopConfig): MetricDigest {
  const { metric, caps } = config;
  const description =
    metric.type === 'hard'
      ? `the command \`${metric.command}\`, run by ralph-loop in the repository root (timeout ${metric.timeout_seconds}s); score: ${describeScoreSource(metric.score)}`
      : `a judge agent scores \`${metric.artifact_path}\` against the rubric \`${metric.rubric_path}\``;
  const capsText = [
    caps.max_iterations === 0 ? 'no iteration cap' : `at most ${caps.max_iterations} iterations`,
    caps.plateau_threshold === 0
      ? 'no plateau stop'
      : `stop after ${caps.plateau_threshold} non-improvements in a row`,
    caps.max_cost_usd === 0 ? 'no cost cap' : `cost cap $${caps.max_cost_usd}`,
    caps.wall_clock_seconds === 0 ? 'no wall-clock cap' : `wall clock ${caps.wall_clock_seconds}s`,
    `the target must hold for ${config.confirmation_rounds} iteration(s)`,
  ].join('; ');
  return {
    type: metric.type,
    description,
    direction: metric.direction === 'maximize' ? 'maximize (higher is better)' : 'minimize (lower is better)',
    target: config.target === null ? 'none' : formatScore(config.target),
    caps: capsText,
  };
}

export function describeScoreSource(score: ScoreSource): string {
  switch (score.from) {
    case 'exit-code':
      return '100 when it exits with code 0, else 0';
    case 'regex':
      return `the first capture group of /${score.pattern}/ in its ${score.stream === 'stderr' ? 'stderr' : 'output'}`;
    case 'json':
      return `the number at "${score.path}" in its JSON output`;
    case 'tap':
      return 'the percentage of passing tests in its TAP output';
    case 'junit':
      return 'the percentage of passing tests in its JUnit XML output';
  }
}
