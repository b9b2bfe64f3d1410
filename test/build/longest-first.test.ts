// The order test files are handed to vitest's workers (test/support/longest-first.ts).
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  durationsFromReport,
  longestFirst,
  readDurations,
  refreshDurations,
  ROOT as REPO_ROOT,
} from '../support/longest-first.js';

const ROOT = '/repo';
const spec = (path: string) => ({ moduleId: `${ROOT}/${path}` });
const order = (specs: { moduleId: string }[]) => specs.map((s) => s.moduleId.slice(ROOT.length + 1));

describe('longest test file first', () => {
  it('orders files by their recorded time, longest first, across projects', () => {
    const durations = {
      'test/e2e-claude/agents.test.ts': 70,
      'test/unit/small.test.ts': 0.2,
      'test/e2e/process.test.ts': 25,
      'test/unit/medium.test.ts': 3,
    };
    const specs = [
      spec('test/unit/small.test.ts'),
      spec('test/unit/medium.test.ts'),
      spec('test/e2e/process.test.ts'),
      spec('test/e2e-claude/agents.test.ts'),
    ];
    expect(order(longestFirst(specs, durations, ROOT))).toEqual([
      'test/e2e-claude/agents.test.ts',
      'test/e2e/process.test.ts',
      'test/unit/medium.test.ts',
      'test/unit/small.test.ts',
    ]);
  });

  it('puts a file the table does not know first, and breaks ties by path', () => {
    const durations = { 'test/a.test.ts': 5, 'test/b.test.ts': 5, 'test/c.test.ts': 9 };
    const specs = [
      spec('test/b.test.ts'),
      spec('test/new.test.ts'),
      spec('test/a.test.ts'),
      spec('test/c.test.ts'),
    ];
    expect(order(longestFirst(specs, durations, ROOT))).toEqual([
      'test/new.test.ts',
      'test/c.test.ts',
      'test/a.test.ts',
      'test/b.test.ts',
    ]);
  });

  it('makes the table from a JSON report, and reads back what it wrote; a broken table is empty', async () => {
    const report = {
      testResults: [
        { name: `${ROOT}/test/quick.test.ts`, startTime: 1000, endTime: 1240 },
        { name: `${ROOT}/test/slow.test.ts`, startTime: 1000, endTime: 43_960 },
        // Another checkout's file (a report copied from a clone): no key of this one.
        { name: '/tmp/ci-clone/test/slow.test.ts', startTime: 1000, endTime: 90_000 },
      ],
    };
    const table = durationsFromReport(report, ROOT);
    expect(Object.entries(table)).toEqual([
      ['test/slow.test.ts', 43],
      ['test/quick.test.ts', 0.2],
    ]);
    // Read from that clone's report (`npm run test:durations -- /tmp/ci-clone/test-results.json`), its
    // files are keyed under the clone, and this checkout's are the strangers.
    expect(durationsFromReport(report, '/tmp/ci-clone')).toEqual({ 'test/slow.test.ts': 89 });

    const dir = await mkdtemp(join(tmpdir(), 'forge-durations-'));
    try {
      const file = join(dir, 'file-durations.json');
      await writeFile(file, JSON.stringify(table));
      expect(readDurations(file)).toEqual(table);
      await writeFile(file, '{"test/a.test.ts": 3, "test/b.test.ts": "slow"');
      expect(readDurations(file)).toEqual({});
      await writeFile(file, '{"test/a.test.ts": 3, "test/b.test.ts": "slow"}');
      expect(readDurations(file)).toEqual({ 'test/a.test.ts': 3 });
      expect(readDurations(join(dir, 'missing.json'))).toEqual({});
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refreshes the table from a clean clone's report: its files keyed under the clone, those this checkout lacks left out; a bad report leaves the table", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-durations-'));
    try {
      const clone = join(dir, 'ci-clone');
      const checkout = join(dir, 'main');
      await mkdir(join(checkout, 'test'), { recursive: true });
      await writeFile(join(checkout, 'test', 'slow.test.ts'), '');
      await writeFile(join(checkout, 'test', 'quick.test.ts'), '');
      await mkdir(clone);
      const report = join(clone, 'test-results.json');
      await writeFile(
        report,
        JSON.stringify({
          testResults: [
            { name: join(clone, 'test', 'quick.test.ts'), startTime: 0, endTime: 1_500 },
            { name: join(clone, 'test', 'slow.test.ts'), startTime: 0, endTime: 60_000 },
            // Only in the clone (a file this checkout deleted since), and one of neither.
            { name: join(clone, 'test', 'gone.test.ts'), startTime: 0, endTime: 9_000 },
            { name: join(checkout, 'test', 'slow.test.ts'), startTime: 0, endTime: 99_000 },
          ],
        }),
      );
      const table = join(checkout, 'file-durations.json');
      expect(await refreshDurations(report, table, checkout)).toEqual({
        written: 2,
        leftOut: ['test/gone.test.ts'],
      });
      const written = await readFile(table, 'utf8');
      expect(JSON.parse(written)).toEqual({ 'test/slow.test.ts': 60, 'test/quick.test.ts': 1.5 });

      await writeFile(report, '{"testResults": [');
      await expect(refreshDurations(report, table, checkout)).rejects.toThrow(/JSON/);
      await writeFile(report, JSON.stringify({ testResults: [] }));
      await expect(refreshDurations(report, table, checkout)).rejects.toThrow(/holds no test file/);
      expect(await readFile(table, 'utf8')).toBe(written);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the committed table names only test files that exist', () => {
    const table = readDurations();
    expect(Object.keys(table).length).toBeGreaterThan(100);
    const gone = Object.keys(table).filter((path) => !existsSync(join(REPO_ROOT, path)));
    expect(gone, 'run `npm test` and `npm run test:durations` to refresh the table').toEqual([]);
  });
});
