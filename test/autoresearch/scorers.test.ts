// Hard-metric scorers on output captured from real runners, and on the streams doers crash them into.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ScoreSource } from '../../src/autoresearch/config.js';
import { extractScore } from '../../src/autoresearch/scorers.js';
import type { ProcessResult } from '../../src/infra/process.js';
import { processResult } from '../support/process-result.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'scorers');

const fixtureSchema = z.object({
  file: z.string(),
  runner: z.string(),
  command: z.string(),
  exitCode: z.number().int(),
  score: z.discriminatedUnion('from', [
    z.object({ from: z.literal('tap') }),
    z.object({ from: z.literal('junit') }),
    z.object({ from: z.literal('json'), path: z.string() }),
    z.object({ from: z.literal('regex'), pattern: z.string() }),
  ]),
  expect: z.union([z.object({ score: z.number(), evidence: z.string() }), z.object({ crash: z.string() })]),
});

const fixtures = z.array(fixtureSchema).parse(JSON.parse(readFileSync(join(FIXTURES, 'index.json'), 'utf8')));

const result = (stdout: string, exitCode: number): ProcessResult => processResult({ stdout, exitCode });

function score(source: ScoreSource, stdout: string, exitCode = 0) {
  return extractScore(source, result(stdout, exitCode));
}

describe('scorers on captured runner output', () => {
  it('covers a passing, failing, crashing and empty run of every runner', () => {
    const runs = new Map<string, Set<string>>();
    for (const fixture of fixtures) {
      const [, runner = '', run = ''] =
        /^(.+?)-(pass|fail|crash|exit|midthrow|empty)(?:-[\w-]+)?\.\w+$/.exec(fixture.file) ?? [];
      runs.set(runner, (runs.get(runner) ?? new Set()).add(run));
    }
    expect([...runs.keys()].sort()).toEqual(
      [
        'jest-json',
        'jest-junit',
        'mocha-junit',
        'mocha-tap',
        'node-tap',
        'pytest-junit',
        'pytest-regex',
        'pytest-stdout',
        'tape',
        'vitest-json',
        'vitest-junit',
        'vitest-tap',
        'vitest-tapflat',
      ].sort(),
    );
    for (const [runner, cases] of runs) {
      if (runner === 'pytest-stdout') continue;
      expect([runner, ...['pass', 'fail', 'crash', 'empty'].filter((c) => !cases.has(c))]).toEqual([runner]);
    }
  });

  it.each(fixtures.map((f) => [f.file, f] as const))('%s', (_file, fixture) => {
    const stdout = readFileSync(join(FIXTURES, fixture.file), 'utf8');
    const outcome = score(fixture.score, stdout, fixture.exitCode);
    if ('crash' in fixture.expect) {
      expect(outcome).toMatchObject({ ok: false });
      if (!outcome.ok) expect(outcome.reason).toContain(fixture.expect.crash);
      return;
    }
    expect(outcome).toMatchObject({ ok: true, evidence: fixture.expect.evidence });
    if (outcome.ok) expect(outcome.score).toBeCloseTo(fixture.expect.score, 2);
    if (/-fail\./.test(fixture.file) && fixture.score.from !== 'json' && fixture.score.from !== 'regex')
      expect(outcome.ok && outcome.score).toBeLessThan(100);
  });
});

