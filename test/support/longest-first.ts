// The order vitest hands test files to its workers: the longest first, whatever their project, from the
// times recorded in test/support/file-durations.json (`npm run test:durations` rewrites it from the
// last run's test-results.json).
//
// vitest's own order runs the projects one after another, and on a clean clone (CI: no results cache)
// sorts each by file size; so the real-CLI files of e2e-claude, the longest (70 s each), started last
// and ended the run alone. Longest first is the usual greedy schedule for a pool: the long files
// start at once and the short ones fill in around them. A file the table does not know yet goes
// first, as vitest does with one it has no result for: it may be long, and a new test fails early.
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { writeFileAtomic } from '../../src/infra/atomic-file.js';

/** The repository's root: test file paths in the table are relative to it. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DURATIONS_FILE = join(ROOT, 'test', 'support', 'file-durations.json');

/** Seconds per test file (POSIX path from the repository root), longest first. */
export type FileDurations = Record<string, number>;

export function readDurations(file = DURATIONS_FILE): FileDurations {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
    );
  } catch {
    // No table, or a broken one: every file is unknown, and the run is still whole, in path order.
    return {};
  }
}

function key(root: string, moduleId: string): string {
  return relative(root, moduleId).split('\\').join('/');
}

/** `specs` longest first by `durations`; unknown files before all known ones; ties by path. */
export function longestFirst<T extends Pick<TestSpecification, 'moduleId'>>(
  specs: readonly T[],
  durations: FileDurations,
  root = ROOT,
): T[] {
  const weight = (spec: T) => durations[key(root, spec.moduleId)] ?? Number.POSITIVE_INFINITY;
  return [...specs].sort((a, b) => {
    const wa = weight(a);
    const wb = weight(b);
    if (wa !== wb) return wb > wa ? 1 : -1;
    return a.moduleId < b.moduleId ? -1 : a.moduleId > b.moduleId ? 1 : 0;
  });
}

export default class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return Promise.resolve(longestFirst(files, readDurations()));
  }
}

/** The table a run's JSON report (vitest's `--reporter=json`) gives: seconds per file, longest first. */
export function durationsFromReport(
  report: { testResults: { name: string; startTime: number; endTime: number }[] },
  root = ROOT,
): FileDurations {
  const rows = report.testResults
    .map((file) => [key(root, file.name), Math.round((file.endTime - file.startTime) / 100) / 10] as const)
    // A file of another checkout (a report copied from a clone) names no file the sequencer will see.
    .filter(
      ([path, seconds]) =>
        !path.startsWith('../') && !isAbsolute(path) && Number.isFinite(seconds) && seconds >= 0,
    );
  rows.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return Object.fromEntries(rows);
}

/**
 * Rewrites the table at `table` from the JSON report at `reportPath` (`npm run test:durations`). The
 * report's files are read relative to its own directory, the checkout whose `npm test` wrote it (a clean
 * clone's, for CI's times); those `root` does not have are left out, so the table names only files that
 * exist. Throws when the report cannot be read or names no test file; the table is then as it was.
 */
export async function refreshDurations(
  reportPath: string,
  table = DURATIONS_FILE,
  root = ROOT,
): Promise<{ written: number; leftOut: string[] }> {
  const report = JSON.parse(await readFile(reportPath, 'utf8')) as Parameters<typeof durationsFromReport>[0];
  const durations = durationsFromReport(report, dirname(reportPath));
  if (Object.keys(durations).length === 0) throw new Error(`${reportPath} holds no test file`);
  const leftOut = Object.keys(durations).filter((path) => !existsSync(join(root, path)));
  for (const path of leftOut) delete durations[path];
  await writeFileAtomic(table, `${JSON.stringify(durations, null, 2)}\n`);
  return { written: Object.keys(durations).length, leftOut };
}
