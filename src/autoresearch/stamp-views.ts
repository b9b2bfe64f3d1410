// The views the role templates are rendered with, each built from only what that role may read, and
// the inputs they share (the program, the ledger summary, a soft metric's rubric).
import { resolve } from 'node:path';
import { ConfigError } from '../infra/errors.js';
import { shellWords } from '../infra/command-line.js';
import { describeProblem } from '../infra/zod-issues.js';
import { formatSize } from '../infra/size-limits.js';
import { loadLedgerSummary, type LedgerSummary } from './ledger-summary.js';
import { beadLabels } from './loop-beads.js';
import type { LoopContext } from './loop-context.js';
import { describeScoreSource, ledgerDigest, metricDigest } from './prompt-digests.js';
import { blindSecrets, redactSecrets } from './redaction.js';
import {
  blindHistory,
  formatScore,
  renderTemplate,
  type LoopFilePaths,
  type TemplateName,
  type ViewFor,
} from './templates.js';
import { workspacePaths, type WorkspacePaths } from './workspace.js';

export interface StampInputs {
  program: string;
  summary: LedgerSummary;
  /** The rubric text of a soft metric. */
  rubric: string | undefined;
}

export async function gatherInputs(ctx: LoopContext): Promise<StampInputs> {
  const program = await ctx.files.readIfExists(ctx.paths.program);
  if (program === undefined) {
    throw new ConfigError(`${ctx.paths.program}: file not found`, {
      hint: 'Write the loop program there (the stable directive every doer reads).',
    });
  }
  const { metric } = ctx.config;
  let rubric: string | undefined;
  if (metric.type === 'soft') {
    const path = resolve(ctx.repo, metric.rubric_path);
    rubric = await ctx.files.readIfExists(path);
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
  const { summary } = await loadLedgerSummary(ctx.files, ctx.paths.ledger, {
    direction: metric.direction,
    target: ctx.config.target,
  });
  return { program, summary, rubric };
}

export async function render<N extends TemplateName>(
  ctx: LoopContext,
  name: N,
  view: ViewFor[N],
): Promise<string> {
  return renderTemplate(name, view, { overrides: { dir: ctx.paths.templatesDir, files: ctx.files } });
}

export async function renderDoer(
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
    may_change_tests: ctx.config.scope.doer_may_change_tests,
    may_silence_checks: ctx.config.scope.doer_may_silence_checks,
    max_file_size: ctx.config.scope.max_file_bytes === 0 ? null : formatSize(ctx.config.scope.max_file_bytes),
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

/**
 * A soft judge's prompt, from judge-safe values only: no program, ledger, hypothesis or history. The
 * stamp writes it into the judge's bead, and the judge renders it again when it runs (executors/judge.ts).
 */
export async function softJudgePrompt(
  ctx: Pick<LoopContext, 'config' | 'epicId' | 'paths' | 'files'>,
  rubric: string,
  iter: number,
): Promise<string> {
  const metric = ctx.config.metric;
  if (metric.type !== 'soft') throw new Error('softJudgePrompt: the loop has a hard metric');
  const view: ViewFor['judge-soft'] = {
    epic: ctx.epicId,
    subject: ctx.config.subject,
    iter,
    baseline: iter === 0,
    rubric,
    rubric_path: metric.rubric_path,
    artifacts: [metric.artifact_path],
    read_paths:
      ctx.config.scope.judge_paths.length > 0 ? [...ctx.config.scope.judge_paths] : [metric.artifact_path],
  };
  return renderTemplate('judge-soft', view, {
    overrides: { dir: ctx.paths.templatesDir, files: ctx.files },
  });
}

export async function judgeBead(
  ctx: LoopContext,
  inputs: StampInputs,
  iter: number,
): Promise<{ description: string; labels: string[] }> {
  const { metric, subject } = { metric: ctx.config.metric, subject: ctx.config.subject };
  if (metric.type === 'soft') {
    return {
      description: await softJudgePrompt(ctx, inputs.rubric ?? '', iter),
      labels: beadLabels('judge', iter, ctx.config.agents.judge),
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
  return { description: await render(ctx, 'judge-hard', view), labels: beadLabels('judge', iter) };
}

export function arbiterView(ctx: LoopContext, iter: number): ViewFor['arbiter'] {
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

export function strategistView(ctx: LoopContext, inputs: StampInputs, iter: number): ViewFor['strategist'] {
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
    population: populationView(ctx, inputs),
  };
}

const OUTCOME = {
  kept: 'won (kept)',
  lost: 'lost to a better candidate',
  reverted: 'not kept (no candidate beat the best)',
};

/** Which angles of the recent population iterations won and lost, for the strategist. */
function populationView(ctx: LoopContext, inputs: StampInputs): ViewFor['strategist']['population'] {
  const k = ctx.config.population;
  if (k <= 1) return null;
  const candidates = (inputs.summary.recent_candidates ?? []).slice(-3 * k).map((c) => ({
    iter: c.iter,
    candidate: c.candidate,
    angle: c.angle,
    score:
      c.score === null ? `no score${c.reason === undefined ? '' : ` (${c.reason})`}` : formatScore(c.score),
    outcome: OUTCOME[c.decision],
  }));
  return { k, candidates };
}

/**
 * The loop's files as its prompts name them: relative to the repository root, where the agents that
 * read them run. An absolute path would break when the repository is moved or renamed mid-loop.
 */
export function shownPaths(ctx: LoopContext): WorkspacePaths {
  return workspacePaths(ctx.workspace);
}

export function loopFilePaths(ctx: LoopContext): LoopFilePaths {
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
export function commandsFor(ctx: LoopContext, nextIter: number) {
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
