// How many tests a run passed or ran, as its test runner's summary says. A guard is an exit code, and an
// exit code says nothing of how many tests ran: a module the tests import that ends their process
// early, a test narrowed with `.only`, a runner named module by module that stops at an exit in an
// import (`python -m unittest tests.test_x`), a failing test the code under test turns into a skip,
// each leaves the guard green with fewer tests run. The baseline's count is the floor; a passing guard
// that passed fewer, or printed no summary where the baseline printed one, ran less than it did. A test
// metric (an exit code, a pass rate) is held the same way to the tests its baseline ran (ranTests). Pure.

/** unittest's summary: `Ran 5 tests in 0.001s`, then `FAILED (failures=1, skipped=2)` or `OK`. */
const UNITTEST = /^Ran (\d+) tests? in [^\n]*\n+(?:(?:OK|FAILED)(?: \(([^)\n]*)\))?)?/gm;

/**
 * Each runner's summary, with the number of tests it passed (or ran, where it says no more) in group 1,
 * and where that number counts skipped tests too, what says how many (group 2, read with `skipped`).
 */
const SUMMARIES: readonly { runner: string; pattern: RegExp; skipped?: RegExp }[] = [
  // node --test: the spec reporter (U+2139, then `pass 5`) and TAP (`# pass 5`); tap's TAP too.
  { runner: 'node --test', pattern: /^(?:\u2139|#) pass (\d+)\s*$/gm },
  // mocha: `  5 passing (12ms)`.
  { runner: 'mocha', pattern: /^\s*(\d+) passing \(\d/gm },
  // jest (`Tests:       1 skipped, 4 passed, 5 total`) and vitest (`      Tests  4 passed (5)`).
  { runner: 'jest or vitest', pattern: /^\s*Tests:?\s+(?:[^\n]*?[,|]\s*)?(\d+) passed\b/gm },
  // pytest: `===== 5 passed, 1 skipped in 0.12s =====`, or `5 passed in 0.1s` with -q.
  { runner: 'pytest', pattern: /^=*\s*(?:\d+ \w+, )*(\d+) passed(?:, [^\n]*?)? in [\d.]+s\b/gm },
  // unittest: `Ran 5 tests in 0.001s`, then `OK (skipped=2)`: skipped tests are among those it ran.
  { runner: 'unittest', pattern: UNITTEST, skipped: /\bskipped=(\d+)/ },
  // cargo test, once per test binary: `test result: ok. 5 passed; 0 failed; …`.
  { runner: 'cargo test', pattern: /^test result: \w+\. (\d+) passed;/gm },
  // RSpec `5 examples, 0 failures`; PHPUnit `OK (5 tests, 9 assertions)`; ava `5 tests passed`.
  { runner: 'rspec', pattern: /^(\d+) examples?, 0 failures\b(?:, (\d+) pending)?/gm, skipped: /(\d+)/ },
  { runner: 'phpunit', pattern: /^OK \((\d+) tests?, /gm },
  { runner: 'ava', pattern: /^\s*(\d+) tests? passed\b/gm },
];

/** go test -v: one line per test that passed. */
const GO_PASS = /^\s*--- PASS: /gm;

/**
 * The tests `output` says passed, summed over every summary in it (a script may run two runners; cargo
 * prints one summary per test binary); undefined when it holds none this knows.
 */
export function passedTests(output: string): number | undefined {
  let total: number | undefined;
  for (const { pattern, skipped } of SUMMARIES) {
    for (const match of output.matchAll(pattern))
      total = (total ?? 0) + Number(match[1]) - (skipped === undefined ? 0 : named(match[2] ?? '', skipped));
  }
  const go = [...output.matchAll(GO_PASS)].length;
  return go > 0 ? (total ?? 0) + go : total;
}

/**
 * Why a guard that passed ran less than at the baseline, or undefined: it passed fewer tests than the
 * baseline's `floor`, or printed no summary where the baseline printed one.
 */
export function fewerTestsThanBaseline(
  name: string,
  passed: number | undefined,
  floor: number | undefined,
): string | undefined {
  if (floor === undefined || (passed !== undefined && passed >= floor)) return undefined;
  const now = passed === undefined ? 'printed no count of the tests it passed' : `passed ${passed} tests`;
  return `guard ${name} ${now} where the baseline passed ${floor}: a test that no longer runs passes nothing`;
}

/**
 * Flags that have a runner pick the tests by what changed or what failed last (`vitest --changed`,
 * `jest -o`, `pytest --lf`): such a guard runs fewer tests by design, so no count holds it.
 */
const SOME_TESTS = new Set([
  '--changed',
  'related',
  '--onlyChanged',
  '--changedSince',
  '--lastCommit',
  '--findRelatedTests',
  '--lf',
  '--last-failed',
  '--sw',
  '--stepwise',
  '--testmon',
  '--picked',
]);

/** Whether `argv` runs only the tests a change touches or the last run failed. */
export function runsSomeTests(argv: readonly string[]): boolean {
  const jest = argv.some((word) => /(?:^|\/)jest(?:\.js)?$/.test(word));
  return argv.some((word) => SOME_TESTS.has(word.split('=')[0] ?? '') || (jest && word === '-o'));
}

/** The numbers before `words` in `text`, summed (`2 failed, 3 passed` for passed|failed: 5). */
function sumOf(text: string, words: string): number {
  let sum = 0;
  for (const match of text.matchAll(new RegExp(`(\\d+):? (?:${words})\\b`, 'g'))) sum += Number(match[1]);
  return sum;
}

/** A named count in `text` (`skipped=2`, `Skipped: 2`), or 0. */
function named(text: string, pattern: RegExp): number {
  const match = pattern.exec(text);
  return match === null ? 0 : Number(match[1]);
}

/**
 * Each runner's summary, and the tests it says ran and passed or failed. Skipped tests are not counted,
 * where a runner counts them among the tests it ran (unittest, PHPUnit, RSpec): a failing test that the
 * code under test turned into a skip decided nothing.
 */
const RAN: readonly { runner: string; pattern: RegExp; ran: (match: RegExpMatchArray) => number }[] = [
  // node --test: `# pass 3` and `# fail 2` (TAP), or after U+2139 (spec).
  { runner: 'node --test', pattern: /^(?:\u2139|#) (?:pass|fail) (\d+)\s*$/gm, ran: (m) => Number(m[1]) },
  // mocha: `3 passing (12ms)` and `2 failing`.
  { runner: 'mocha', pattern: /^\s*(\d+) (?:passing \(\d|failing\b)/gm, ran: (m) => Number(m[1]) },
  // jest `Tests: 1 failed, 1 skipped, 4 passed, 6 total`; vitest `Tests  2 failed | 4 passed (6)`.
  {
    runner: 'jest or vitest',
    pattern: /^\s*Tests:?\s+([^\n]*\d (?:passed|failed)\b[^\n]*)$/gm,
    ran: (m) => sumOf(m[1] ?? '', 'passed|failed'),
  },
  // pytest: `===== 2 failed, 3 passed, 1 error in 0.12s =====` (not `Compiled 12 modules in 1.2s`).
  {
    runner: 'pytest',
    pattern: /^=*\s*((?:\d+ \w+, )*\d+ \w+) in [\d.]+s\b(?<=\b(?:passed|failed|errors?)\b[^\n]*)/gm,
    ran: (m) => sumOf(m[1] ?? '', 'passed|failed|errors?'),
  },
  // unittest: `Ran 5 tests in 0.001s`, then `FAILED (failures=1, skipped=2)` or `OK (skipped=2)`.
  {
    runner: 'unittest',
    pattern: UNITTEST,
    ran: (m) => Number(m[1]) - named(m[2] ?? '', /\bskipped=(\d+)/),
  },
  // cargo test, once per test binary: `test result: FAILED. 3 passed; 2 failed; 1 ignored; …`.
  {
    runner: 'cargo test',
    pattern: /^test result: \w+\. (\d+) passed; (\d+) failed;/gm,
    ran: (m) => Number(m[1]) + Number(m[2]),
  },
  // RSpec: `5 examples, 1 failure, 2 pending`.
  {
    runner: 'rspec',
    pattern: /^(\d+) examples?, \d+ failures?(, (\d+) pending)?/gm,
    ran: (m) => Number(m[1]) - Number(m[3] ?? 0),
  },
  // PHPUnit: `OK (5 tests, 9 assertions)`, or `Tests: 5, Assertions: 9, Failures: 1, Skipped: 2.`
  {
    runner: 'phpunit',
    pattern: /^(?:OK \((\d+) tests?, |Tests: (\d+), Assertions: ([^\n]*))/gm,
    ran: (m) => Number(m[1] ?? m[2]) - named(m[3] ?? '', /\b(?:Skipped|Incomplete): (\d+)/),
  },
  // ava: `3 tests passed`, `2 tests failed`.
  { runner: 'ava', pattern: /^\s*(\d+) tests? (?:passed|failed)\b/gm, ran: (m) => Number(m[1]) },
];

/** go test -v: one line per test that passed or failed. */
const GO_RAN = /^\s*--- (?:PASS|FAIL): /gm;

/**
 * The tests `output` says ran and passed or failed, summed over every summary in it; undefined when it
 * holds none this knows. A test metric's score (an exit code, a pass rate) says something only over as
 * many tests as the baseline ran: code under test that ends a test file early, or turns its failing
 * tests into skips, leaves fewer.
 */
export function ranTests(output: string): number | undefined {
  let total: number | undefined;
  for (const { pattern, ran } of RAN) {
    for (const match of output.matchAll(pattern)) total = (total ?? 0) + ran(match);
  }
  const go = [...output.matchAll(GO_RAN)].length;
  return go > 0 ? (total ?? 0) + go : total;
}
