// Stamping: renders the role templates and creates a cycle's beads under the epic, idempotently.
//
// A cycle is `doer-N → judge-N → arbiter-N → strategist-N`; the soft baseline is `judge-0 → arbiter-0`;
// the end is `retrospective`; an answered question becomes `resume-strategist-K`. Every stamp first
// looks at the epic's children and creates only what is missing, so stamping twice creates nothing
// the second time and a stamp interrupted halfway is completed by the next one.
import { resolve } from 'node:path';
import type { Bead, BeadStore, CreateBeadInput } from '../beads/types.js';
import { AppError, UsageError } from '../infra/errors.js';
import { iterOf } from '../infra/labels.js';
import {
  beadLabels,
  CYCLE_ROLES,
  findBead,
  lastStampedIter,
  loopBeads,
  loopRoleOf,
  stamped,
  type CycleRole,
  type StampedBead,
} from './loop-beads.js';
import type { LoopContext } from './loop-context.js';
import { ledgerDigest, metricDigest } from './prompt-digests.js';
import { stampPopulation } from './population-stamp.js';
import { refuseBeforeTheEnd, refuseWhenAsking, refuseWhenEnded } from './stamp-refusals.js';
import { gatherRetrospectiveFacts } from './retrospective-facts.js';
import {
  arbiterView,
  commandsFor,
  gatherInputs,
  judgeBead,
  loopFilePaths,
  render,
  renderDoer,
  shownPaths,
  strategistView,
} from './stamp-views.js';

export interface StampResult {
  epic: string;
  created: StampedBead[];
  existing: StampedBead[];
  /** Mentions of the metric or rubric removed from the doer's description (a directive that leaked them). */
  redactions: number;
}

// ---- stamping an iteration ----

export interface StampIterationOptions {
  iter: number;
  /** The strategist's focus directive; `source` is the file it came from. */
  directive?: { text: string; source?: string } | undefined;
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
  if (ctx.config.population > 1) return stampPopulation(ctx, store, options);
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
      await ctx.files.writeText(target, options.directive.text);
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
      dependsOn: dependsOn === undefined ? undefined : [dependsOn.id],
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
      return { description: rendered.text, labels: beadLabels('doer', iter, config.agents.doer) };
    },
    previous,
  );
  const judge = await make(1, 'judge', () => judgeBead(ctx, inputs, iter), doer);
  const arbiter = await make(
    2,
    'arbiter',
    async () => ({
      description: await render(ctx, 'arbiter', arbiterView(ctx, iter)),
      labels: beadLabels('arbiter', iter),
    }),
    judge,
  );
  await make(
    3,
    'strategist',
    async () => ({
      description: await render(ctx, 'strategist', strategistView(ctx, inputs, iter)),
      labels: beadLabels('strategist', iter, config.agents.strategist),
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
      labels: beadLabels('arbiter', 0),
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
  await refuseBeforeTheEnd(ctx);
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
    dependsOn: stamper === undefined ? undefined : [stamper.id],
    description: await render(ctx, 'retrospective', {
      epic: ctx.epicId,
      subject: ctx.config.subject,
      iter,
      program: inputs.program,
      metric: metricDigest(ctx.config),
      soft: ctx.config.metric.type === 'soft',
      ledger: ledgerDigest(inputs.summary),
      paths: loopFilePaths(ctx),
      ...(await gatherRetrospectiveFacts(ctx.files, ctx.paths, ctx.config, inputs.summary)),
    }),
    labels: beadLabels('retrospective', iter, ctx.config.agents.retrospective),
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
    labels: beadLabels('resume-strategist', iter, ctx.config.agents.resume_strategist),
  });
  return {
    epic: ctx.epicId,
    created: [stamped(bead, 'resume-strategist', iter)],
    existing: [],
    redactions: 0,
  };
}
