// Stamping: renders the role templates and creates a cycle's beads under the epic, idempotently.
//
// A cycle is `doer-N → judge-N → arbiter-N → strategist-N`; the soft baseline is `judge-0 → arbiter-0`;
// the end is `retrospective`; an answered question becomes `resume-strategist-K`. Every stamp first
// looks at the epic's children and creates only what is missing, so stamping twice creates nothing
// the second time and a stamp interrupted halfway is completed by the next one.
import { labelValue } from '../loop/select.js';
import { relative, resolve } from 'node:path';
import type { Bead, BeadStore, CreateBeadInput } from '../beads/types.js';
import { readFileIfExists, writeFileAtomic } from '../infra/atomic-file.js';
import { AppError, ConfigError, ExitCode, UsageError } from '../infra/errors.js';
import { iterOf } from '../infra/labels.js';
import { describeProblem } from '../infra/zod-issues.js';
import { loadLoopConfig, type LoopConfig, type ScoreSource } from './config.js';
import { loadLedgerSummary, type LedgerSummary } from './ledger-summary.js';
import { gatherRetrospectiveFacts } from './retrospective-facts.js';
import {
  blindHistory,
  formatScore,
  renderTemplate,
  scoredLine,
  type LedgerDigest,
  type LoopFilePaths,
  type MetricDigest,
  type TemplateName,
  type ViewFor,
} from './templates.js';
import {
  requireLoopWorkspace,
  resolveWorkspaceDir,
  workspacePaths,
  type WorkspacePaths,
} from './workspace.js';

export const LOOP_LABEL = 'autoresearch';
export const CYCLE_ROLES = ['doer', 'judge', 'arbiter', 'strategist'] as const;
export type CycleRole = (typeof CYCLE_ROLES)[number];
export type LoopRole = CycleRole | 'retrospective' | 'resume-strategist';

/** How many ledger lines the strategist, the retrospective and the resume strategist see inline. */
const DIGEST_LINES = 10;

/** Everything stamping needs to know about one loop. */
export interface LoopContext {
  /** Absolute path of the repository root. */
  repo: string;
  paths: WorkspacePaths;
  /** The workspace relative to the repository root. */
  workspace: string;
  config: LoopConfig;
  epicId: string;
  /** Agents call `forge-pack stamp` back with this store, so they write where the runner reads. */
  storeKind: 'br' | 'embedded';
}

export interface StampedBead {
  id: string;
  title: string;
  role: LoopRole;
  iter: number;
}

export interface StampResult {
  epic: string;
  created: StampedBead[];
  existing: StampedBead[];
  /** Mentions of the metric or rubric removed from the doer's description (a directive that leaked them). */
  redactions: number;
}

/** Loads the loop of an epic: its workspace (given, registered, or the default) and its config. */
export async function openLoop(
  repo: string,
  epicId: string,
  options: { workspace?: string; storeKind: 'br' | 'embedded' },
): Promise<LoopContext> {
  const root =
    options.workspace === undefined
      ? (await requireLoopWorkspace(repo, epicId)).root
      : resolveWorkspaceDir(repo, options.workspace).root;
  const paths = workspacePaths(root);
  const config = await loadLoopConfig(paths.config);
  if (config.epic_id !== undefined && config.epic_id !== epicId) {
    throw new UsageError(`${paths.config} belongs to epic ${config.epic_id}, not ${epicId}.`, {
      hint: `Check the epic id, or give the workspace of ${epicId} with --workspace.`,
    });
  }
  return {
    repo,
    paths,
    workspace: relative(repo, root).split('\\').join('/'),
    config,
    epicId,
    storeKind: options.storeKind,
  };
}

// ---- the epic's beads ----

export function loopRoleOf(bead: Pick<Bead, 'labels'>): string | undefined {
  return labelValue(bead, 'role');
}