describe('TAP: a crash is never a score', () => {
  const tap = { from: 'tap' } as const;

  it.each([
    [
      'no plan and a non-zero exit (a test file threw part-way)',
      'TAP version 13\nok 1 - a\nok 2 - b\n',
      1,
      /has no plan/,
    ],
    ['no plan and exit 0 (process.exit(0) in a test)', 'ok 1 - a\n', 0, /has no plan/],
    [
      'a plan longer than the points (a truncated run)',
      '1..10\nok 1 - a\nok 2 - b\n',
      1,
      /1\.\.10 does not match the 2/,
    ],
    [
      'a plan shorter than the points (extra results)',
      '1..1\nok 1 - a\nok 2 - b\n',
      0,
      /1\.\.1 does not match the 2/,
    ],
    ['two plans in one document', '1..1\nok 1 - a\n1..1\n', 0, /2 plans/],
    [
      'a bail out',
      'TAP version 13\n1..3\nok 1 - a\nBail out! database down\n',
      1,
      /bailed out \("Bail out! database down"\)/,
    ],
    ['points out of order (injected results)', '1..2\nok 2 - a\nok 1 - b\n', 0, /point 2 is out of order/],
    [
      'a non-zero exit with no failing test',
      '1..2\nok 1 - a\nok 2 - b\n',
      1,
      /counts no failing test, yet the command failed/,
    ],
    [
      'only skipped tests',
      '1..2\nok 1 - a # SKIP\nok 2 - b # skip no db\n',
      0,
      /no TAP test passed or failed, 2 skipped/,
    ],
    ['an empty plan', 'TAP version 14\n1..0 # no tests found\n', 0, /the TAP output reports no tests/],
  ])('%s', (_name, stdout, exitCode, reason) => {
    expect(score(tap, stdout, exitCode)).toMatchObject({ ok: false, reason: expect.stringMatching(reason) });
  });

  it('a failing nested subtest under a passing parent cannot score 100', () => {
    const nested = 'TAP version 14\n# Subtest: group\n    not ok 1 - inner\n    1..1\nok 1 - group\n1..1\n';
    expect(score(tap, nested, 1)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/the nested test "inner" failed, yet its parent "group" reported ok/),
    });
    const buffered = '1..1\nok 1 - file.test.js {\n    1..2\n    ok 1 - a\n    not ok 2 - b\n}\n';
    expect(score(tap, buffered, 1)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/"b" failed, yet its parent/),
    });
    const orphan = '1..1\nok 1 - group\n    not ok 1 - late\n';
    expect(score(tap, orphan, 1)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/"late" failed outside any test point/),
    });
  });

  it('a failing nested subtest under a failing parent counts once, as the parent', () => {
    const stdout = '# Subtest: g\n    ok 1 - x\n    not ok 2 - y\n    1..2\nnot ok 1 - g\nok 2 - h\n1..2\n';
    expect(score(tap, stdout, 1)).toEqual({
      ok: true,
      score: 50,
      evidence: '1/2 passed (TAP, exit 1)',
      tests: 2,
    });
  });

  it('reads trailers with any spacing and checks them against the points', () => {
    const tape = (pass: string) =>
      `TAP version 13\n# a\nok 1 x\nnot ok 2 y\nok 3 z\n\n1..3\n# tests 3\n${pass}\n# fail  1\n`;
    expect(score(tap, tape('# pass  2'), 1)).toMatchObject({
      ok: true,
      evidence: '2/3 passed (TAP, exit 1)',
    });
    expect(score(tap, tape('#pass\t2'), 1)).toMatchObject({ ok: true });
    expect(score(tap, tape('# pass  149'), 1)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /the TAP trailer \(# tests 3, # pass 149, # fail 1\) disagrees with the test points/,
      ),
    });
    const lyingFail = '1..2\nok 1 - a\nnot ok 2 - b\n# tests 2\n# pass 2\n# fail 0\n';
    expect(score(tap, lyingFail, 1)).toMatchObject({ ok: false, reason: expect.stringMatching(/trailer/) });
  });

  it('TODO tests are neither passes nor failures, whether they pass or fail', () => {
    const stdout = '1..4\nok 1 - a\nnot ok 2 - b # TODO not built\nok 3 - c # todo\nnot ok 4 - d\n';
    expect(score(tap, stdout, 1)).toEqual({
      ok: true,
      score: 50,
      evidence: '1/2 passed, 2 todo (TAP, exit 1)',
      tests: 2,
    });
  });

  it('two TAP documents are no score: one may be a whole report the code under test printed', () => {
    // A vitest worker inherits the run's stdout: an artifact that writes a passing report to fd 1
    // puts it beside vitest's own (seen with vitest 4.1). Summed, its passes would count.
    const real = 'TAP version 13\n1..1\nnot ok 1 - a.test.mjs\n';
    const forged = 'TAP version 13\n1..3\nok 1 - x\nok 2 - y\nok 3 - z\n';
    for (const stdout of [forged + real, real + forged]) {
      expect(score(tap, stdout, 1)).toEqual({
        ok: false,
        reason:
          'the output holds 2 TAP documents where a run prints one: code under test can print a report of its own, so none is scored (run the suites as one command) (the command exited with code 1); ' +
          `its output ends with ${JSON.stringify(stdout.trim())}`,
      });
    }
    // Without a version line a forged report joins the real one, whose plan then does not add up.
    expect(score(tap, `ok 1 - x\nok 2 - y\n${real}`, 1)).toMatchObject({ ok: false });
    expect(score(tap, `TAP version 13\n1..1\nok 1 - a\n1..2\nok 2 - x\n`, 0)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/2 plans in one document/),
    });
  });

  it('ignores points inside YAML blocks and two-space indented messages', () => {
    const stdout = [
      '1..2',
      'not ok 1 - a',
      '  ---',
      '  error: |-',
      '        ok 7 - this is message text',
      '  ...',
      'not ok 2 - b',
      '  not ok 9 - mocha prints the message indented by two',
    ].join('\n');
    expect(score(tap, `${stdout}\nok 3 - c\n`, 1)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/1\.\.2 does not match the 3/),
    });
    expect(score(tap, stdout, 1)).toMatchObject({ ok: true, score: 0 });
  });
});

