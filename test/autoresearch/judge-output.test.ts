// Judge outputs: a soft judge's answer, hard-metric score extraction, and the judge-output file.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScoreSource } from '../../src/autoresearch/config.js';
import {
  judgeHardMetric,
  judgeOutputPath,
  parseJudgeAnswer,
  JUDGE_OUTPUTS_KEPT,
  readJudgeOutput,
  writeJudgeOutput,
} from '../../src/autoresearch/judge-output.js';
import { candidateFiles, candidateJudgePath } from '../../src/autoresearch/candidates.js';
import { extractScore } from '../../src/autoresearch/scorers.js';
import type { ProcessResult } from '../../src/infra/process.js';
import { TailBuffer } from '../../src/infra/tail-buffer.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';
import { processResult } from '../support/process-result.js';

const result = processResult;

function score(source: ScoreSource, overrides: Partial<ProcessResult>) {
  return extractScore(source, result(overrides), 600);
}

describe('parseJudgeAnswer', () => {
  it('reads a bare JSON answer', () => {
    expect(parseJudgeAnswer('{"score": 72.5, "findings": ["too long"]}')).toEqual({
      ok: true,
      output: {
        score: 72.5,
        findings: ['too long'],
        raw_output: '{"score": 72.5, "findings": ["too long"]}',
      },
    });
  });

  it('reads JSON in a fence surrounded by prose', () => {
    const answer =
      'I read the spec.\n\n```json\n{"score": 8, "findings": [{"severity": "high", "text": "no limits"}], "strengths": ["clear"]}\n```\nThat is all.';
    const verdict = parseJudgeAnswer(answer);
    expect(verdict).toMatchObject({
      ok: true,
      output: { score: 8, findings: [{ severity: 'high', text: 'no limits' }], strengths: ['clear'] },
    });
  });

  it('picks the last valid object when the answer has a draft and a final one', () => {
    const answer =
      'Draft:\n```json\n{"score": 5, "findings": []}\n```\nRevised:\n```\n{"score": 7, "findings": ["x"]}\n```';
    expect(parseJudgeAnswer(answer)).toMatchObject({ ok: true, output: { score: 7 } });
  });

  it('skips a later invalid block in favour of the last valid one', () => {
    const answer =
      '```json\n{"score": 6, "findings": []}\n```\nexample schema: ```json\n{"score": "<number>"}\n```';
    expect(parseJudgeAnswer(answer)).toMatchObject({ ok: true, output: { score: 6 } });
  });

  it('finds an object inline in prose and drops extra keys', () => {
    expect(
      parseJudgeAnswer('Final answer: {"score": 3, "findings": [], "reasoning": "…"} done'),
    ).toMatchObject({
      ok: true,
      output: { score: 3, findings: [] },
    });
    const verdict = parseJudgeAnswer('{"score": 3, "reasoning": "long"}');
    expect(verdict.ok && 'reasoning' in verdict.output).toBe(false);
  });

  it('keeps a string evidence and drops any other, rather than failing the answer over it', () => {
    expect(parseJudgeAnswer('{"score": 4, "findings": [], "evidence": "read 3 files"}')).toMatchObject({
      ok: true,
      output: { score: 4, evidence: 'read 3 files' },
    });
    const verdict = parseJudgeAnswer('{"score": 4, "findings": [], "evidence": ["a", "b"]}');
    expect(verdict).toMatchObject({ ok: true, output: { score: 4 } });
    expect(verdict.ok && 'evidence' in verdict.output && verdict.output.evidence !== undefined).toBe(false);
  });

  it.each([
    ['no JSON at all', 'The spec looks fine to me. 8/10.', /contains no JSON object/],
    ['a string score', '{"score": "85", "findings": []}', /score: expected a finite number, got "85"/],
    ['no score', '{"findings": ["a"]}', /score: expected a finite number, got nothing/],
    ['findings not a list', '{"score": 1, "findings": "many"}', /findings: expected a list of findings/],
    ['an array, not an object', '[{"score": 1}]', /contains no JSON object|expected/],
    ['a truncated answer', '```json\n{"score": 8, "findings": [\n', /contains no JSON object/],
  ])('fails with a reason on %s', (_name, answer, reason) => {
    const verdict = parseJudgeAnswer(answer);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toMatch(reason);
  });
});