/** The epic's autoresearch beads (direct children labelled `autoresearch`). */
export async function loopBeads(store: BeadStore, epicId: string): Promise<Bead[]> {
  return (await store.children(epicId)).filter((bead) => bead.labels.includes(LOOP_LABEL));
}

function findBead(beads: readonly Bead[], role: string, iter: number): Bead | undefined {
  return beads.find((bead) => loopRoleOf(bead) === role && iterOf(bead) === iter);
}

/** The highest iteration with a doer bead; 0 when none has been stamped. */
export function lastStampedIter(beads: readonly Bead[]): number {
  let last = 0;
  for (const bead of beads) {
    const iter = iterOf(bead);
    if (loopRoleOf(bead) === 'doer' && iter !== undefined && iter > last) last = iter;
  }
  return last;
}

function stamped(bead: Bead, role: LoopRole, iter: number): StampedBead {
  return { id: bead.id, title: bead.title, role, iter };
}

function labels(ctx: LoopContext, role: LoopRole, iter: number, agent?: string): string[] {
  return [LOOP_LABEL, `role:${role}`, ...(agent === undefined ? [] : [`agent:${agent}`]), `iter:${iter}`];
}

// ---- stamping an iteration ----

export interface StampIterationOptions {
  iter: number;
  /** The strategist's focus directive; `source` is the file it came from. */
  directive?: { text: string; source?: string };
}

/**
 * Stamps iteration `iter` (≥ 1): doer, judge, arbiter and strategist, each depending on the one
 * before, the doer on `strategist-(iter−1)` (or on `arbiter-0` for a soft baseline). Creates nothing
 * when the iteration is already stamped. Refuses an iteration that is not the next one, a loop that
 * has ended, and a loop waiting for a human.
 */
export async function stampIteration(
  ctx: LoopContext,
  store: BeadStore,
  options: StampIterationOptions,
): Promise<StampResult> {
  const { iter } = options;
  if (!Number.isInteger(iter) || iter < 1) {
    throw new UsageError(`The iteration to stamp must be a whole number from 1, got ${iter}.`);
  }
  const beads = await loopBeads(store, ctx.epicId);
  const found = CYCLE_ROLES.map((role) => findBead(beads, role, iter));
  const existing = found.flatMap((bead, index) =>
    bead === undefined ? [] : [stamped(bead, CYCLE_ROLES[index]!, iter)],
  );
  if (existing.length === CYCLE_ROLES.length) {
    return { epic: ctx.epicId, created: [], existing, redactions: 0 };
  }
  const last = lastStampedIter(beads);
  if (iter > last + 1 || (found[0] === undefined && iter <= last)) {
    throw new UsageError(
      `Iteration ${iter} cannot be stamped: the last stamped iteration of ${ctx.epicId} is ${last}, so the next is ${last + 1}.`,
      {
        hint: `Stamp --iter ${last + 1}; see the epic's beads with: forge-pack beads children ${ctx.epicId}`,
      },
    );
  }
  await refuseWhenEnded(ctx);
  await refuseWhenAsking(ctx);

  const inputs = await gatherInputs(ctx);
  let directive = options.directive?.text ?? null;
  if (found[0] === undefined && options.directive !== undefined) {
    const target = ctx.paths.directive(iter);
    if (options.directive.source === undefined || resolve(options.directive.source) !== target) {
      await writeFileAtomic(target, options.directive.text);
    }
  }
  if (directive !== null && directive.trim() === '') directive = null;

  const { config } = ctx;
  const subject = config.subject;
  const previous =
    findBead(beads, 'strategist', iter - 1) ?? (iter === 1 ? findBead(beads, 'arbiter', 0) : undefined);
  const created: StampedBead[] = [];
  let redactions = 0;

  const make = async (
    index: number,
    role: CycleRole,
    build: () => Promise<Omit<CreateBeadInput, 'title' | 'parent' | 'dependsOn'>>,
    dependsOn: Bead | undefined,
  ): Promise<Bead> => {
    const have = found[index];
    if (have !== undefined) return have;
    const bead = await store.create({
      title: `${role}-${iter}: ${subject}`,
      parent: ctx.epicId,
      ...(dependsOn === undefined ? {} : { dependsOn: [dependsOn.id] }),
      ...(await build()),
    });
    created.push(stamped(bead, role, iter));
    return bead;
  };

  const doer = await make(
    0,
    'doer',
    async () => {
      const rendered = await renderDoer(ctx, inputs, iter, directive);
      redactions = rendered.redactions;
      return { description: rendered.text, labels: labels(ctx, 'doer', iter, config.agents.doer) };
    },
    previous,
  );
  const judge = await make(1, 'judge', () => judgeBead(ctx, inputs, iter), doer);
  const arbiter = await make(
    2,
    'arbiter',
    async () => ({
      description: await render(ctx, 'arbiter', arbiterView(ctx, iter)),
      labels: labels(ctx, 'arbiter', iter),
    }),
    judge,
  );
  await make(
    3,
    'strategist',
    async () => ({
      description: await render(ctx, 'strategist', strategistView(ctx, inputs, iter)),
      labels: labels(ctx, 'strategist', iter, config.agents.strategist),
    }),
    arbiter,
  );
  return { epic: ctx.epicId, created, existing, redactions };
}

