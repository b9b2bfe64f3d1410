// The human in the loop: asking (`needs-human.md`), telling an answered question from an untouched one,
// and resuming (archive the exchange, stamp `resume-strategist-K`); the ledger is never touched.
import { createHash } from 'node:crypto';
import type { BeadStore } from '../beads/types.js';
import { AppError, ExitCode } from '../infra/errors.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { loadLedgerSummary } from './ledger-summary.js';
import type { LoopContext } from './loop-context.js';
import { stampResumeStrategist, type StampResult } from './stamp.js';
import type { WorkspacePaths } from './workspace.js';

export const ANSWER_HEADING = '## Answer';
const ANSWER_LINE = /^#{1,6}[ \t]*answer[ \t]*:?[ \t]*$/im;
const PLACEHOLDER = '<!-- Write your answer below this line, then run: ralph-loop resume {epic} -->';

/** needs-human.md as the strategist left it: the text and its hash, kept to recognise an untouched file. */
interface AskedRecord {
  sha256: string;
  question: string;
  asked_at: string;
}

export type NeedsHuman =
  | { state: 'none' }
  | { state: 'unanswered'; text: string; question: string; why: string }
  | { state: 'answered'; text: string; question: string; answer: string };

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Removes HTML comments (the placeholder) and surrounding blank lines. */
function cleanAnswer(text: string): string {
  return text.replace(/<!--[\s\S]*?-->/g, '').trim();
}

/** Splits at the last `## Answer` line; `answer` is undefined when the file has no such line. */
export function splitQuestion(text: string): { question: string; answer: string | undefined } {
  let last: RegExpExecArray | undefined;
  const pattern = new RegExp(ANSWER_LINE.source, 'gim');
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) last = match;
  if (last === undefined) return { question: text.trim(), answer: undefined };
  return {
    question: text.slice(0, last.index).trim(),
    answer: cleanAnswer(text.slice(last.index + last[0].length)),
  };
}

/**
 * Whether the question has been answered. With an `## Answer` line: when something other than the
 * placeholder follows it. Without one: when the file differs from the text recorded when it was asked
 * (the added text is the answer). Without either there is no telling, and it counts as unanswered.
 */
export async function readNeedsHuman(files: LoopFiles, paths: WorkspacePaths): Promise<NeedsHuman> {
  const text = await files.readIfExists(paths.needsHuman);
  if (text === undefined) return { state: 'none' };
  const split = splitQuestion(text);
  const asked = await readAskedRecord(files, paths);
  if (split.answer !== undefined) {
    if (split.answer !== '')
      return { state: 'answered', text, question: split.question, answer: split.answer };
    // An empty answer section, but the file was edited elsewhere: the answer is somewhere in it.
    if (asked !== undefined && asked.sha256 !== sha256(text)) {
      return { state: 'answered', text, question: asked.question.trim(), answer: text.trim() };
    }
    return { state: 'unanswered', text, question: split.question, why: 'it has no answer yet' };
  }
  if (asked === undefined) {
    return {
      state: 'unanswered',
      text,
      question: split.question,
      why: `it has no "${ANSWER_HEADING}" line, so an answer cannot be told from the question`,
    };
  }
  if (asked.sha256 === sha256(text)) {
    return {
      state: 'unanswered',
      text,
      question: asked.question,
      why: 'it is unchanged since the question was asked',
    };
  }
  const answer = text.startsWith(asked.question)
    ? cleanAnswer(text.slice(asked.question.length))
    : text.trim();
  return { state: 'answered', text, question: asked.question.trim(), answer };
}

async function readAskedRecord(files: LoopFiles, paths: WorkspacePaths): Promise<AskedRecord | undefined> {
  const text = await files.readIfExists(paths.needsHumanAsked);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = new Map<string, unknown>(Object.entries(value));
  const [hash, question] = [fields.get('sha256'), fields.get('question')];
  return typeof hash === 'string' && typeof question === 'string'
    ? { sha256: hash, question, asked_at: String(fields.get('asked_at')) }
    : undefined;
}

/**
 * Asks the user (`forge-pack stamp --needs-human F`): writes the question to needs-human.md with an
 * `## Answer` section to fill in, and records it as asked. Stamps nothing.
 */
export async function askHuman(
  files: LoopFiles,
  paths: WorkspacePaths,
  epicId: string,
  question: string,
  now: string,
): Promise<void> {
  if (question.trim() === '') {
    throw new AppError('The question is empty: write what you need the user to decide.', {
      exitCode: ExitCode.usage,
    });
  }
  const hasHeading = splitQuestion(question).answer !== undefined;
  const text = hasHeading
    ? question
    : `${question.trimEnd()}\n\n${ANSWER_HEADING}\n\n${PLACEHOLDER.replace('{epic}', epicId)}\n`;
  await files.writeText(paths.needsHuman, text);
  await recordQuestionAsked(files, paths, now);
}

/**
 * Records needs-human.md as it is now as the unanswered question (for a file written without an
 * `## Answer` line). For the runner, when it finds the question a strategist left.
 */
export async function recordQuestionAsked(
  files: LoopFiles,
  paths: WorkspacePaths,
  now: string,
): Promise<void> {
  const text = await files.readIfExists(paths.needsHuman);
  if (text === undefined) return;
  const record: AskedRecord = { sha256: sha256(text), question: text, asked_at: now };
  await files.writeJson(paths.needsHumanAsked, record);
}

