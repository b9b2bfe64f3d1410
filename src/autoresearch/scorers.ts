// Hard-metric scorers: read a score off a metric command's output, or say why there is none (a crash).
import type { ProcessResult } from '../infra/process.js';
import { DEFAULT_KEPT_CHARS, wasTruncated } from '../infra/tail-buffer.js';
import type { ScoreSource } from './config.js';
import { parseJsonPath } from './config-values.js';
import { findJsonValues } from './json-text.js';
import { countJunit } from './junit.js';
import { countTap } from './tap.js';
import type { Counted } from './test-counts.js';
import { ranTests } from './test-summary.js';

/**
 * A score with the evidence it was read from, or why there is none (the arbiter records a crash). `tests`:
 * the tests a test metric's run ran and passed or failed (a TAP or JUnit report's, or the runner's summary
 * under an exit code), undefined where the output counts none; the loop holds it to the baseline's.
 */
export type ScoreResult =
  { ok: true; score: number; evidence: string; tests?: number } | { ok: false; reason: string };

/** How much of each stream the metric's runner keeps, as told to the user. */
const OUTPUT_KEPT = `${Math.round(DEFAULT_KEPT_CHARS / 2 ** 20)} MiB`;

/** Enough of the output's end for a user to see why no score came out of it. */
const TAIL_CHARS = 500;

export function extractScore(
  source: ScoreSource,
  result: ProcessResult,
  timeoutSeconds?: number,
): ScoreResult {
  if (result.spawnError !== undefined)
    return { ok: false, reason: `the metric command could not start: ${result.spawnError}` };
  if (result.timedOut) {
    return {
      ok: false,
      reason: `the metric command timed out${timeoutSeconds === undefined ? '' : ` after ${timeoutSeconds}s`}`,
    };
  }
  if (result.aborted) return { ok: false, reason: 'the metric command was interrupted' };
  if (result.exitCode === undefined) {
    return { ok: false, reason: `the metric command was killed by ${result.signal ?? 'a signal'}` };
  }
  const exitCode = result.exitCode;
  // Output past the buffer's bound loses its start, and with it the metric's own lines: what is left is
  // what came last, which the measured code can write (51 MiB of blanks, then a score of its own: seen).
  if (source.from !== 'exit-code' && wasTruncated(result.stdout)) return truncated('stdout', exitCode);
  switch (source.from) {
    case 'exit-code':
      return exitCodeScore(result, exitCode);
    case 'regex':
      return scoreFromRegex(source.pattern, source.stream, result, exitCode);
    case 'json':
      return scoreFromJson(source.path, result, exitCode);
    case 'tap':
      return percentPassed(countTap(result.stdout), 'TAP', result, exitCode);
    case 'junit':
      return percentPassed(countJunit(result.stdout), 'JUnit XML', result, exitCode);
  }
}

/** 100 for exit 0, else 0; with the tests the runner's summary says ran, where the output has one. */
function exitCodeScore(result: ProcessResult, exitCode: number): ScoreResult {
  const score: ScoreResult = { ok: true, score: exitCode === 0 ? 100 : 0, evidence: `exit ${exitCode}` };
  const tests = ranTests(`${result.stdout}\n${result.stderr}`);
  return tests === undefined ? score : { ...score, tests };
}

function truncated(stream: 'stdout' | 'stderr', exitCode: number): ScoreResult {
  return {
    ok: false,
    reason: `the metric command printed more to ${stream} than Forge keeps of a command's output (${OUTPUT_KEPT}), so its start was dropped ${exited(exitCode)}: a score is read only from whole output (print less, e.g. with a quieter reporter)`,
  };
}

function exited(exitCode: number): string {
  return `(the command exited with code ${exitCode})`;
}

/** A failing suite legitimately exits non-zero while its printed number is valid: scored, but on record. */
function exitNote(exitCode: number): string {
  return exitCode === 0 ? '' : ` (exit ${exitCode})`;
}

function outputTail(result: ProcessResult): string {
  const text = `${result.stdout}${result.stderr === '' ? '' : `\n[stderr]\n${result.stderr}`}`.trim();
  if (text === '') return 'it printed nothing';
  const tail = text.length > TAIL_CHARS ? `…${text.slice(text.length - TAIL_CHARS)}` : text;
  return `its output ends with ${JSON.stringify(tail)}`;
}

