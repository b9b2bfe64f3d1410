// How many tests a run passed, from its runner's summary (src/autoresearch/test-summary.ts), as each
// runner prints it here or in its documented shape; and the rule that holds a guard to its baseline.
import { describe, expect, it } from 'vitest';
import {
  fewerTestsThanBaseline,
  passedTests,
  ranTests,
  runsSomeTests,
} from '../../src/autoresearch/test-summary.js';

describe('passedTests', () => {
  it.each([
    // Printed on this machine: Node 20 (TAP when not a terminal, the spec reporter in one), mocha 11,
    // Python 3.11's unittest and pytest.
    ['node --test, TAP', '1..2\n# tests 2\n# suites 0\n# pass 2\n# fail 0\n# skipped 0\n', 2],
    ['node --test, spec', 'ℹ tests 4\nℹ pass 4\nℹ fail 0\n', 4],
    ['mocha', '\n  2 passing (2ms)\n  1 pending\n', 2],
    [
      'unittest',
      '..\n----------------------------------------------------------------------\nRan 2 tests in 0.000s\n\nOK\n',
      2,
    ],
    ['pytest', '============================== 2 passed in 0.60s ===============================\n', 2],
    ['pytest -q', '2 passed, 1 skipped in 0.54s\n', 2],
    ['jest', 'Tests:       1 skipped, 4 passed, 5 total\n', 4],
    ['vitest', '      Tests  4 passed | 1 skipped (5)\n', 4],
    [
      'cargo test, two binaries',
      'test result: ok. 3 passed; 0 failed; 1 ignored;\ntest result: ok. 2 passed; 0 failed;\n',
      5,
    ],
    ['rspec', '5 examples, 0 failures\n', 5],
    ['phpunit', 'OK (6 tests, 9 assertions)\n', 6],
    ['ava', '  3 tests passed\n', 3],
    [
      'go test -v',
      '=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- PASS: TestB (0.00s)\nok  \tpkg\t0.01s\n',
      2,
    ],
    ['two runners in one script', '  2 passing (2ms)\nRan 3 tests in 0.001s\n', 5],
    // unittest counts a skipped test among those it ran; a skip passed nothing.
    ['unittest, two skipped', 'Ran 4 tests in 0.001s\n\nOK (skipped=2)\n', 2],
    ['rspec, one pending', '5 examples, 0 failures, 1 pending\n', 4],
  ])('%s', (_runner, output, passed) => {
    expect(passedTests(output)).toBe(passed);
  });

  it('knows none in output that holds no summary', () => {
    expect(passedTests('')).toBeUndefined();
    expect(passedTests('ok  \tpkg\t0.01s\nall good\n2 passing cars\n')).toBeUndefined();
  });
});

describe('ranTests', () => {
  it.each([
    // Printed on this machine (Node 20, Python 3.11's unittest, pytest 9): a pass, a failure, an
    // error and a skip.
    ['node --test, TAP', '1..3\n# tests 3\n# suites 0\n# pass 1\n# fail 1\n# cancelled 0\n# skipped 1\n', 2],
    [
      'unittest',
      '----------------------------------------------------------------------\nRan 4 tests in 0.001s\n\nFAILED (failures=1, errors=1, skipped=1)\n',
      3,
    ],
    ['unittest, all passed', 'Ran 2 tests in 0.000s\n\nOK\n', 2],
    [
      'pytest -q',
      'FAILED test_x.py::T::test_d - RuntimeError: boom\n2 failed, 1 passed, 1 skipped in 0.69s\n',
      3,
    ],
    // The runners' documented shapes.
    ['pytest, an error', '======== 1 failed, 2 passed, 1 error in 0.12s ========\n', 4],
    ['node --test, spec', 'ℹ tests 5\nℹ pass 3\nℹ fail 1\nℹ skipped 1\n', 4],
    ['mocha', '  3 passing (9ms)\n  1 pending\n  2 failing\n', 5],
    ['jest', 'Tests:       1 failed, 1 skipped, 4 passed, 6 total\n', 5],
    ['vitest', '      Tests  2 failed | 4 passed | 1 skipped (7)\n', 6],
    ['cargo test', 'test result: FAILED. 3 passed; 2 failed; 1 ignored; 0 measured;\n', 5],
    ['rspec', '7 examples, 2 failures, 1 pending\n', 6],
    ['phpunit, passing', 'OK (6 tests, 9 assertions)\n', 6],
    ['phpunit, failing', 'FAILURES!\nTests: 6, Assertions: 9, Failures: 1, Skipped: 2.\n', 4],
    ['ava', '  3 tests passed\n  1 test failed\n', 4],
    ['go test -v', '--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.00s)\nFAIL\tpkg\t0.01s\n', 2],
  ])('%s', (_runner, output, ran) => {
    expect(ranTests(output)).toBe(ran);
  });

  it('knows none in output that holds no summary', () => {
    expect(ranTests('')).toBeUndefined();
    expect(ranTests('3 passing cars\nall good\n')).toBeUndefined();
    // Another tool's line in pytest's shape counts no tests: an exit-code metric that prints it has no floor.
    expect(ranTests('3 warnings in 0.2s\n')).toBeUndefined();
  });
});

describe('fewerTestsThanBaseline', () => {
  it('holds a guard to the count its baseline passed, when there was one', () => {
    expect(fewerTestsThanBaseline('unit', 5, 5)).toBeUndefined();
    expect(fewerTestsThanBaseline('unit', 6, 5)).toBeUndefined();
    expect(fewerTestsThanBaseline('unit', 4, undefined)).toBeUndefined();
    expect(fewerTestsThanBaseline('unit', undefined, undefined)).toBeUndefined();
    expect(fewerTestsThanBaseline('unit', 4, 5)).toBe(
      'guard unit passed 4 tests where the baseline passed 5: a test that no longer runs passes nothing',
    );
    expect(fewerTestsThanBaseline('unit', undefined, 5)).toContain('printed no count of the tests it passed');
  });
});

describe('runsSomeTests', () => {
  it('knows a guard that picks its tests by what changed or failed last', () => {
    expect(runsSomeTests(['npx', 'vitest', 'run', '--changed'])).toBe(true);
    expect(runsSomeTests(['npx', 'vitest', 'related', 'src/a.ts'])).toBe(true);
    expect(runsSomeTests(['npx', 'jest', '-o'])).toBe(true);
    expect(runsSomeTests(['node_modules/.bin/jest', '--changedSince=main'])).toBe(true);
    expect(runsSomeTests(['python3', '-m', 'pytest', '--lf'])).toBe(true);
    expect(runsSomeTests(['npm', 'test'])).toBe(false);
    expect(runsSomeTests(['python3', '-m', 'pytest', '-k', 'fast'])).toBe(false);
    // `-o` is jest's only under jest (pytest's sets an ini option).
    expect(runsSomeTests(['python3', '-m', 'pytest', '-o', 'addopts='])).toBe(false);
  });
});