describe('JUnit XML: a crash is never a score', () => {
  const junit = { from: 'junit' } as const;
  const suite = (cases: string, attributes = '') =>
    `<?xml version="1.0"?>\n<testsuites${attributes}><testsuite name="s">${cases}</testsuite></testsuites>`;

  it.each([
    ['no XML at all', 'Error: Cannot find module jest-junit', 1, /no JUnit XML in the output/],
    [
      'zero tests',
      '<testsuites tests="0" failures="0"></testsuites>',
      1,
      /the JUnit XML output reports no tests/,
    ],
    ['a truncated report', suite('<testcase name="a"/>').slice(0, -25), 1, /ends inside <testsuite>/],
    ['a malformed report', '<testsuite><testcase name="a"></testsuite>', 0, /malformed/],
    [
      'totals that disagree with the test cases',
      suite('<testcase name="a"/><testcase name="b"><failure/></testcase>', ' tests="2" failures="0"'),
      1,
      /declares 0 failures and errors but 1 of its test cases failed/,
    ],
    [
      'a suite-level error',
      '<testsuite tests="1"><error message="setup"/></testsuite>',
      1,
      /<error> outside any test case/,
    ],
    ['a non-zero exit with no failing test', suite('<testcase name="a"/>'), 1, /counts no failing test/],
    [
      'only skipped tests',
      suite('<testcase name="a"><skipped/></testcase>'),
      0,
      /passed or failed, 1 skipped/,
    ],
  ])('%s', (_name, stdout, exitCode, reason) => {
    expect(score(junit, stdout, exitCode)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(reason),
    });
  });

  it('counts test cases: errors are failures, skipped ones are left out', () => {
    const xml = suite(
      '<testcase name="a"/><testcase name="b"><error message="boom"/></testcase>' +
        '<testcase name="c"><failure><![CDATA[<testcase name="fake"/>]]></failure></testcase>' +
        '<testcase name="d"><skipped/></testcase><testcase name="e"></testcase>',
    );
    expect(score(junit, xml, 1)).toEqual({
      ok: true,
      score: 50,
      evidence: '2/4 passed, 1 skipped (JUnit XML, exit 1)',
      tests: 4,
    });
  });

  it('reads test cases even when the root lists no skipped count (vitest)', () => {
    const xml = suite(
      '<testcase name="a"/><testcase name="b"><skipped/></testcase>',
      ' tests="2" failures="0"',
    );
    expect(score(junit, xml)).toMatchObject({
      ok: true,
      score: 100,
      evidence: '1/1 passed, 1 skipped (JUnit XML, exit 0)',
    });
  });

  it('does not count nested suites twice when only totals are given', () => {
    const xml =
      '<testsuite tests="4" failures="1"><testsuite tests="2" failures="1"></testsuite>' +
      '<testsuite tests="2" failures="0"></testsuite></testsuite>';
    expect(score(junit, xml, 1)).toMatchObject({ ok: true, score: 75 });
  });
});

