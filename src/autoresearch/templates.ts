// Bead descriptions from Handlebars templates: one view per role, built so each role sees only what it may.
//
// The blind contract is enforced here by construction: a template can only print what its view holds,
// and the doer's view is built without the metric, the rubric, the target or any score, the judge's
// without the program, the ledger or any hypothesis. A workspace may override a template
// (`<workspace>/templates/<name>.hbs`) but an override still only sees its role's view. Templates are
// compiled in strict mode and rendered against a view that throws on any name it does not hold, so a
// typo (even inside `{{#if}}`) is an error naming the template, never an empty string.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as HandlebarsApi from 'handlebars';
// The shipped templates are the package's own files, not a loop's state: read from the disk directly.
import { readFileIfExists } from '../infra/atomic-file.js';
import { AppError, ConfigError } from '../infra/errors.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { DECISION_WORDS, type DecisionWord } from './decision-words.js';
import type { Decision, LedgerLine } from './ledger.js';
import type { RetrospectiveFigures, RetrospectiveNoise } from './retrospective-facts.js';
import { describeGuardFailure, formatTracks } from './check-figures.js';

export const TEMPLATE_NAMES = [
  'doer',
  'judge-soft',
  'judge-hard',
  'arbiter',
  'strategist',
  'retrospective',
  'resume-strategist',
] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

/** The shipped templates: `<package>/templates/`, from both `src/autoresearch` and `dist/autoresearch`. */
export const SHIPPED_TEMPLATES_DIR = fileURLToPath(new URL('../../templates/', import.meta.url));

// ---- views ----

interface BeadView {
  epic: string;
  subject: string;
  iter: number;
}

/** What a doer may know of an earlier iteration: never its score, delta or reason. */
export interface BlindHistoryLine {
  iter: number;
  outcome: DecisionWord;
  hypothesis: string;
}

export interface DoerView extends BeadView {
  program: string;
  directive: string | null;
  scope: string[];
  /** The doer may change test files and the test runner's settings (`scope.doer_may_change_tests`). */
  may_change_tests: boolean;
  /** The doer may add checker suppressions and change checkers' settings (`scope.doer_may_silence_checks`). */
  may_silence_checks: boolean;
  /** The largest file the doer's commit takes (`scope.max_file_bytes`, as `100 MiB`); null: no limit. */
  max_file_size: string | null;
  history: BlindHistoryLine[];
  /** Earlier iterations not listed. */
  history_omitted: number;
  counts: { kept: number; reverted: number; crashed: number };
}

export interface JudgeSoftView extends BeadView {
  baseline: boolean;
  rubric: string;
  rubric_path: string;
  artifacts: string[];
  read_paths: string[];
}

export interface JudgeHardView extends BeadView {
  baseline: boolean;
  command: string;
  score_source: string;
  timeout_seconds: number;
  judge_output_path: string;
}

export interface ArbiterView extends BeadView {
  baseline: boolean;
  direction: string;
  min_delta: number;
  target: string;
  max_iterations: string;
  plateau_threshold: string;
  max_cost: string;
  wall_clock: string;
  confirmation_rounds: number;
  judge_output_path: string;
  ledger_path: string;
  arbiter_signal_path: string;
  terminal_signal_path: string;
}

/** A ledger line as the strategist reads it: scores included, formatted. */
export interface ScoredLine {
  iter: number;
  decision: Decision;
  score: string;
  delta: string;
  best: string;
  hypothesis: string;
  reason: string;
  cost: string;
  /** The guard or track threshold that failed, in one sentence; empty when none did. */
  guard: string;
  /** The tracks measured on the iteration (`size 120000, gz 41000`); empty when none. */
  tracks: string;
}

export interface LedgerDigest {
  lines: ScoredLine[];
  omitted: number;
  baseline: string;
  best: string;
  best_iter: string;
  current: string;
  kept: number;
  reverted: number;
  crashed: number;
  non_improvement_streak: number;
  cost: string;
}

export interface MetricDigest {
  type: 'hard' | 'soft';
  /** One line: the command and how the score is read, or the rubric and the artifact. */
  description: string;
  direction: string;
  target: string;
  caps: string;
}

export interface LoopFilePaths {
  workspace: string;
  config: string;
  program: string;
  ledger: string;
  arbiter_signal: string;
  terminal_signal: string;
  needs_human: string;
  directives: string;
  retrospective: string;
  rubric_suggestions: string;
}

export interface StrategistView extends BeadView {
  next_iter: number;
  program: string;
  metric: MetricDigest;
  ledger: LedgerDigest;
  paths: LoopFilePaths;
  judge_output_path: string;
  next_directive_path: string;
  commands: { stamp_next: string; stamp_retrospective: string; resume: string };
  /** A population loop (K > 1): K, and the recent iterations' candidates with the angle each worked. */
  population: {
    k: number;
    candidates: { iter: number; candidate: number; angle: string; score: string; outcome: string }[];
  } | null;
}

