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
    }
  | { ok: false; aborted: boolean; reason: string; last: ProcessResult | undefined };

/**
 * Runs the metric `times` times (stopping at the first run that gives no score: a crash is never
 * averaged away) and scores the median. With `times` 1 the output is exactly a single run's.
 */
export async function measureHardMetric(
  metric: Pick<HardMetricConfig, 'score' | 'timeout_seconds'>,
  times: number,
  run: () => Promise<ProcessResult>,
): Promise<Measurement> {
  const samples: number[] = [];
  let output: JudgeOutput | undefined;
  let last: ProcessResult | undefined;
  let durationMs = 0;
  for (let round = 1; round <= times; round += 1) {
    last = await run();
    durationMs += last.durationMs;
    if (last.aborted) return { ok: false, aborted: true, reason: 'the metric command was stopped', last };
    const verdict = judgeHardMetric(metric, last);
    if (!verdict.ok) {
      const which = times === 1 ? '' : `run ${round} of ${times}: `;
      return { ok: false, aborted: false, reason: `${which}${verdict.reason}`, last };
    }
    samples.push(verdict.output.score);
    output = verdict.output;
  }
  if (output === undefined || last === undefined) throw new Error('measureHardMetric: times must be ≥ 1');
  if (times === 1) return { ok: true, output, samples, last, durationMs };
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
  };
}
