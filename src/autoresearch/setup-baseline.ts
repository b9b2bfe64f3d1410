// The baseline of a hard metric: measured before setup creates anything, then recorded as iteration 0
// (judge output, ledger line, arbiter signal) once the loop exists.
import { AppError, ExitCode } from '../infra/errors.js';
import type { ProcessResult } from '../infra/process.js';
import { decide } from './arbiter.js';
import type { HardMetricConfig } from './config.js';
import type { TrackValues } from './guards.js';
import { writeJudgeOutput, type JudgeOutput } from './judge-output.js';
import { recordLedgerLine } from './ledger-summary.js';
import type { LoopContext } from './loop-context.js';
import { measureHardMetric } from './measure.js';
import { writeArbiterSignal, type ArbiterSignal } from './signals.js';

export interface MeasuredBaseline {
  output: JudgeOutput;
  durationMs: number;
  /** The tests a test metric's baseline ran and passed or failed: the floor of every later run. */
  tests?: number;
}

/**
 * Measures the hard metric on the untouched repository; a metric that cannot be read fails here, with
 * nothing to clean up, rather than as a loop without a baseline.
 */
export async function measureHardBaseline(
  repo: string,
  metric: HardMetricConfig,
  runMetric: (argv: readonly string[], options: { cwd: string; timeoutMs: number }) => Promise<ProcessResult>,
): Promise<MeasuredBaseline> {
  const verdict = await measureHardMetric(metric, metric.repeat ?? 1, () =>
    runMetric(metric.argv, { cwd: repo, timeoutMs: metric.timeout_seconds * 1000 }),
  );
  if (!verdict.ok) {
    const last = verdict.last;
    const tail =
      last === undefined ? '' : `${last.stdout}\n${last.stderr}`.trim().split('\n').slice(-5).join('\n');
    throw new AppError(`The baseline could not be measured: ${verdict.reason}.`, {
      exitCode: ExitCode.failure,
      hint: `Fix the metric command or --score and run again; nothing was created.${tail === '' ? '' : `\nLast output:\n${tail}`}`,
    });
  }
  return {
    output: verdict.output,
    durationMs: verdict.durationMs,
    ...(verdict.tests === undefined ? {} : { tests: verdict.tests }),
  };
}

export async function recordHardBaseline(
  ctx: LoopContext,
  output: JudgeOutput,
  at: { head: string; now: string; durationMs: number; tracks: TrackValues },
): Promise<ArbiterSignal> {
  const { config, paths } = ctx;
  await writeJudgeOutput(ctx.files, paths.judgeOutput(0), output);
  const result = decide({
    config,
    ledger: [],
    iter: 0,
    judge: { ok: true, output },
    baseSha: at.head,
    now: at.now,
    durationMs: at.durationMs,
    hypothesis: '',
    samples: output.samples,
    tracks: at.tracks,
  });
  await recordLedgerLine(ctx.files, paths.ledger, result.line, {
    direction: config.metric.direction,
    target: config.target,
  });
  await writeArbiterSignal(ctx.files, paths.root, result.signal);
  return result.signal;
}