/** The soft baseline: `judge-0` (the rubric on the untouched artifact) and `arbiter-0`, which records it. */
export async function stampSoftBaseline(ctx: LoopContext, store: BeadStore): Promise<StampResult> {
  if (ctx.config.metric.type !== 'soft') {
    throw new AppError(
      'Only a soft metric has a baseline judged by an agent; a hard one is measured at once.',
    );
  }
  const beads = await loopBeads(store, ctx.epicId);
  const inputs = await gatherInputs(ctx);
  const created: StampedBead[] = [];
  const existing: StampedBead[] = [];
  let judge = findBead(beads, 'judge', 0);
  if (judge === undefined) {
    judge = await store.create({
      title: `judge-0: ${ctx.config.subject}`,
      parent: ctx.epicId,
      ...(await judgeBead(ctx, inputs, 0)),
    });
    created.push(stamped(judge, 'judge', 0));
  } else existing.push(stamped(judge, 'judge', 0));
  const arbiter = findBead(beads, 'arbiter', 0);
  if (arbiter === undefined) {
    const bead = await store.create({
      title: `arbiter-0: ${ctx.config.subject}`,
      parent: ctx.epicId,
      dependsOn: [judge.id],
      description: await render(ctx, 'arbiter', arbiterView(ctx, 0)),
      labels: labels(ctx, 'arbiter', 0),
    });
    created.push(stamped(bead, 'arbiter', 0));
  } else existing.push(stamped(arbiter, 'arbiter', 0));
  return { epic: ctx.epicId, created, existing, redactions: 0 };
}

// ---- the retrospective ----

/**
 * Stamps the retrospective once per loop. It depends on the strategist that stamps it: the strategist
 * (or resume strategist) in progress, else the one of the highest iteration; its `iter:` label is that
 * strategist's. A terminal signal does not stop it: that is when it is stamped.
 */
