// Repeated measurements: the median scored, the spread recorded, the noise band that decides a keep.
import { describe, expect, it } from 'vitest';
import { median, needsRemeasure, noiseBand, noiseVerdict, spread } from '../../src/autoresearch/noise.js';

describe('median and spread', () => {
  it.each([
    [[7], 7, 0],
    [[3, 1, 2], 2, 2],
    [[4, 1, 3, 2], 2.5, 3],
    [[0.1, 0.2, 0.3], 0.2, 0.2],
    [[5, 5, 5], 5, 0],
    [[-2, 10, 1, 1, 3], 1, 12],
  ])('%j: median %d, spread %d', (samples, mid, range) => {
    expect(median(samples)).toBe(mid);
    expect(spread(samples)).toBe(range);
  });

  it('refuses to take the median of nothing', () => {
    expect(() => median([])).toThrow(/no samples/);
  });
});

describe('noise band', () => {
  it('is half the best kept score’s spread plus half the candidate’s', () => {
    expect(noiseBand([9, 10, 11], [10, 12, 14])).toBe(3);
    expect(noiseBand(undefined, [10, 12, 14])).toBe(2);
    expect(noiseBand([10], [10])).toBe(0);
  });

  const base = { best: 10, bestSamples: [9, 10, 11], samples: [10, 11, 12], minDelta: 0 } as const;
  it.each([
    // score, direction, band, within
    [11, 'maximize', 2, true], // gain 1 ≤ band 2
    [12, 'maximize', 2, true], // gain exactly the band: still noise
    [12.5, 'maximize', 2, false], // gain 2.5 > 2: real
    [9, 'maximize', 2, false], // not an improvement at all: a plain revert, not "within the noise"
    [9, 'minimize', 2, true], // lower is better: gain 1
    [7.5, 'minimize', 2, false],
  ] as const)('score %d (%s): band ±%d, within %s', (score, direction, band, within) => {
    expect(noiseVerdict({ ...base, score, direction })).toEqual({ band, within });
    expect(needsRemeasure({ ...base, score, direction })).toBe(within);
  });

  it('says nothing without noise (one sample each) or without a best, so the usual rule decides', () => {
    expect(
      noiseVerdict({ ...base, bestSamples: [10], samples: [11], score: 11, direction: 'maximize' }),
    ).toBe(undefined);
    expect(noiseVerdict({ ...base, best: null, score: 11, direction: 'maximize' })).toBe(undefined);
  });

  it('never calls within the noise what min_delta already refuses', () => {
    expect(noiseVerdict({ ...base, minDelta: 1.5, score: 11, direction: 'maximize' })).toEqual({
      band: 2,
      within: false,
    });
  });
});
