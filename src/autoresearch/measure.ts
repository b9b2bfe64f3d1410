// Measuring a hard metric `repeat` times: the one function the baseline, the hard judge and the
// arbiter's re-measure all call, so every score in the ledger is read the same way.
import type { ProcessResult } from '../infra/process.js';
import type { HardMetricConfig } from './config.js';
import { judgeHardMetric, type JudgeOutput } from './judge-output.js';
import { median } from './noise.js';

export type Measurement =
  | {
      ok: true;
      /** The median is the score; `samples` is set when there was more than one run. */
      output: JudgeOutput;
      samples: number[];
      /** The last run's result (its exit code and duration are what a single run used to report). */
      last: ProcessResult;
      durationMs: number;
      /** The fewest tests a run counted (ScoreResult.tests), where every run counted some. */
      tests?: number;
    }
  | { ok: false; aborted: boolean; reason: string; last: ProcessResult | undefined };

/**
 * Why a run of a test metric counted fewer tests than the baseline ran (`floor`), or undefined. A score
 * over fewer tests is a score of other work: a failing test that no longer runs, or that the code under
 * test turned into a skip, drops out of a pass rate and lets the suite exit 0.
 */
export function fewerThanBaseline(
  tests: number | undefined,
  floor: number | undefined,
  run = "the metric's run",
): string | undefined {
  if (floor === undefined || (tests !== undefined && tests >= floor)) return undefined;
  const now = tests === undefined ? 'counted no tests' : `counted ${tests} test${tests === 1 ? '' : 's'}`;
  return `${run} ${now} that passed or failed, where the baseline's counted ${floor}: a test that is skipped or no longer runs is no score`;
}

/**
 * Runs the metric `times` times (stopping at the first run that gives no score: a crash is never
 * averaged away) and scores the median. With `times` 1 the output is exactly a single run's. With
 * `testsFloor` (the tests the baseline's run counted), a run that counts fewer gives no score.
 */
export async function measureHardMetric(
  metric: Pick<HardMetricConfig, 'score' | 'timeout_seconds'>,
  times: number,
  run: () => Promise<ProcessResult>,
  testsFloor?: number,
): Promise<Measurement> {
  const samples: number[] = [];
  let output: JudgeOutput | undefined;
  let last: ProcessResult | undefined;
  let durationMs = 0;
  const counts: (number | undefined)[] = [];
  for (let round = 1; round <= times; round += 1) {
    last = await run();
    durationMs += last.durationMs;
    if (last.aborted) return { ok: false, aborted: true, reason: 'the metric command was stopped', last };
    const verdict = judgeHardMetric(metric, last);
    const fewer = verdict.ok ? fewerThanBaseline(verdict.tests, testsFloor) : undefined;
    if (!verdict.ok || fewer !== undefined) {
      const which = times === 1 ? '' : `run ${round} of ${times}: `;
      return { ok: false, aborted: false, reason: `${which}${verdict.ok ? fewer : verdict.reason}`, last };
    }
    samples.push(verdict.output.score);
    output = verdict.output;
    counts.push(verdict.tests);
  }
  if (output === undefined || last === undefined) throw new Error('measureHardMetric: times must be ≥ 1');
  const counted = counts.some((n) => n === undefined) ? {} : { tests: Math.min(...(counts as number[])) };
  if (times === 1) return { ok: true, output, samples, last, durationMs, ...counted };
  const score = median(samples);
  return {
    ok: true,
    output: {
      ...output,
      score,
      samples,
      evidence: `median of ${times} runs (last: ${output.evidence ?? `exit ${String(last.exitCode)}`})`,
    },
    samples,
    last,
    durationMs,
    ...counted,
  };
}