/** Puts an answer given on the command line under the `## Answer` line of needs-human.md. */
export async function writeAnswer(files: LoopFiles, paths: WorkspacePaths, answer: string): Promise<void> {
  const text = await files.readIfExists(paths.needsHuman);
  if (text === undefined) return;
  const split = splitQuestion(text);
  const before =
    split.answer === undefined ? text.trimEnd() : text.slice(0, lastHeadingIndex(text)).trimEnd();
  const previous = split.answer === undefined || split.answer === '' ? '' : `${split.answer}\n\n`;
  await files.writeText(paths.needsHuman, `${before}\n\n${ANSWER_HEADING}\n\n${previous}${answer.trim()}\n`);
}

function lastHeadingIndex(text: string): number {
  let index = text.length;
  const pattern = new RegExp(ANSWER_LINE.source, 'gim');
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) index = match.index;
  return index;
}

// ---- resume ----

export interface ResumeOptions {
  /** An answer given on the command line instead of in the file. */
  answer?: string | undefined;
}

export interface ResumeResult extends StampResult {
  k: number;
  /** Where the question and its answer were archived. */
  archived: string;
  question: string;
  answer: string;
  /** The epic had been closed and was reopened so the runner takes its new beads. */
  reopened: boolean;
}

/**
 * Folds the user's answer into the loop: stamps `resume-strategist-K` carrying question and answer,
 * then archives needs-human.md as needs-human-resolved-K.md. Re-running after an interruption stamps
 * nothing twice. The ledger, the scores and the signals are left exactly as they are.
 */
export async function resumeLoop(
  ctx: LoopContext,
  store: BeadStore,
  options: ResumeOptions = {},
): Promise<ResumeResult> {
  const { paths, epicId, files } = ctx;
  if (options.answer !== undefined && (await files.readIfExists(paths.needsHuman)) !== undefined) {
    await writeAnswer(files, paths, options.answer);
  }
  const pending = await readNeedsHuman(files, paths);
  if (pending.state === 'none') {
    throw new AppError(
      `Nothing to resume: the loop of ${epicId} is not waiting for a human (no ${paths.needsHuman}).`,
      {
        exitCode: ExitCode.usage,
        hint: `To run the loop, run: ralph-loop ${epicId}; to see where it stands: ralph-loop status ${epicId}`,
      },
    );
  }
  if (pending.state === 'unanswered') {
    throw new AppError(`The question in ${paths.needsHuman} is not answered: ${pending.why}.`, {
      exitCode: ExitCode.needsHuman,
      hint: `Write your answer under the line "${ANSWER_HEADING}" at the end of that file (or pass --answer "…"), then run: ralph-loop resume ${epicId}`,
    });
  }

  const k = await nextResolvedIndex(files, paths);
  const { summary } = await loadLedgerSummary(files, paths.ledger, {
    direction: ctx.config.metric.direction,
    target: ctx.config.target,
  });
  const stamped = await stampResumeStrategist(ctx, store, {
    k,
    question: pending.question,
    answer: pending.answer,
    signal: await compactJson(files, paths.arbiterSignal),
    terminal: await compactJson(files, paths.terminalSignal),
    findings: summary.last_iter < 0 ? [] : await lastFindings(files, paths.judgeOutput(summary.last_iter)),
  });

  const archived = paths.needsHumanResolved(k);
  // The record keeps question and answer, not the prompt to answer: rewritten in place first, then
  // renamed, so an interruption leaves either the question (resumed again as K) or the archive.
  const text = await files.readIfExists(paths.needsHuman);
  const record = text === undefined ? undefined : withoutPlaceholder(text);
  if (record !== undefined && record !== text) await files.writeText(paths.needsHuman, record);
  await files.rename(paths.needsHuman, archived);
  await files.remove(paths.needsHumanAsked);

  let reopened = false;
  if ((await store.show(epicId)).status === 'closed') {
    await store.reopen(epicId, `Resumed with the answer in ${archived}.`);
    reopened = true;
  }
  return { ...stamped, k, archived, question: pending.question, answer: pending.answer, reopened };
}

/** The text without the "write your answer below" line askHuman put under `## Answer`. */
function withoutPlaceholder(text: string): string {
  const [before, after] = PLACEHOLDER.split('{epic}');
  const escape = (s: string | undefined) => (s ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const line = new RegExp(`^[ \\t]*${escape(before)}\\S*${escape(after)}[ \\t]*\\n?`, 'gm');
  return text.replace(line, '').replace(/\n{3,}/g, '\n\n');
}

/** 1 + the highest K of the needs-human-resolved-K.md files already in the workspace. */
export async function nextResolvedIndex(files: LoopFiles, paths: WorkspacePaths): Promise<number> {
  const names = (await files.list(paths.root)) ?? [];
  let highest = 0;
  for (const name of names) {
    const match = /^needs-human-resolved-(\d+)\.md$/.exec(name);
    if (match !== null) highest = Math.max(highest, Number(match[1]));
  }
  return highest + 1;
}

async function compactJson(files: LoopFiles, path: string): Promise<string | null> {
  const text = await files.readIfExists(path);
  if (text === undefined) return null;
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.trim();
  }
}

const FINDINGS_SHOWN = 20;

async function lastFindings(files: LoopFiles, path: string): Promise<string[]> {
  const text = await files.readIfExists(path);
  if (text === undefined) return [];
  try {
    const value = JSON.parse(text) as { findings?: unknown };
    if (!Array.isArray(value.findings)) return [];
    return value.findings
      .slice(0, FINDINGS_SHOWN)
      .map((finding) => (typeof finding === 'string' ? finding : JSON.stringify(finding)));
  } catch {
    return [];
  }
}