describe('extractScore: exit-code', () => {
  it('0 → 100, anything else → 0', () => {
    expect(score({ from: 'exit-code' }, { exitCode: 0 })).toEqual({
      ok: true,
      score: 100,
      evidence: 'exit 0',
    });
    expect(score({ from: 'exit-code' }, { exitCode: 3 })).toEqual({ ok: true, score: 0, evidence: 'exit 3' });
  });

  it.each([
    [
      'did not start',
      { spawnError: 'spawn npx ENOENT', exitCode: undefined },
      /could not start: spawn npx ENOENT/,
    ],
    ['timed out', { timedOut: true, exitCode: undefined, signal: 'SIGTERM' }, /timed out after 600s/],
    ['was killed', { exitCode: undefined, signal: 'SIGKILL' }, /killed by SIGKILL/],
    ['was interrupted', { aborted: true, exitCode: undefined }, /interrupted/],
  ])('a command that %s is a failure, not a score of 0', (_name, overrides, reason) => {
    const outcome = score({ from: 'exit-code' }, overrides);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.reason).toMatch(reason);
  });
});

describe('extractScore: regex', () => {
  const source = { from: 'regex', pattern: '^Score: ([-0-9.e]+)' } as const;

  it('takes the first capture group, on any line, with a float value', () => {
    expect(score(source, { stdout: 'running…\nScore: 87.25\ndone\n' })).toEqual({
      ok: true,
      score: 87.25,
      evidence: 'matched 87.25 with /^Score: ([-0-9.e]+)/',
    });
  });

  it('two different scores in the output are no score, whichever comes first (a line the measured code printed)', () => {
    for (const stdout of ['Score: 1000\nrunning…\nScore: 4\n', 'Score: 4\nScore: 1000\n']) {
      expect(score(source, { stdout, exitCode: 0 })).toEqual({
        ok: false,
        reason:
          `the pattern /^Score: ([-0-9.e]+)/ found 2 different scores in the output (${stdout.startsWith('Score: 4') ? '4, 1000' : '1000, 4'}) (the command exited with code 0): ` +
          'a score must be printed once, and a line the measured code printed may not stand in for it',
      });
    }
    // stderr is read only when stdout holds no score, so a second score there changes nothing.
    expect(score(source, { stdout: 'Score: 4\n', stderr: 'Score: 1000\n' })).toMatchObject({
      ok: true,
      score: 4,
    });
    expect(score(source, { stdout: '', stderr: 'Score: 4\nScore: 9\n' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/2 different scores in the output \(4, 9\)/),
    });
  });

  it('output whose start was dropped is no score: what is left is what came last, which the measured code can write', () => {
    // The runner's buffer keeps the last 50 MiB; 51 MiB of blanks and a score pushed the metric's out (seen).
    const big = new TailBuffer(64);
    big.push('Score: 4\n');
    big.push(' '.repeat(100));
    big.push('Score: 1000\n');
    const kept = big.value();
    expect(kept).not.toContain('Score: 4');
    for (const from of [source, { from: 'json', path: 'value' } as const, { from: 'tap' } as const]) {
      expect(score(from, { stdout: kept })).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/printed more to stdout than Forge keeps .*, so its start was dropped/),
      });
    }
    // stderr is read only when stdout has no score: then its start matters too.
    expect(score(source, { stdout: 'Score: 4\n', stderr: kept })).toMatchObject({ ok: true, score: 4 });
    expect(score(source, { stdout: 'nothing', stderr: kept })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/printed more to stderr than Forge keeps/),
    });
    expect(score({ from: 'exit-code' }, { stdout: kept, exitCode: 0 })).toMatchObject({
      ok: true,
      score: 100,
    });
  });

  it('the same score printed twice is that score', () => {
    expect(score(source, { stdout: 'Score: 7\nsummary\nScore: 7.0\n' })).toMatchObject({
      ok: true,
      score: 7,
    });
  });

  it('a second match that is not a number fails like a first one', () => {
    expect(score(source, { stdout: 'Score: 7\nScore: e\n' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/captured "e", which is not a number/),
    });
  });

  it('looks at stderr when stdout has no match and the command succeeded; a failed one only with "stream": "stderr"', () => {
    expect(score(source, { stdout: 'nothing', stderr: 'Score: -3e2\n', exitCode: 0 })).toEqual({
      ok: true,
      score: -300,
      evidence: 'matched -300 with /^Score: ([-0-9.e]+)/',
    });
    // A failed command's stderr may be the measured code's own words (the red team's crash-then-score).
    expect(score(source, { stdout: 'nothing', stderr: 'Score: -3e2\n', exitCode: 1 }).ok).toBe(false);
    expect(
      score({ ...source, stream: 'stderr' }, { stdout: 'nothing', stderr: 'Score: -3e2\n', exitCode: 1 }),
    ).toEqual({ ok: true, score: -300, evidence: 'matched -300 with /^Score: ([-0-9.e]+)/ (exit 1)' });
  });

  it('fails when the pattern does not match, naming the exit code and showing the output', () => {
    expect(score(source, { stdout: 'no score here', exitCode: 2 })).toEqual({
      ok: false,
      reason:
        'the pattern /^Score: ([-0-9.e]+)/ did not match the output (the command exited with code 2); its output ends with "no score here"',
    });
  });

  it.each(['.', '1.2.3', 'e', '-'])('fails when the capture %j is not a number', (captured) => {
    expect(score(source, { stdout: `Score: ${captured}\n` })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/which is not a number/),
    });
  });
});