function scoreFromRegex(
  pattern: string,
  stream: 'stdout' | 'stderr' | undefined,
  result: ProcessResult,
  exitCode: number,
): ScoreResult {
  const find = (text: string) => [...text.matchAll(new RegExp(pattern, 'gm'))];
  const fromStdout = stream === 'stderr' ? [] : find(result.stdout);
  // stderr is read when the config names it, or when stdout has no score and the command succeeded. A
  // command that failed printed its crash there, and the code it measured can print too: a metric that
  // crashed before its own line was scored from the artifact's "passed: 8" (found by the red team).
  const readStderr =
    stream === 'stderr' || (stream === undefined && fromStdout.length === 0 && exitCode === 0);
  if (readStderr && wasTruncated(result.stderr)) return truncated('stderr', exitCode);
  const matches = readStderr ? find(result.stderr) : fromStdout;
  if (matches.length === 0) {
    const onStderr = stream === undefined && exitCode !== 0 && find(result.stderr).length > 0;
    return {
      ok: false,
      reason: onStderr
        ? `the pattern /${pattern}/ did not match stdout ${exited(exitCode)}; it matches stderr, which is not read from a command that failed (the measured code can write there). If your metric prints its score on stderr, set "stream": "stderr" in metric.score of config.json (or --score "regex-stderr:<pattern>")`
        : `the pattern /${pattern}/ did not match the output ${exited(exitCode)}; ${outputTail(result)}`,
    };
  }
  const scores: number[] = [];
  for (const match of matches) {
    const captured = match.slice(1).find((group) => group !== undefined);
    const score = parseNumber(captured);
    if (score === undefined) {
      return {
        ok: false,
        reason: `the pattern /${pattern}/ captured ${JSON.stringify(captured ?? '')}, which is not a number`,
      };
    }
    scores.push(score);
  }
  const conflict = conflictingScores(scores, `the pattern /${pattern}/`, exitCode);
  if (conflict !== undefined) return conflict;
  const score = scores[0] ?? 0;
  return { ok: true, score, evidence: `matched ${score} with /${pattern}/${exitNote(exitCode)}` };
}

/**
 * A score is printed once. Output holding two different ones is no score: the metric's own line and
 * one printed by the code it measures (an artifact the metric loads can write to the same stdout), or a
 * pattern that also matches a progress line. The same value printed twice is still that value.
 */
function conflictingScores(
  scores: readonly number[],
  where: string,
  exitCode: number,
): ScoreResult | undefined {
  const distinct = [...new Set(scores)];
  if (distinct.length < 2) return undefined;
  const shown = distinct.slice(0, 5).join(', ');
  return {
    ok: false,
    reason: `${where} found ${distinct.length} different scores in the output (${shown}${distinct.length > 5 ? ', …' : ''}) ${exited(exitCode)}: a score must be printed once, and a line the measured code printed may not stand in for it`,
  };
}

/** Strict decimal numbers only: `Number()` would also take '', '0x1f' and 'Infinity'. */
export function parseNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

function scoreFromJson(path: string, result: ProcessResult, exitCode: number): ScoreResult {
  const parts = parseJsonPath(path) ?? [];
  const documents: unknown[] = [];
  try {
    documents.push(JSON.parse(result.stdout));
  } catch {
    documents.push(...findJsonValues(result.stdout, { anywhere: false }).map((c) => c.value));
  }
  if (documents.length === 0) {
    return {
      ok: false,
      reason: `the metric command printed no JSON ${exited(exitCode)}; ${outputTail(result)}`,
    };
  }
  let found: unknown;
  const scores: number[] = [];
  for (const document of documents) {
    const value = valueAt(document, parts);
    if (typeof value === 'number' && Number.isFinite(value)) scores.push(value);
    else found ??= value;
  }
  const [score] = scores;
  if (score !== undefined) {
    const conflict = conflictingScores(scores, `"${path}"`, exitCode);
    if (conflict !== undefined) return conflict;
    return { ok: true, score, evidence: `${path} = ${score}${exitNote(exitCode)}` };
  }
  if (found === undefined) {
    return {
      ok: false,
      reason: `the JSON output has nothing at "${path}" ${exited(exitCode)}; ${outputTail(result)}`,
    };
  }
  return {
    ok: false,
    reason: `"${path}" in the JSON output is ${JSON.stringify(found)}, not a finite number ${exited(exitCode)}`,
  };
}

function valueAt(document: unknown, parts: readonly (string | number)[]): unknown {
  let current = document;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[String(part)];
  }
  return current;
}

function percentPassed(
  counted: Counted,
  format: string,
  result: ProcessResult,
  exitCode: number,
): ScoreResult {
  const crash = (why: string): ScoreResult => ({
    ok: false,
    reason: `${why} ${exited(exitCode)}; ${outputTail(result)}`,
  });
  if (!counted.ok) return crash(counted.reason);
  const { passed, failed, skipped, todo } = counted.counts;
  const aside = `${skipped > 0 ? `, ${skipped} skipped` : ''}${todo > 0 ? `, ${todo} todo` : ''}`;
  if (passed + failed + skipped + todo === 0) return crash(`the ${format} output reports no tests`);
  if (passed + failed === 0) return crash(`no ${format} test passed or failed${aside}`);
  // A runner exits non-zero for a reason; when its report shows none, the report is missing something.
  if (exitCode !== 0 && failed === 0)
    return crash(`the ${format} output counts no failing test, yet the command failed`);
  return {
    ok: true,
    score: (passed / (passed + failed)) * 100,
    evidence: `${passed}/${passed + failed} passed${aside} (${format}, exit ${exitCode})`,
    tests: passed + failed,
  };
}
