// What a test report counted: passes, failures, skips and TODOs, and the rules shared by TAP and JUnit.

/** Skipped and TODO tests are neither passes nor failures: the score is passed / (passed + failed). */
export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
  todo: number;
}

export type Counted = { ok: true; counts: TestCounts } | { ok: false; reason: string };

function emptyCounts(): TestCounts {
  return { passed: 0, failed: 0, skipped: 0, todo: 0 };
}

export type Outcome = keyof TestCounts;

export function tally(outcomes: readonly Outcome[]): TestCounts {
  const counts = emptyCounts();
  for (const outcome of outcomes) counts[outcome] += 1;
  return counts;
}

/**
 * A test point or test case that stands for a whole test file which reported none of its own tests:
 * node --test names it by absolute path (the file crashed or exited early), vitest by relative path (it
 * failed to load). Counting it as one result would hide every test in that file.
 */
export function looksLikeTestFile(name: string): boolean {
  return /^\S+\.[cm]?[jt]sx?$/.test(name) && /[\\/]|[._-](?:test|spec)\./.test(name);
}