describe('extractScore: json', () => {
  it('reads a top-level field', () => {
    expect(
      score(
        { from: 'json', path: 'numPassedTests' },
        { stdout: '{"numPassedTests": 42, "numFailedTests": 1}' },
      ),
    ).toEqual({
      ok: true,
      score: 42,
      evidence: 'numPassedTests = 42',
    });
  });

  it('follows a dotted path with array indices, in both spellings', () => {
    const stdout = JSON.stringify({ results: [{ score: 0.75 }, { score: 0.5 }] });
    expect(score({ from: 'json', path: 'results.1.score' }, { stdout })).toEqual({
      ok: true,
      score: 0.5,
      evidence: 'results.1.score = 0.5',
    });
    expect(score({ from: 'json', path: 'results[0].score' }, { stdout })).toEqual({
      ok: true,
      score: 0.75,
      evidence: 'results[0].score = 0.75',
    });
  });

  it('finds the JSON document after noise (npm banners, warnings with braces)', () => {
    const stdout = [
      '> rate-limiter@1.0.0 test',
      '> vitest run --reporter=json',
      'warn: config {deprecated} option',
      '{"numPassedTests": 17,',
      ' "testResults": [{"name": "a {b}"}]}',
      '',
    ].join('\n');
    expect(score({ from: 'json', path: 'numPassedTests' }, { stdout, exitCode: 1 })).toEqual({
      ok: true,
      score: 17,
      evidence: 'numPassedTests = 17 (exit 1)',
    });
  });

  it('two documents that give the path different scores are no score (one printed by the measured code)', () => {
    const forged = '{"passed": 1000, "total": 8}\n{"passed": 4, "total": 8}\n';
    expect(score({ from: 'json', path: 'passed' }, { stdout: forged })).toEqual({
      ok: false,
      reason:
        '"passed" found 2 different scores in the output (1000, 4) (the command exited with code 0): ' +
        'a score must be printed once, and a line the measured code printed may not stand in for it',
    });
    const same = '{"passed": 4, "total": 8}\nnoise\n{"passed": 4}\n';
    expect(score({ from: 'json', path: 'passed' }, { stdout: same })).toMatchObject({ ok: true, score: 4 });
    // A document without the path (a log line as JSON) is not a second score.
    const logged = '{"level": "info"}\n{"passed": 4, "total": 8}\n';
    expect(score({ from: 'json', path: 'passed' }, { stdout: logged })).toMatchObject({ ok: true, score: 4 });
  });

  it.each([
    ['no JSON', 'FAIL everything', /printed no JSON .*; its output ends with "FAIL everything"$/],
    [
      'a missing path',
      '{"numPassedTests": 3}',
      /has nothing at "numFailedTests" .*; its output ends with "\{\\"numPassedTests\\": 3\}"$/,
    ],
    ['a string value', '{"numFailedTests": "3"}', /is "3", not a finite number/],
    ['a null value', '{"numFailedTests": null}', /is null, not a finite number/],
  ])('fails on %s', (_name, stdout, reason) => {
    expect(score({ from: 'json', path: 'numFailedTests' }, { stdout })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(reason),
    });
  });

  it('shows only the last 500 characters of a long output, stderr included', () => {
    const outcome = score(
      { from: 'json', path: 'x' },
      { stdout: `${'a'.repeat(2000)}END`, stderr: 'Error: cannot find module', exitCode: 1 },
    );
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    const tail = JSON.parse(outcome.reason.slice(outcome.reason.indexOf('"'))) as string;
    expect(tail).toHaveLength(501);
    expect(tail).toMatch(/^…a+END\n\[stderr\]\nError: cannot find module$/);
  });
});