export async function stampRetrospective(ctx: LoopContext, store: BeadStore): Promise<StampResult> {
  const beads = await loopBeads(store, ctx.epicId);
  const have = beads.find((bead) => loopRoleOf(bead) === 'retrospective');
  if (have !== undefined) {
    return {
      epic: ctx.epicId,
      created: [],
      existing: [stamped(have, 'retrospective', iterOf(have) ?? 0)],
      redactions: 0,
    };
  }
  const strategists = beads.filter((bead) => {
    const role = loopRoleOf(bead);
    return role === 'strategist' || role === 'resume-strategist';
  });
  const byIter = (a: Bead, b: Bead) => (iterOf(b) ?? 0) - (iterOf(a) ?? 0);
  const stamper =
    strategists.filter((bead) => bead.status === 'in_progress').sort(byIter)[0] ??
    strategists.filter((bead) => loopRoleOf(bead) === 'strategist').sort(byIter)[0];
  const iter = stamper === undefined ? lastStampedIter(beads) : (iterOf(stamper) ?? 0);
  const inputs = await gatherInputs(ctx);
  const bead = await store.create({
    title: `retrospective: ${ctx.config.subject}`,
    parent: ctx.epicId,
    ...(stamper === undefined ? {} : { dependsOn: [stamper.id] }),
    description: await render(ctx, 'retrospective', {
      epic: ctx.epicId,
      subject: ctx.config.subject,
      iter,
      program: inputs.program,
      metric: metricDigest(ctx.config),
      soft: ctx.config.metric.type === 'soft',
      ledger: ledgerDigest(inputs.summary),
      paths: loopFilePaths(ctx),
      ...(await gatherRetrospectiveFacts(ctx.paths, ctx.config, inputs.summary)),
    }),
    labels: labels(ctx, 'retrospective', iter, ctx.config.agents.retrospective),
  });
  return { epic: ctx.epicId, created: [stamped(bead, 'retrospective', iter)], existing: [], redactions: 0 };
}

// ---- the resume strategist ----

export interface ResumeStrategistOptions {
  k: number;
  question: string;
  answer: string;
  /** The latest signal file's content and the last judge's findings, read by the caller. */
  signal: string | null;
  terminal: string | null;
  findings: string[];
}

/** Stamps `resume-strategist-K` with the question and its answer; it depends on nothing. */
export async function stampResumeStrategist(
  ctx: LoopContext,
  store: BeadStore,
  options: ResumeStrategistOptions,
): Promise<StampResult> {
  const beads = await loopBeads(store, ctx.epicId);
  const title = `resume-strategist-${options.k}: ${ctx.config.subject}`;
  const iter = lastStampedIter(beads);
  const have = beads.find((bead) => loopRoleOf(bead) === 'resume-strategist' && bead.title === title);
  if (have !== undefined) {
    return {
      epic: ctx.epicId,
      created: [],
      existing: [stamped(have, 'resume-strategist', iter)],
      redactions: 0,
    };
  }
  const inputs = await gatherInputs(ctx);
  const bead = await store.create({
    title,
    parent: ctx.epicId,
    description: await render(ctx, 'resume-strategist', {
      epic: ctx.epicId,
      subject: ctx.config.subject,
      iter,
      k: options.k,
      next_iter: iter + 1,
      question: options.question,
      answer: options.answer,
      program: inputs.program,
      metric: metricDigest(ctx.config),
      ledger: ledgerDigest(inputs.summary),
      signal: options.signal,
      terminal: options.terminal,
      findings: options.findings,
      paths: loopFilePaths(ctx),
      next_directive_path: shownPaths(ctx).directive(iter + 1),
      commands: commandsFor(ctx, iter + 1),
    }),
    labels: labels(ctx, 'resume-strategist', iter, ctx.config.agents.resume_strategist),
  });
  return {
    epic: ctx.epicId,
    created: [stamped(bead, 'resume-strategist', iter)],
    existing: [],
    redactions: 0,
  };
}

// ---- refusals ----

async function refuseWhenEnded(ctx: LoopContext): Promise<void> {
  const text = await readFileIfExists(ctx.paths.terminalSignal);
  if (text === undefined) return;
  let reason = 'a terminal signal';
  try {
    const value = JSON.parse(text) as { reason?: unknown };
    if (typeof value.reason === 'string') reason = value.reason;
  } catch {
    // An unreadable signal still ends the loop; the message just cannot name its reason.
  }
  throw new AppError(`The loop of ${ctx.epicId} has ended (${reason}): no further iteration is stamped.`, {
    exitCode: ExitCode.failure,
    hint: `Stamp the retrospective instead: forge-pack stamp --epic ${ctx.epicId} --retrospective`,
  });
}

