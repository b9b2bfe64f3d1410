// Judge results: the `judge-output-N.json` schema, a soft judge's final answer, and hard-metric score extraction.
import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeJsonAtomic } from '../infra/atomic-file.js';
import type { ProcessResult } from '../infra/process.js';
import { formatPath, parseJsonPath, type HardMetricConfig, type ScoreSource } from './config.js';
import { findJsonValues, type JsonCandidate } from './json-text.js';

const finding = z.union([z.string(), z.record(z.string(), z.unknown())], {
  error: 'expected a string or an object',
});

/** What a judge produced for one iteration. Extra keys in an agent's answer are dropped. */
export const judgeOutputSchema = z.object({
  score: z.number({
    error: (issue) => `expected a finite number, got ${JSON.stringify(issue.input) ?? 'nothing'}`,
  }),
  findings: z.array(finding, { error: 'expected a list of findings' }).default([]),
  strengths: z.array(finding, { error: 'expected a list of strengths' }).optional(),
  raw_output: z.string({ error: 'expected a string' }).optional(),
});
export type JudgeOutput = z.output<typeof judgeOutputSchema>;
export type Finding = JudgeOutput['findings'][number];

/** A judge either produced a valid output or failed with a reason (after its retries). */
export type JudgeVerdict = { ok: true; output: JudgeOutput } | { ok: false; reason: string };

export function judgeOutputPath(workspaceDir: string, iter: number): string {
  return join(workspaceDir, `judge-output-${iter}.json`);
}

export async function writeJudgeOutput(path: string, output: JudgeOutput): Promise<void> {
  await writeJsonAtomic(path, judgeOutputSchema.parse(output));
}

/** A missing or invalid file is a judge failure (the arbiter records a crash), not an exception. */
export async function readJudgeOutput(path: string): Promise<JudgeVerdict> {
  const content = await readFileIfExists(path);
  if (content === undefined)
    return { ok: false, reason: `${path} does not exist: the judge failed or never ran` };
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return { ok: false, reason: `${path} is not valid JSON` };
  }
  return validate(value, path);
}

function validate(value: unknown, source: string): JudgeVerdict {
  const result = judgeOutputSchema.safeParse(value);
  if (result.success) return { ok: true, output: result.data };
  const problems = result.error.issues.map(
    (issue) => `${formatPath(issue.path) || '(root)'}: ${issue.message}`,
  );
  return { ok: false, reason: `${source}: ${problems.join('; ')}` };
}

// ---- a soft judge's final answer ----

/**
 * Reads a soft judge's final answer: a JSON object, bare or in a ``` fence, possibly with prose around
 * it. The last candidate that is valid wins (agents often show a draft before their final answer).
 */
export function parseJudgeAnswer(answer: string): JudgeVerdict {
  const candidates = [...fencedBlocks(answer), ...findJsonValues(answer, { anywhere: true })].sort(
    (a, b) => a.end - b.end,
  );
  let lastInvalid: JudgeVerdict | undefined;
  for (const candidate of candidates.reverse()) {
    if (typeof candidate.value !== 'object' || candidate.value === null || Array.isArray(candidate.value))
      continue;
    const verdict = validate(candidate.value, "the judge's answer");
    if (verdict.ok)
      return { ok: true, output: { ...verdict.output, raw_output: verdict.output.raw_output ?? answer } };
    lastInvalid ??= verdict;
  }
  return lastInvalid ?? { ok: false, reason: "the judge's answer contains no JSON object" };
}

function fencedBlocks(text: string): JsonCandidate[] {
  const out: JsonCandidate[] = [];
  for (const match of text.matchAll(/```[ \t]*([\w-]*)[ \t]*\r?\n([\s\S]*?)```/g)) {
    const body = match[2] ?? '';
    try {
      out.push({ value: JSON.parse(body), start: match.index, end: match.index + match[0].length });
    } catch {
      // A fence that is not JSON (an example in prose, a code sample) is simply not a candidate.
    }
  }
  return out;
}

// ---- hard metrics ----

export type ScoreResult = { ok: true; score: number } | { ok: false; reason: string };

const RAW_OUTPUT_CHARS = 4000;