export interface RetrospectiveView extends BeadView {
  program: string;
  metric: MetricDigest;
  soft: boolean;
  ledger: LedgerDigest;
  paths: LoopFilePaths;
  /** Repeated measurements and the keeps that were marginal against their noise; null with `repeat` 1. */
  noise: RetrospectiveNoise | null;
  /** What the loop cost and earned. */
  figures: RetrospectiveFigures;
}

export interface ResumeStrategistView extends BeadView {
  k: number;
  next_iter: number;
  question: string;
  answer: string;
  program: string;
  metric: MetricDigest;
  ledger: LedgerDigest;
  /** The latest signal as JSON text, or null when none was written. */
  signal: string | null;
  terminal: string | null;
  findings: string[];
  paths: LoopFilePaths;
  next_directive_path: string;
  commands: { stamp_next: string; stamp_retrospective: string; resume: string };
}

export interface ViewFor {
  doer: DoerView;
  'judge-soft': JudgeSoftView;
  'judge-hard': JudgeHardView;
  arbiter: ArbiterView;
  strategist: StrategistView;
  retrospective: RetrospectiveView;
  'resume-strategist': ResumeStrategistView;
}

// ---- view helpers ----

/** The doer's history: iteration, outcome and hypothesis only. Scores, deltas and reasons never pass. */
export function blindHistory(lines: readonly LedgerLine[]): BlindHistoryLine[] {
  return lines.map((line) => ({
    iter: line.iter,
    outcome: DECISION_WORDS[line.decision],
    hypothesis: line.hypothesis,
  }));
}

export function formatScore(score: number | null | undefined): string {
  if (score === null || score === undefined) return '—';
  return String(Number(score.toPrecision(12)));
}

export function formatDelta(delta: number | null | undefined): string {
  if (delta === null || delta === undefined) return '—';
  return delta > 0 ? `+${formatScore(delta)}` : formatScore(delta);
}

export function scoredLine(line: LedgerLine): ScoredLine {
  return {
    iter: line.iter,
    decision: line.decision,
    score: formatScore(line.score_after),
    delta: formatDelta(line.delta),
    best: formatScore(line.best_after),
    hypothesis: line.hypothesis,
    reason: line.reason ?? '',
    cost: `$${line.cost_usd.toFixed(2)}`,
    guard: describeGuardFailure(line),
    tracks: formatTracks(line.tracks),
  };
}

// ---- rendering ----

export interface RenderOptions {
  /**
   * `<workspace>/templates`, read through the loop's files: a file there with the template's name
   * replaces the shipped one.
   */
  overrides?: { dir: string; files: LoopFiles };
  /** Where shipped templates are read from (tests). */
  shippedDir?: string;
}

// handlebars is CommonJS with `export =`: required, so its types come along without interop flags.
const handlebars = (createRequire(import.meta.url)('handlebars') as typeof HandlebarsApi).create();
const compiled = new Map<string, { source: string; render: ReturnType<typeof handlebars.compile> }>();

/** Renders a role's template with its view; the override in the workspace wins over the shipped one. */
export async function renderTemplate<N extends TemplateName>(
  name: N,
  view: ViewFor[N],
  options: RenderOptions = {},
): Promise<string> {
  const { path, source } = await loadTemplate(name, options);
  let entry = compiled.get(path);
  if (entry?.source !== source) {
    entry = { source, render: handlebars.compile(source, { strict: true, noEscape: true }) };
    compiled.set(path, entry);
  }
  try {
    return normalizeBlankLines(entry.render(strictView(view, '')));
  } catch (error) {
    throw new ConfigError(`${path}: ${(error as Error).message}`, {
      hint: `The variables a ${name} template can use are those of its view; see the shipped ${name}.hbs.`,
    });
  }
}

export async function loadTemplate(
  name: TemplateName,
  options: RenderOptions = {},
): Promise<{ path: string; source: string; override: boolean }> {
  if (options.overrides !== undefined) {
    const path = join(options.overrides.dir, `${name}.hbs`);
    const source = await options.overrides.files.readIfExists(path);
    if (source !== undefined) return { path, source, override: true };
  }
  const path = join(options.shippedDir ?? SHIPPED_TEMPLATES_DIR, `${name}.hbs`);
  const source = await readFileIfExists(path);
  if (source === undefined) {
    throw new AppError(`The shipped template ${path} is missing.`, {
      hint: 'Reinstall forge-loop: its package ships templates/*.hbs.',
    });
  }
  return { path, source, override: false };
}

/**
 * A read-only view of `value` that throws on any name it lacks. Handlebars' strict mode only checks
 * plain `{{name}}`; this also catches names used as helper arguments (`{{#if name}}`, `{{#each name}}`).
 */
function strictView<T>(value: T, path: string): T {
  if (value === null || typeof value !== 'object') return value;
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key !== 'string') return Reflect.get(target, key, receiver) as unknown;
      if (!(key in target)) throw new Error(`unknown variable "${path}${key}"`);
      return strictView(Reflect.get(target, key, receiver) as unknown, `${path}${key}.`);
    },
    set() {
      throw new Error('a template view is read-only');
    },
  });
}

/** Template control lines leave runs of blank lines; keep at most one, and end with one newline. */
function normalizeBlankLines(text: string): string {
  return `${text
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}
