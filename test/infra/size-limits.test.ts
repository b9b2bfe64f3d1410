import { describe, expect, it } from 'vitest';
import { parseLoopConfig } from '../../src/autoresearch/config.js';
import {
  DEFAULT_MAX_FILE_BYTES,
  describeOverLimits,
  formatSize,
  overFileCount,
  overLimits,
  parseSize,
} from '../../src/infra/size-limits.js';

describe('overLimits', () => {
  const files = new Map([
    ['src/a', 600],
    ['src/b', 500],
    ['src/c', 300],
    ['src/d', 300],
    ['src/huge', 5000],
  ]);

  it('takes every file over the file limit, then the largest until the rest fits the change limit', () => {
    expect(overLimits(files, { file: 1000, total: 1000, files: 0 })).toEqual([
      { path: 'src/a', size: 600, limit: 'total' },
      { path: 'src/b', size: 500, limit: 'total' },
      { path: 'src/huge', size: 5000, limit: 'file' },
    ]);
    expect(overLimits(files, { file: 0, total: 6400, files: 0 }).map((o) => o.path)).toEqual(['src/huge']);
    // Ties go by name: of two 300-byte files, the first.
    const tied = new Map([
      ['d', 300],
      ['c', 300],
      ['e', 100],
    ]);
    expect(overLimits(tied, { file: 0, total: 400, files: 0 }).map((o) => o.path)).toEqual(['c']);
  });

  it('takes nothing at 0 (no limit) or within the limits', () => {
    expect(overLimits(files, { file: 0, total: 0, files: 0 })).toEqual([]);
    expect(overLimits(files, { file: 5000, total: 6700, files: 0 })).toEqual([]);
  });
});

describe('overFileCount', () => {
  const limits = { file: 0, total: 0, files: 3 };

  it('takes every path of a change of more files than the limit, in order, deletions too', () => {
    expect(overFileCount(['d', 'b', 'a', 'c'], limits)).toEqual(
      ['a', 'b', 'c', 'd'].map((path) => ({ path, size: 4, limit: 'files' })),
    );
  });

  it('takes none at the limit, or with no limit (0)', () => {
    expect(overFileCount(['a', 'b', 'c'], limits)).toEqual([]);
    expect(overFileCount(['a', 'b', 'c', 'd'], { ...limits, files: 0 })).toEqual([]);
  });

  it('names how many and the first five', () => {
    const paths = Array.from({ length: 12_345 }, (_, k) => `gen/${String(k).padStart(5, '0')}`);
    const many = { ...limits, files: 10_000 };
    expect(describeOverLimits(overFileCount(paths, many), many)).toBe(
      '12,345 changed files (gen/00000, gen/00001, gen/00002, gen/00003, gen/00004, 12,340 more), over 10,000 files a change',
    );
  });
});

describe('sizes as people write them', () => {
  it('reads binary units and plain bytes, and refuses the rest', () => {
    expect(parseSize('100M')).toBe(100 * 2 ** 20);
    expect(parseSize('1.5g')).toBe(1.5 * 2 ** 30);
    expect(parseSize('2GiB')).toBe(2 ** 31);
    expect(parseSize('500kb')).toBe(500 * 1024);
    expect(parseSize('12')).toBe(12);
    expect(parseSize('12b')).toBe(12);
    for (const bad of ['', 'M', '-1M', '1e3', '1 parsec', '9999999T'])
      expect(parseSize(bad), bad).toBeUndefined();
  });

  it('writes them back the short way', () => {
    expect(formatSize(12)).toBe('12 B');
    expect(formatSize(1536)).toBe('1.5 KiB');
    expect(formatSize(DEFAULT_MAX_FILE_BYTES)).toBe('100 MiB');
    expect(formatSize(3 * 2 ** 30)).toBe('3 GiB');
    expect(
      describeOverLimits(
        [
          { path: 'a', size: 2048, limit: 'file' },
          { path: 'b', size: 4096, limit: 'total' },
        ],
        { file: 1024, total: 3000, files: 0 },
      ),
    ).toBe('a (2 KiB, over 1 KiB a file), b (4 KiB, over 2.9 KiB for the whole change)');
  });
});

describe("a loop's size limits", () => {
  const config = (scope: object) =>
    parseLoopConfig(
      {
        subject: 's',
        epic_id: 'bd-1',
        metric: { type: 'hard', command: 'true', score: { from: 'exit-code' }, direction: 'maximize' },
        scope: { doer_paths: ['src/'], ...scope },
      },
      'config.json',
    );

  it('default to 100 MiB a file, 1 GiB a change and 10,000 files a change', () => {
    expect(config({}).scope).toMatchObject({
      max_file_bytes: 100 * 2 ** 20,
      max_change_bytes: 2 ** 30,
      max_change_files: 10_000,
    });
  });

  it('refuse what is not a whole number of bytes, naming the field', () => {
    expect(() => config({ max_file_bytes: '100M' })).toThrow(/scope\.max_file_bytes/);
    expect(() => config({ max_change_bytes: -1 })).toThrow(/scope\.max_change_bytes/);
    expect(() => config({ max_change_files: 1.5 })).toThrow(/scope\.max_change_files/);
  });
});
