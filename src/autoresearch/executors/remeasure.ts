// The arbiter's second look at a hard metric: a first measurement whose gain lies within the noise band
// of the best kept score is measured again, and the samples pooled, before it is decided. This is the
// runner's own doing, after the judge: the judge never learns the ledger.
import type { ExecutionRequest } from '../../loop/types.js';
import type { JudgeVerdict } from '../judge-output.js';
import type { LedgerSummary } from '../ledger-summary.js';
import { measureHardMetric } from '../measure.js';
import { median, needsRemeasure } from '../noise.js';
import type { AutoresearchContext } from './context.js';
import { metricTestsFloor, runHardMetric } from './judge.js';
import { describeChangingRun, readTamper, watchRuns } from './watched-runs.js';

export type Remeasured =
  | {
      ok: true;
      judge: JudgeVerdict;
      /** Every sample the score is the median of (undefined: measured once). */
      samples: number[] | undefined;
      remeasured: boolean;
      /** Why a wanted re-measure gave nothing (the first samples decide alone). */
      note?: string;
      /** The doer's code read what no commit holds while measured again: the iteration is tamper. */
      tamper?: { paths: string[]; what: string };
    }
  | { ok: false; aborted: true };

export async function remeasureWithinNoise(
  context: AutoresearchContext,
  request: Pick<ExecutionRequest, 'cwd' | 'timeoutMs' | 'signal'>,
  iter: number,
  summary: LedgerSummary,
  judge: JudgeVerdict,
): Promise<Remeasured> {
  const metric = context.config.metric;
  const first = judge.ok ? judge.output.samples : undefined;
  const unchanged = { ok: true as const, judge, samples: first, remeasured: false };
  if (metric.type !== 'hard' || !judge.ok || first === undefined || first.length < 2) return unchanged;
  // Already decided (a replay), or the baseline: nothing to compare with.
  if (iter === 0 || iter <= summary.last_iter) return unchanged;
  const wanted = needsRemeasure({
    score: judge.output.score,
    best: summary.best_score,
    bestSamples: summary.best_samples,
    samples: first,
    minDelta: context.config.min_delta,
    direction: metric.direction,
  });
  if (!wanted) return unchanged;
  const watched = watchRuns(context, { metric: true });
  const again = await measureHardMetric(
    metric,
    metric.repeat ?? 1,
    () => runHardMetric(context, request, watched.run),
    await metricTestsFloor(context),
  );
  if (!again.ok && again.aborted) return { ok: false, aborted: true };
  // The first score came from code that, measured again, rewrote the tree: neither run counts.
  const changing = watched.changes()[0];
  if (changing !== undefined) {
    const who = "the arbiter's second run of the metric command";
    const reason = describeChangingRun(changing, who);
    const tamper = readTamper(changing, who);
    return {
      ok: true,
      judge: { ok: false, reason },
      samples: undefined,
      remeasured: true,
      ...(tamper === undefined ? {} : { tamper }),
    };
  }
  if (!again.ok) return { ...unchanged, note: `measuring again gave no score (${again.reason})` };
  const samples = [...first, ...again.samples];
  return {
    ok: true,
    judge: { ok: true, output: { ...judge.output, score: median(samples), samples } },
    samples,
    remeasured: true,
  };
}
