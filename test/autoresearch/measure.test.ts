// Measuring a hard metric against the tests its baseline counted (src/autoresearch/measure.ts): a run
// of a test metric that counts fewer tests than the baseline gives no score, whatever its pass rate.
import { describe, expect, it } from 'vitest';
import { fewerThanBaseline, measureHardMetric } from '../../src/autoresearch/measure.js';
import type { ProcessResult } from '../../src/infra/process.js';
import { processResult } from '../support/process-result.js';

const run = (stdout: string, exitCode = 0): ProcessResult => processResult({ stdout, exitCode });

/** TAP of `passed` passing and `failed` failing tests, and `skipped` skipped ones. */
function tap(passed: number, failed: number, skipped = 0): string {
  const points = [
    ...Array.from({ length: passed }, () => 'ok'),
    ...Array.from({ length: failed }, () => 'not ok'),
    ...Array.from({ length: skipped }, () => 'ok # SKIP'),
  ].map((point, i) => point.replace(/^(ok|not ok)/, `$1 ${i + 1} - t${i + 1}`));
  return `1..${points.length}\n${points.join('\n')}\n`;
}

const metric = { score: { from: 'tap' as const }, timeout_seconds: 60 };

function runs(...outputs: ProcessResult[]): () => Promise<ProcessResult> {
  let next = 0;
  return () => Promise.resolve(outputs[Math.min(next++, outputs.length - 1)] as ProcessResult);
}

describe('measureHardMetric with the baseline count', () => {
  it('reports the tests the run counted, for setup to keep', async () => {
    const measured = await measureHardMetric(metric, 1, runs(run(tap(1, 2), 1)));
    expect(measured).toMatchObject({ ok: true, tests: 3 });
  });

  it('a run whose failing tests became skips gives no score, however high its rate', async () => {
    const measured = await measureHardMetric(metric, 1, runs(run(tap(1, 0, 2))), 3);
    expect(measured).toMatchObject({ ok: false, aborted: false });
    expect(!measured.ok && measured.reason).toBe(
      "the metric's run counted 1 test that passed or failed, where the baseline's counted 3: a test that is skipped or no longer runs is no score",
    );
  });

  it('as many tests or more is scored', async () => {
    expect(await measureHardMetric(metric, 1, runs(run(tap(3, 0))), 3)).toMatchObject({ ok: true, tests: 3 });
    expect(await measureHardMetric(metric, 1, runs(run(tap(3, 1), 1)), 3)).toMatchObject({
      ok: true,
      tests: 4,
    });
  });

  it('an exit-code metric that printed no summary where the baseline did gives no score', async () => {
    const exitCode = { score: { from: 'exit-code' as const }, timeout_seconds: 60 };
    const measured = await measureHardMetric(exitCode, 1, runs(run('')), 2);
    expect(!measured.ok && measured.reason).toContain('counted no tests that passed or failed');
    expect(await measureHardMetric(exitCode, 1, runs(run('')))).toMatchObject({ ok: true });
  });

  it('holds every run of a repeated metric, and keeps the fewest', async () => {
    const second = await measureHardMetric(metric, 3, runs(run(tap(3, 0)), run(tap(2, 0, 1))), 3);
    expect(!second.ok && second.reason).toMatch(/^run 2 of 3: the metric's run counted 2 tests/);
    const fewest = await measureHardMetric(metric, 2, runs(run(tap(4, 0)), run(tap(3, 0))));
    expect(fewest).toMatchObject({ ok: true, tests: 3 });
  });
});

describe('fewerThanBaseline', () => {
  it('holds nothing without a floor', () => {
    expect(fewerThanBaseline(undefined, undefined)).toBeUndefined();
    expect(fewerThanBaseline(0, undefined)).toBeUndefined();
    expect(fewerThanBaseline(5, 5)).toBeUndefined();
    expect(fewerThanBaseline(4, 5)).toContain('counted 4 tests');
  });
});