async function refuseWhenAsking(ctx: LoopContext): Promise<void> {
  if ((await readFileIfExists(ctx.paths.needsHuman)) === undefined) return;
  throw new AppError(`The loop of ${ctx.epicId} is waiting for a human (${ctx.paths.needsHuman}).`, {
    exitCode: ExitCode.needsHuman,
    hint: `Answer the question in that file, then run: ralph-loop resume ${ctx.epicId}`,
  });
}

// ---- inputs and views ----

interface StampInputs {
  program: string;
  summary: LedgerSummary;
  /** The rubric text of a soft metric. */
  rubric: string | undefined;
}

async function gatherInputs(ctx: LoopContext): Promise<StampInputs> {
  const program = await readFileIfExists(ctx.paths.program);
  if (program === undefined) {
    throw new ConfigError(`${ctx.paths.program}: file not found`, {
      hint: 'Write the loop program there (the stable directive every doer reads).',
    });
  }
  const { metric } = ctx.config;
  let rubric: string | undefined;
  if (metric.type === 'soft') {
    const path = resolve(ctx.repo, metric.rubric_path);
    rubric = await readFileIfExists(path);
    if (rubric === undefined) {
      const problem = {
        file: ctx.paths.config,
        field: 'metric.rubric_path',
        message: `${metric.rubric_path} does not exist`,
      };
      throw new ConfigError(describeProblem(problem), {
        hint: 'Restore the rubric file; the judge of every iteration reads it.',
        problems: [problem],
      });
    }
  }
  const { summary } = await loadLedgerSummary(ctx.paths.ledger, {
    direction: metric.direction,
    target: ctx.config.target,
  });
  return { program, summary, rubric };
}

async function render<N extends TemplateName>(ctx: LoopContext, name: N, view: ViewFor[N]): Promise<string> {
  return renderTemplate(name, view, { overridesDir: ctx.paths.templatesDir });
}

const REDACTED = '[redacted: how the work is evaluated]';

/**
 * Strings the doer must never read: the metric command and how its score is read, the rubric's path
 * and its lines. Short strings are left out: they would match ordinary words.
 */
