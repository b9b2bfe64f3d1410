// The arbiter's decision over repeated measurements: samples recorded, gains within the noise not kept.
import { describe, expect, it } from 'vitest';
import { decide, type ArbiterConfig, type DecideInput } from '../../src/autoresearch/arbiter.js';
import type { LedgerLine } from '../../src/autoresearch/ledger.js';
import { median } from '../../src/autoresearch/noise.js';

const config: ArbiterConfig = {
  metric: { direction: 'maximize' },
  target: null,
  min_delta: 0,
  confirmation_rounds: 1,
  caps: { max_iterations: 0, wall_clock_seconds: 0, plateau_threshold: 0, max_cost_usd: 0 },
};

function step(ledger: LedgerLine[], samples: number[], extra: Partial<DecideInput> = {}) {
  const iter = ledger.length;
  const result = decide({
    config,
    ledger,
    iter,
    judge: { ok: true, output: { score: median(samples), findings: [], samples } },
    samples,
    baseSha: `base-${iter}`,
    now: `2026-01-01T00:00:0${iter}Z`,
    ...extra,
  });
  ledger.push({ ...result.line, sha: result.line.sha ?? `sha-${iter}` });
  return result;
}

describe('decide with repeated measurements', () => {
  it('records the samples and their spread, and reverts a gain within the noise band', () => {
    const ledger: LedgerLine[] = [];
    const base = step(ledger, [9, 10, 11]);
    expect(base.line).toMatchObject({
      decision: 'baseline',
      score_after: 10,
      samples: [9, 10, 11],
      spread: 2,
    });
    expect(base.line.noise_band).toBeUndefined();
    expect(base.summary.best_samples).toEqual([9, 10, 11]);

    const lucky = step(ledger, [10, 11, 12]);
    expect(lucky.decision).toBe('revert');
    expect(lucky.line).toMatchObject({ score_after: 11, best_after: 10, delta: 1, spread: 2, noise_band: 2 });
    expect(lucky.line.reason).toBe('within the noise band ±2 of the best kept score 10');
    expect(lucky.summary.best_score).toBe(10);
    expect(lucky.summary.non_improvement_streak).toBe(1);

    const real = step(ledger, [19, 20, 21]);
    expect(real.decision).toBe('keep');
    expect(real.line).toMatchObject({ score_after: 20, best_after: 20, noise_band: 2 });
    expect(real.summary.best_samples).toEqual([19, 20, 21]);
  });

  it('says when the gain was still within the noise after measuring again', () => {
    const ledger: LedgerLine[] = [];
    step(ledger, [9, 10, 11]);
    const again = step(ledger, [10, 11, 12, 10, 11, 12], { remeasured: true });
    expect(again.decision).toBe('revert');
    expect(again.line.reason).toBe(
      'within the noise band ±2 of the best kept score 10, also after measuring again (median of 6 samples)',
    );
    expect(again.line.samples).toHaveLength(6);
  });

  it('keeps a pooled median that clears the band', () => {
    const ledger: LedgerLine[] = [];
    step(ledger, [9, 10, 11]);
    const kept = step(ledger, [12, 12.5, 13, 12.5, 13, 13], { remeasured: true });
    expect(kept.decision).toBe('keep');
    expect(kept.line).toMatchObject({ score_after: 12.75, noise_band: 1.5 });
    expect(kept.line.reason).toBeUndefined();
  });

  it('with one sample records nothing new: the line is what it was before --repeat existed', () => {
    const ledger: LedgerLine[] = [];
    step(ledger, [10]);
    const one = step(ledger, [10.5]);
    expect(one.decision).toBe('keep');
    expect(Object.keys(one.line)).not.toContain('samples');
    expect(Object.keys(one.line)).not.toContain('spread');
    expect(Object.keys(one.line)).not.toContain('noise_band');
    expect(one.summary.best_samples).toBeUndefined();
  });
});
