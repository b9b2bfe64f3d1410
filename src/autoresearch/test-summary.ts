// How many tests a guard's run passed, as its test runner's summary says. A guard is an exit code, and
// an exit code says nothing of how many tests ran: a module the tests import that ends their process
// early, a test narrowed with `.only`, a runner named module by module that stops at an exit in an
// import (`python -m unittest tests.test_x`), each leaves the guard green with fewer tests run. The
// baseline's count is the floor; a passing guard that passed fewer, or printed no summary where the
// baseline printed one, ran less than it did. Pure.

/** Each runner's summary, with the number of tests it passed (or ran, where it says no more) in group 1. */
const SUMMARIES: readonly { runner: string; pattern: RegExp }[] = [
  // node --test: the spec reporter (U+2139, then `pass 5`) and TAP (`# pass 5`); tap's TAP too.
  { runner: 'node --test', pattern: /^(?:\u2139|#) pass (\d+)\s*$/gm },
  // mocha: `  5 passing (12ms)`.
  { runner: 'mocha', pattern: /^\s*(\d+) passing \(\d/gm },
  // jest (`Tests:       1 skipped, 4 passed, 5 total`) and vitest (`      Tests  4 passed (5)`).
  { runner: 'jest or vitest', pattern: /^\s*Tests:?\s+(?:[^\n]*?[,|]\s*)?(\d+) passed\b/gm },
  // pytest: `===== 5 passed, 1 skipped in 0.12s =====`, or `5 passed in 0.1s` with -q.
  { runner: 'pytest', pattern: /^=*\s*(?:\d+ \w+, )*(\d+) passed(?:, [^\n]*?)? in [\d.]+s\b/gm },
  // unittest: `Ran 5 tests in 0.001s`.
  { runner: 'unittest', pattern: /^Ran (\d+) tests? in /gm },
  // cargo test, once per test binary: `test result: ok. 5 passed; 0 failed; …`.
  { runner: 'cargo test', pattern: /^test result: \w+\. (\d+) passed;/gm },
  // RSpec `5 examples, 0 failures`; PHPUnit `OK (5 tests, 9 assertions)`; ava `5 tests passed`.
  { runner: 'rspec', pattern: /^(\d+) examples?, 0 failures\b/gm },
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
  for (const { pattern } of SUMMARIES) {
    for (const match of output.matchAll(pattern)) total = (total ?? 0) + Number(match[1]);
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