export function blindSecrets(config: LoopConfig, rubric: string | undefined): string[] {
  const { metric } = config;
  const secrets: string[] = [];
  if (metric.type === 'hard') {
    secrets.push(metric.command);
    if (metric.score.from === 'regex') secrets.push(metric.score.pattern);
    if (metric.score.from === 'json') secrets.push(metric.score.path);
  } else {
    secrets.push(metric.rubric_path);
    for (const line of (rubric ?? '').split('\n')) secrets.push(line.trim());
  }
  const long = secrets.filter((secret) => secret.length >= 6 && !/^[#*\-\s|>]*$/.test(secret));
  return [...new Set(long)].sort((a, b) => b.length - a.length);
}

export function redactSecrets(text: string, secrets: readonly string[]): { text: string; count: number } {
  let count = 0;
  let out = text;
  for (const secret of secrets) {
    const parts = out.split(secret);
    count += parts.length - 1;
    out = parts.join(REDACTED);
  }
  return { text: out, count };
}

async function renderDoer(
  ctx: LoopContext,
  inputs: StampInputs,
  iter: number,
  directive: string | null,
): Promise<{ text: string; redactions: number }> {
  const { summary } = inputs;
  // Built from doer-safe values only: no metric, rubric, target or score enters this object.
  const view: ViewFor['doer'] = {
    epic: ctx.epicId,
    subject: ctx.config.subject,
    iter,
    program: inputs.program,
    directive,
    scope: [...ctx.config.scope.doer_paths],
    history: blindHistory(summary.recent),
    history_omitted: Math.max(0, summary.lines - summary.recent.length),
    counts: { kept: summary.kept, reverted: summary.reverted, crashed: summary.crashed },
  };
  const text = await render(ctx, 'doer', view);
  // The program and the directive are free text a strategist may have filled with what the doer
  // must not see: whatever slipped in is cut out here.
  const redacted = redactSecrets(text, blindSecrets(ctx.config, inputs.rubric));
  return { text: redacted.text, redactions: redacted.count };
}

async function judgeBead(
  ctx: LoopContext,
  inputs: StampInputs,
  iter: number,
): Promise<{ description: string; labels: string[] }> {
  const { metric, subject } = { metric: ctx.config.metric, subject: ctx.config.subject };
  if (metric.type === 'soft') {
    // Built from judge-safe values only: no program, ledger, hypothesis or history.
    const view: ViewFor['judge-soft'] = {
      epic: ctx.epicId,
      subject,
      iter,
      baseline: iter === 0,
      rubric: inputs.rubric ?? '',
      rubric_path: metric.rubric_path,
      artifacts: [metric.artifact_path],
      read_paths:
        ctx.config.scope.judge_paths.length > 0 ? [...ctx.config.scope.judge_paths] : [metric.artifact_path],
    };
    return {
      description: await render(ctx, 'judge-soft', view),
      labels: labels(ctx, 'judge', iter, ctx.config.agents.judge),
    };
  }
  const view: ViewFor['judge-hard'] = {
    epic: ctx.epicId,
    subject,
    iter,
    baseline: iter === 0,
    command: metric.command,
    score_source: describeScoreSource(metric.score),
    timeout_seconds: metric.timeout_seconds,
    judge_output_path: shownPaths(ctx).judgeOutput(iter),
  };
  return { description: await render(ctx, 'judge-hard', view), labels: labels(ctx, 'judge', iter) };
}

function arbiterView(ctx: LoopContext, iter: number): ViewFor['arbiter'] {
  const { config } = ctx;
  const paths = shownPaths(ctx);
  const caps = config.caps;
  return {
    epic: ctx.epicId,
    subject: config.subject,
    iter,
    baseline: iter === 0,
    direction: config.metric.direction,
    min_delta: config.min_delta,
    target: config.target === null ? 'none' : formatScore(config.target),
    max_iterations: caps.max_iterations === 0 ? 'no cap' : String(caps.max_iterations),
    plateau_threshold: caps.plateau_threshold === 0 ? 'never' : String(caps.plateau_threshold),
    max_cost: caps.max_cost_usd === 0 ? 'no cap' : `$${caps.max_cost_usd}`,
    wall_clock: caps.wall_clock_seconds === 0 ? 'no cap' : `${caps.wall_clock_seconds}s`,
    confirmation_rounds: config.confirmation_rounds,
    judge_output_path: paths.judgeOutput(iter),
    ledger_path: paths.ledger,
    arbiter_signal_path: paths.arbiterSignal,
    terminal_signal_path: paths.terminalSignal,
  };
}

function strategistView(ctx: LoopContext, inputs: StampInputs, iter: number): ViewFor['strategist'] {
  return {
    epic: ctx.epicId,
    subject: ctx.config.subject,
    iter,
    next_iter: iter + 1,
    program: inputs.program,
    metric: metricDigest(ctx.config),
    ledger: ledgerDigest(inputs.summary),
    paths: loopFilePaths(ctx),
    judge_output_path: shownPaths(ctx).judgeOutput(iter),
    next_directive_path: shownPaths(ctx).directive(iter + 1),
    commands: commandsFor(ctx, iter + 1),
  };
}

export function ledgerDigest(summary: LedgerSummary): LedgerDigest {
  const recent = summary.recent.slice(-DIGEST_LINES);
  return {
    lines: recent.map(scoredLine),
    omitted: Math.max(0, summary.lines - recent.length),
    baseline: formatScore(summary.baseline_score),
    best: formatScore(summary.best_score),
    best_iter: summary.best_iter === null ? '—' : String(summary.best_iter),
    current: formatScore(summary.current_score),
    kept: summary.kept,
    reverted: summary.reverted,
    crashed: summary.crashed,
    non_improvement_streak: summary.non_improvement_streak,
    cost: `$${summary.total_cost_usd.toFixed(2)}`,
  };
}

export function metricDigest(config: LoopConfig): MetricDigest {
  const { metric, caps } = config;
  const description =
    metric.type === 'hard'
      ? `the command \`${metric.command}\`, run by ralph-loop in the repository root (timeout ${metric.timeout_seconds}s); score: ${describeScoreSource(metric.score)}`
      : `a judge agent scores \`${metric.artifact_path}\` against the rubric \`${metric.rubric_path}\``;
  const capsText = [
    caps.max_iterations === 0 ? 'no iteration cap' : `at most ${caps.max_iterations} iterations`,
    caps.plateau_threshold === 0
      ? 'no plateau stop'
      : `stop after ${caps.plateau_threshold} non-improvements in a row`,
    caps.max_cost_usd === 0 ? 'no cost cap' : `cost cap $${caps.max_cost_usd}`,
    caps.wall_clock_seconds === 0 ? 'no wall-clock cap' : `wall clock ${caps.wall_clock_seconds}s`,
    `the target must hold for ${config.confirmation_rounds} iteration(s)`,
  ].join('; ');
  return {
    type: metric.type,
    description,
    direction: metric.direction === 'maximize' ? 'maximize (higher is better)' : 'minimize (lower is better)',
    target: config.target === null ? 'none' : formatScore(config.target),
    caps: capsText,
  };
}

export function describeScoreSource(score: ScoreSource): string {
  switch (score.from) {
    case 'exit-code':
      return '100 when it exits with code 0, else 0';
    case 'regex':
      return `the first capture group of /${score.pattern}/ in its output`;
    case 'json':
      return `the number at "${score.path}" in its JSON output`;
    case 'tap':
      return 'the percentage of passing tests in its TAP output';
    case 'junit':
      return 'the percentage of passing tests in its JUnit XML output';
  }
}

/**
 * The loop's files as its prompts name them: relative to the repository root, where the agents that
 * read them run. An absolute path would break when the repository is moved or renamed mid-loop.
 */
function shownPaths(ctx: LoopContext): WorkspacePaths {
  return workspacePaths(ctx.workspace);
}

function loopFilePaths(ctx: LoopContext): LoopFilePaths {
  const paths = shownPaths(ctx);
  return {
    workspace: paths.root,
    config: paths.config,
    program: paths.program,
    ledger: paths.ledger,
    arbiter_signal: paths.arbiterSignal,
    terminal_signal: paths.terminalSignal,
    needs_human: paths.needsHuman,
    directives: paths.directivesDir,
    retrospective: paths.retrospective,
    rubric_suggestions: paths.rubricSuggestions,
  };
}

/**
 * The exact commands an agent finishes with, run from the repository root (where the strategists
 * run, also with --worktree). They name the store explicitly, so they reach the store the runner reads.
 */
function commandsFor(ctx: LoopContext, nextIter: number) {
  const base = ['forge-pack', '-C', '.', '--store', ctx.storeKind, 'stamp', '--epic', ctx.epicId];
  const workspace = ['--workspace', ctx.workspace];
  return {
    stamp_next: shellWords([
      ...base,
      '--iter',
      String(nextIter),
      '--directive-file',
      shownPaths(ctx).directive(nextIter),
      ...workspace,
    ]),
    stamp_retrospective: shellWords([...base, '--retrospective', ...workspace]),
    resume: shellWords(['ralph-loop', 'resume', ctx.epicId]),
  };
}

/** Joins words into a POSIX shell command line, quoting only what needs it. */
export function shellWords(words: readonly string[]): string {
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`))
    .join(' ');
}