/** Turns the metric command's result into a judge output, or a failure the arbiter records as a crash. */
export function judgeHardMetric(
  metric: Pick<HardMetricConfig, 'score' | 'timeout_seconds'>,
  result: ProcessResult,
): JudgeVerdict {
  const score = extractScore(metric.score, result, metric.timeout_seconds);
  if (!score.ok) return score;
  const output = `${result.stdout}${result.stderr === '' ? '' : `\n[stderr]\n${result.stderr}`}`;
  return {
    ok: true,
    output: {
      score: score.score,
      findings: [],
      raw_output: output.slice(Math.max(0, output.length - RAW_OUTPUT_CHARS)),
    },
  };
}

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
  const exited = `(the command exited with code ${result.exitCode})`;
  switch (source.from) {
    case 'exit-code':
      return { ok: true, score: result.exitCode === 0 ? 100 : 0 };
    case 'regex':
      return scoreFromRegex(source.pattern, result, exited);
    case 'json':
      return scoreFromJson(source.path, result.stdout, exited);
    case 'tap':
      return percentPassed(countTap(result.stdout), 'TAP', exited);
    case 'junit':
      return percentPassed(countJunit(result.stdout), 'JUnit XML', exited);
  }
}

function scoreFromRegex(pattern: string, result: ProcessResult, exited: string): ScoreResult {
  const regex = new RegExp(pattern, 'm');
  const match = regex.exec(result.stdout) ?? regex.exec(result.stderr);
  if (match === null)
    return { ok: false, reason: `the pattern /${pattern}/ did not match the output ${exited}` };
  const captured = match.slice(1).find((group) => group !== undefined);
  const score = parseNumber(captured);
  if (score === undefined) {
    return {
      ok: false,
      reason: `the pattern /${pattern}/ captured ${JSON.stringify(captured ?? '')}, which is not a number`,
    };
  }
  return { ok: true, score };
}

/** Strict decimal numbers only: `Number()` would also take '', '0x1f' and 'Infinity'. */
export function parseNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

function scoreFromJson(path: string, stdout: string, exited: string): ScoreResult {
  const parts = parseJsonPath(path) ?? [];
  const documents: unknown[] = [];
  try {
    documents.push(JSON.parse(stdout));
  } catch {
    documents.push(...findJsonValues(stdout, { anywhere: false }).map((c) => c.value));
  }
  if (documents.length === 0) return { ok: false, reason: `the metric command printed no JSON ${exited}` };
  let found: unknown;
  for (const document of documents) {
    const value = valueAt(document, parts);
    if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, score: value };
    found ??= value;
  }
  if (found === undefined) return { ok: false, reason: `the JSON output has nothing at "${path}" ${exited}` };
  return {
    ok: false,
    reason: `"${path}" in the JSON output is ${JSON.stringify(found)}, not a finite number ${exited}`,
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

interface TestCounts {
  passed: number;
  failed: number;
}

function percentPassed(counts: TestCounts | undefined, format: string, exited: string): ScoreResult {
  if (counts === undefined || counts.passed + counts.failed === 0) {
    return { ok: false, reason: `no ${format} test results in the output ${exited}` };
  }
  return { ok: true, score: (counts.passed / (counts.passed + counts.failed)) * 100 };
}

/** TAP: the `# pass N` / `# fail N` trailer when present, else the top-level `ok` / `not ok` lines. */
function countTap(stdout: string): TestCounts | undefined {
  const pass = /^# pass (\d+)\s*$/m.exec(stdout);
  const fail = /^# fail (\d+)\s*$/m.exec(stdout);
  if (pass !== null && fail !== null) return { passed: Number(pass[1]), failed: Number(fail[1]) };
  let passed = 0;
  let failed = 0;
  for (const line of stdout.split('\n')) {
    const match = /^(not )?ok\b(.*)$/.exec(line);
    if (match === null) continue;
    const todo = /#\s*TODO\b/i.test(match[2] ?? '');
    if (match[1] === undefined || todo) passed++;
    else failed++;
  }
  return { passed, failed };
}

/** JUnit XML: the root `<testsuites>` totals when present, else the sum over `<testsuite>` elements. */
function countJunit(stdout: string): TestCounts | undefined {
  const attributes = (tag: string) => ({
    tests: Number(/\btests="(\d+)"/.exec(tag)?.[1] ?? NaN),
    bad: Number(/\bfailures="(\d+)"/.exec(tag)?.[1] ?? 0) + Number(/\berrors="(\d+)"/.exec(tag)?.[1] ?? 0),
    skipped: Number(/\bskipped="(\d+)"/.exec(tag)?.[1] ?? 0),
  });
  const root = /<testsuites\b[^>]*>/.exec(stdout);
  const tags =
    root !== null && /\btests="/.test(root[0])
      ? [root[0]]
      : [...stdout.matchAll(/<testsuite\b[^>]*>/g)].map((m) => m[0]);
  let passed = 0;
  let failed = 0;
  for (const tag of tags) {
    const { tests, bad, skipped } = attributes(tag);
    if (!Number.isFinite(tests)) continue;
    failed += bad;
    passed += Math.max(0, tests - bad - skipped);
  }
  return tags.length === 0 ? undefined : { passed, failed };
}