describe('extractScore: tap and junit', () => {
  it('TAP: percentage of passing top-level tests; skipped ones are neither passes nor failures', () => {
    const tap = 'TAP version 13\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP\nok 4 - d\n1..4\n';
    expect(score({ from: 'tap' }, { stdout: tap })).toEqual({
      ok: true,
      score: (2 / 3) * 100,
      evidence: '2/3 passed, 1 skipped (TAP, exit 0)',
      tests: 3,
    });
    expect(score({ from: 'tap' }, { stdout: 'nothing' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/no TAP test results/),
    });
  });

  it('TAP: a trailer without a plan is not a score, whatever it claims', () => {
    const nodeTap = '# Subtest: x\n    ok 1 - inner\nok 1 - x\n# tests 4\n# pass 3\n# fail 1\n';
    expect(score({ from: 'tap' }, { stdout: nodeTap })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/has no plan/),
    });
  });

  it('JUnit: totals of the root element, skipped tests left out', () => {
    const xml =
      '<?xml version="1.0"?>\n<testsuites tests="10" failures="1" errors="1" skipped="2">\n' +
      '<testsuite name="a" tests="10" failures="1" errors="1" skipped="2"></testsuite></testsuites>';
    expect(score({ from: 'junit' }, { stdout: xml, exitCode: 1 })).toEqual({
      ok: true,
      score: 75,
      evidence: '6/8 passed, 2 skipped (JUnit XML, exit 1)',
      tests: 8,
    });
    const suite = '<testsuite tests="4" failures="2"></testsuite>';
    expect(score({ from: 'junit' }, { stdout: suite, exitCode: 1 })).toMatchObject({ ok: true, score: 50 });
  });

  it('JUnit: two reports are no score, whichever came first (one the code under test printed)', () => {
    const real =
      '<testsuites tests="2" failures="1"><testsuite name="a" tests="2" failures="1">' +
      '<testcase name="one"/><testcase name="two"><failure message="no"/></testcase></testsuite></testsuites>\n';
    const forged = `<testsuites tests="3" failures="0"><testsuite name="x">${'<testcase name="t"/>'.repeat(3)}</testsuite></testsuites>\n`;
    for (const stdout of [
      forged + real,
      real + forged,
      '<testsuite tests="2" failures="0"></testsuite>' + real,
    ]) {
      expect(score({ from: 'junit' }, { stdout, exitCode: 1 })).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/^the output holds 2 JUnit reports where a run prints one/),
      });
    }
    expect(score({ from: 'junit' }, { stdout: real, exitCode: 1 })).toMatchObject({ ok: true, score: 50 });
  });
});