// A test metric's run says how many tests it counted (ScoreResult.tests); the loop holds later runs to
// the baseline's. Skipped tests are not among them.
describe('the tests a score counted', () => {
  it('a TAP or JUnit pass rate counts the tests that passed or failed', () => {
    expect(
      score({ from: 'tap' }, '1..4\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP\nok 4 - d\n', 1),
    ).toMatchObject({
      ok: true,
      tests: 3,
    });
    const junit =
      '<testsuite tests="3" failures="0" skipped="2"><testcase name="a"/><testcase name="b"><skipped/></testcase><testcase name="c"><skipped/></testcase></testsuite>';
    expect(score({ from: 'junit' }, junit)).toMatchObject({ ok: true, score: 100, tests: 1 });
  });

  it("an exit code counts what the runner's summary says ran, on stdout or stderr", () => {
    const unittest = {
      ...result('', 1),
      stderr:
        '.F\n----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n',
    };
    expect(extractScore({ from: 'exit-code' }, unittest)).toEqual({
      ok: true,
      score: 0,
      evidence: 'exit 1',
      tests: 2,
    });
    expect(score({ from: 'exit-code' }, '1..2\n# pass 2\n# fail 0\n')).toMatchObject({
      score: 100,
      tests: 2,
    });
    // A build or a linter prints no summary: its exit code stands alone.
    expect(score({ from: 'exit-code' }, 'compiled 12 files\n')).toEqual({
      ok: true,
      score: 100,
      evidence: 'exit 0',
    });
  });

  it('a score read from a number counts none', () => {
    expect(score({ from: 'json', path: 'score' }, '{"score": 5}\nRan 2 tests in 0.1s\n')).not.toHaveProperty(
      'tests',
    );
    expect(score({ from: 'regex', pattern: 'ops: (\\d+)' }, 'ops: 7\n')).not.toHaveProperty('tests');
  });
});

describe('regex: which stream the score is read from', () => {
  const source: ScoreSource = { from: 'regex', pattern: '^passed: (\\d+)' };
  const run = (stdout: string, stderr: string, exitCode: number) =>
    extractScore(source, processResult({ stdout, stderr, exitCode }));

  it('reads stdout first, and stderr when stdout has none and the command succeeded', () => {
    expect(run('passed: 3\n', 'passed: 9\n', 1)).toMatchObject({ ok: true, score: 3 });
    expect(run('', 'passed: 4\n', 0)).toMatchObject({ ok: true, score: 4 });
  });

  it('never scores a failed command from its stderr, which the measured code can write', () => {
    // The metric crashed before its own line; the artifact had printed a score of its own.
    const crashed = run('', 'passed: 8 of 8\nError: thrown\n    at slugify\n', 1);
    expect(crashed.ok).toBe(false);
    expect(crashed).toMatchObject({ reason: expect.stringContaining('"stream": "stderr"') });
  });

  it('with "stream": "stderr", reads stderr alone, whatever the exit (a suite with failures)', () => {
    const stderrSource: ScoreSource = { ...source, stream: 'stderr' };
    const read = (stdout: string, stderr: string, exitCode: number) =>
      extractScore(stderrSource, processResult({ stdout, stderr, exitCode }));
    expect(read('passed: 99\n', 'passed: 7\n', 1)).toMatchObject({ ok: true, score: 7 });
    expect(read('passed: 99\n', '', 0).ok).toBe(false);
  });
});
