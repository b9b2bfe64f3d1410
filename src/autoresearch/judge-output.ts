// Judge results: the `judge-output-N.json` schema, a soft judge's final answer, and a hard metric's output.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import type { LoopFiles } from '../infra/loop-files.js';
import type { ProcessResult } from '../infra/process.js';
import { describeZodError } from '../infra/zod-issues.js';
import type { HardMetricConfig } from './config.js';
import { findJsonValues, type JsonCandidate } from './json-text.js';
import { extractScore } from './scorers.js';

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
  /** How a hard metric's score was read (`149/153 passed (TAP, exit 1)`); a soft judge's stray value is dropped. */
  evidence: z.string().optional().catch(undefined),
  /** A hard metric measured more than once (`metric.repeat`): every run's score; `score` is their median. */
  samples: z.array(z.number()).optional().catch(undefined),
});
export type JudgeOutput = z.output<typeof judgeOutputSchema>;
export type Finding = JudgeOutput['findings'][number];

/** A judge either produced a valid output or failed with a reason (after its retries). */
export type JudgeVerdict = { ok: true; output: JudgeOutput } | { ok: false; reason: string };

export function judgeOutputPath(workspaceDir: string, iter: number): string {
  return join(workspaceDir, `judge-output-${iter}.json`);
}

/**
 * What this process wrote as each judge output, by where the file is kept (LoopFiles.locate: the same
 * through any port, a population candidate's included). The file is the record a person reads, but
 * any process of the user can rewrite it, and one an agent hid from the sweep (`setsid env -i …`)
 * outlives its bead: the arbiter this process runs next trusts what the judge wrote, not what the
 * file says by then. A file this process did not write (a resumed run, another worker) has no entry,
 * and is read as it is.
 */
const written = new WeakMap<object, Map<string, { digest: string; score: number }>>();
/**
 * Entries kept per store, newest last: a judge output is read by its arbiter right after its judge,
 * and an iteration writes at most 8 (a population's candidates), so a night's loop keeps 64, not one
 * per iteration (figure 4's memory stays flat).
 */
export const JUDGE_OUTPUTS_KEPT = 64;

/** A digest of the output's values (raw_output can be 4 KB: a long loop keeps only these). */
function digestOf(output: JudgeOutput): string {
  return createHash('sha256').update(JSON.stringify(output)).digest('hex');
}

export async function writeJudgeOutput(files: LoopFiles, path: string, output: JudgeOutput): Promise<void> {
  const parsed = judgeOutputSchema.parse(output);
  await files.writeJson(path, parsed);
  const where = files.locate(path);
  const byPath = written.get(where.store) ?? new Map<string, { digest: string; score: number }>();
  written.set(where.store, byPath);
  byPath.delete(where.path);
  byPath.set(where.path, { digest: digestOf(parsed), score: parsed.score });
  for (const oldest of byPath.keys()) {
    if (byPath.size <= JUDGE_OUTPUTS_KEPT) break;
    byPath.delete(oldest);
  }
}

/**
 * A missing or invalid file is a judge failure (the arbiter records a crash), not an exception; so is a
 * file that no longer holds what this process's judge wrote there.
 */
export async function readJudgeOutput(files: LoopFiles, path: string): Promise<JudgeVerdict> {
  const content = await files.readIfExists(path);
  if (content === undefined)
    return { ok: false, reason: `${path} does not exist: the judge failed or never ran` };
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return { ok: false, reason: `${path} is not valid JSON` };
  }
  const verdict = validate(value, path);
  const where = files.locate(path);
  const wrote = written.get(where.store)?.get(where.path);
  if (wrote !== undefined && (!verdict.ok || digestOf(verdict.output) !== wrote.digest)) {
    return {
      ok: false,
      reason: `${path} changed after the judge wrote it (score ${wrote.score}): something else rewrote it, so it is not scored`,
    };
  }
  return verdict;
}

function validate(value: unknown, source: string): JudgeVerdict {
  const result = judgeOutputSchema.safeParse(value);
  if (result.success) return { ok: true, output: result.data };
  return { ok: false, reason: describeZodError(source, result.error) };
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
    if (verdict.ok) {
      // Samples are the runner's own measurements of a hard metric; an agent's are not taken.
      const { samples: _dropped, ...output } = verdict.output;
      return { ok: true, output: { ...output, raw_output: output.raw_output ?? answer } };
    }
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

const RAW_OUTPUT_CHARS = 4000;

/** A hard metric's judge output, with the tests its run counted (ScoreResult.tests). */
export type HardVerdict = { ok: true; output: JudgeOutput; tests?: number } | { ok: false; reason: string };

/** Turns the metric command's result into a judge output, or a failure the arbiter records as a crash. */
export function judgeHardMetric(
  metric: Pick<HardMetricConfig, 'score' | 'timeout_seconds'>,
  result: ProcessResult,
): HardVerdict {
  const score = extractScore(metric.score, result, metric.timeout_seconds);
  if (!score.ok) return score;
  const output = `${result.stdout}${result.stderr === '' ? '' : `\n[stderr]\n${result.stderr}`}`;
  return {
    ok: true,
    ...(score.tests === undefined ? {} : { tests: score.tests }),
    output: {
      score: score.score,
      findings: [],
      raw_output: output.slice(Math.max(0, output.length - RAW_OUTPUT_CHARS)),
      evidence: score.evidence,
    },
  };
}