describe('judge-output files', () => {
  it('a hard metric result becomes a judge output with the tail of its output', async () => {
    const verdict = judgeHardMetric(
      { score: { from: 'exit-code' }, timeout_seconds: 600 },
      result({ exitCode: 1, stdout: 'x'.repeat(5000), stderr: 'boom' }),
    );
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    expect(verdict.output.score).toBe(0);
    expect(verdict.output.evidence).toBe('exit 1');
    expect(verdict.output.raw_output?.length).toBe(4000);
    expect(verdict.output.raw_output?.endsWith('[stderr]\nboom')).toBe(true);

    const files = createMemoryLoopFiles();
    const dir = '/repo/.autoresearch';
    const path = judgeOutputPath(dir, 3);
    expect(path).toBe(join(dir, 'judge-output-3.json'));
    await writeJudgeOutput(files, path, verdict.output);
    expect(await readJudgeOutput(files, path)).toEqual(verdict);
  });

  it('a file rewritten after this process’s judge wrote it is a failure through any port, a candidate’s too', async () => {
    const files = createMemoryLoopFiles();
    const path = judgeOutputPath('/repo/.autoresearch', 2);
    await writeJudgeOutput(files, path, { score: 4, findings: ['slow'] });
    // The same values, written out another way, are what the judge wrote.
    await files.writeText(path, '{ "findings": ["slow"],\n  "score": 4 }\n');
    expect(await readJudgeOutput(files, path)).toEqual({
      ok: true,
      output: { score: 4, findings: ['slow'] },
    });

    await files.writeText(path, '{"score": 999, "findings": []}\n');
    expect(await readJudgeOutput(files, path)).toEqual({
      ok: false,
      reason: `${path} changed after the judge wrote it (score 4): something else rewrote it, so it is not scored`,
    });
    // Through another port onto the same file (a population candidate's, made afresh for each bead).
    const samePlace = { ...files };
    expect(await readJudgeOutput(samePlace, path)).toMatchObject({ ok: false });
    const candidate = candidateFiles(files, '/repo/.autoresearch', 2, 1);
    await writeJudgeOutput(candidate, path, { score: 6, findings: [] });
    await files.writeText(candidateJudgePath('/repo/.autoresearch', 2, 1), '{"score": 999}\n');
    expect(await readJudgeOutput(candidateFiles(files, '/repo/.autoresearch', 2, 1), path)).toEqual({
      ok: false,
      reason: `${path} changed after the judge wrote it (score 6): something else rewrote it, so it is not scored`,
    });
    // A file this process did not write (a resumed run, another worker) has nothing to hold it against.
    const elsewhere = createMemoryLoopFiles();
    await elsewhere.writeText(path, '{"score": 999, "findings": []}\n');
    expect(await readJudgeOutput(elsewhere, path)).toMatchObject({ ok: true, output: { score: 999 } });
    // The judge writing again is the new record.
    await writeJudgeOutput(files, path, { score: 5, findings: [] });
    expect(await readJudgeOutput(files, path)).toMatchObject({ ok: true, output: { score: 5 } });
  });

  it('holds the newest judge outputs of a store, not one per iteration of a long loop', async () => {
    const files = createMemoryLoopFiles();
    const path = (iter: number) => judgeOutputPath('/repo/.autoresearch', iter);
    for (let iter = 1; iter <= JUDGE_OUTPUTS_KEPT + 1; iter += 1)
      await writeJudgeOutput(files, path(iter), { score: iter, findings: [] });
    for (const iter of [1, 2, JUDGE_OUTPUTS_KEPT + 1])
      await files.writeText(path(iter), '{"score": 999, "findings": []}\n');
    // The first fell out of the record; the second and the newest are still held.
    expect(await readJudgeOutput(files, path(1))).toMatchObject({ ok: true, output: { score: 999 } });
    expect(await readJudgeOutput(files, path(2))).toMatchObject({ ok: false });
    expect(await readJudgeOutput(files, path(JUDGE_OUTPUTS_KEPT + 1))).toMatchObject({ ok: false });
  });

  it('a missing or invalid file is a judge failure naming the file', async () => {
    const files = createMemoryLoopFiles();
    const path = judgeOutputPath('/repo/.autoresearch', 1);
    expect(await readJudgeOutput(files, path)).toMatchObject({
      ok: false,
      reason: `${path} does not exist: the judge failed or never ran`,
    });
    await files.writeText(path, '{"score": null, "findings": []}');
    expect(await readJudgeOutput(files, path)).toMatchObject({
      ok: false,
      reason: `${path}: score: expected a finite number, got null`,
    });
    await files.writeText(path, '{"score": 1,');
    expect(await readJudgeOutput(files, path)).toMatchObject({
      ok: false,
      reason: `${path} is not valid JSON`,
    });
  });
});
