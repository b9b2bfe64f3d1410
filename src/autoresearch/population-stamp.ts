// Stamping a population iteration (`population` K > 1): K doers from the same base, each with its own
// angle, K judges (judge i depends on doer i only, so it sees nothing of the others), one arbiter after
// every judge, then the strategist. Idempotent like a one-candidate stamp: only missing beads are made.
//
// The angles: the strategist's directive split at `## Angle <i>` headings gives candidate i its own
// section. A directive without sections (or with too few), and the first iteration, which has no
// strategist yet, get angles derived deterministically: the program's listed ideas (its `-`, `*` or
// `1.` lines) in order, then a fixed list of approaches; every angle is headed "Angle i of K" so no
// two candidates are ever given the same text.
import { join } from 'node:path';
import type { Bead, BeadStore, CreateBeadInput } from '../beads/types.js';
import { UsageError } from '../infra/errors.js';
import { iterOf } from '../infra/labels.js';
import { candidateOf } from './candidates.js';
import {
  beadLabels,
  findBead,
  lastStampedIter,
  loopBeads,
  loopRoleOf,
  stamped,
  type CycleRole,
  type StampedBead,
} from './loop-beads.js';
import type { LoopContext } from './loop-context.js';
import { refuseWhenAsking, refuseWhenEnded } from './stamp-refusals.js';
import { arbiterView, gatherInputs, judgeBead, render, renderDoer, strategistView } from './stamp-views.js';
import type { StampIterationOptions, StampResult } from './stamp.js';

/** Approaches handed out when neither the strategist nor the program names enough distinct ideas. */
const FALLBACK_ANGLES = [
  'the smallest change that could help, made carefully',
  'a bolder change to the structure or the approach itself',
  'a technique different from the most obvious one',
  'removing or simplifying something rather than adding',
  'the weakest part of the current version, fixed first',
  'an idea from a neighbouring field or a well-known method',
  'tuning what is there: parameters, ordering, thresholds',
  'the case the current version handles worst',
];

/** The program's listed ideas: its bullet and numbered lines, in order, without duplicates. */
export function listedIdeas(program: string): string[] {
  const ideas: string[] = [];
  for (const line of program.split('\n')) {
    const match = /^\s*(?:[-*+]|\d+[.)])\s+(.+?)\s*$/.exec(line);
    const idea = match?.[1];
    if (idea !== undefined && !ideas.includes(idea)) ideas.push(idea);
  }
  return ideas;
}

/** The directive's `## Angle <i>` (or `## Candidate <i>`) sections, by i; empty when it has none. */
export function directiveSections(directive: string): Map<number, string> {
  const sections = new Map<number, string>();
  let current: number | undefined;
  let body: string[] = [];
  const flush = () => {
    if (current !== undefined && body.join('\n').trim() !== '') sections.set(current, body.join('\n').trim());
  };
  for (const line of directive.split('\n')) {
    const heading = /^#{1,4}\s*(?:angle|candidate)\s+(\d+)\b/i.exec(line);
    if (heading !== null) {
      flush();
      current = Number(heading[1]);
      body = [];
    } else if (current !== undefined) body.push(line);
  }
  flush();
  return sections;
}

/** K distinct directives, one per candidate (index 0 is candidate 1). */
export function populationAngles(program: string, directive: string | null, k: number): string[] {
  const sections = directive === null ? new Map<number, string>() : directiveSections(directive);
  const shared = directive !== null && sections.size === 0 ? directive.trim() : undefined;
  const ideas = listedIdeas(program);
  const pool = [...ideas, ...FALLBACK_ANGLES.filter((angle) => !ideas.includes(angle))];
  const angles: string[] = [];
  for (let i = 1; i <= k; i += 1) {
    const own = sections.get(i);
    const derived = pool[(i - 1) % pool.length] ?? '';
    const lines = [`Angle ${i} of ${k}: ${own === undefined ? derived : firstLine(own)}`];
    if (own !== undefined) lines.push('', own);
    else {
      if (shared !== undefined && shared !== '') lines.push('', shared);
      lines.push(
        '',
        `Work this angle, not the obvious one: ${k - 1} other attempt(s) start from the same version with other angles.`,
      );
    }
    angles.push(lines.join('\n'));
  }
  return angles;
}

function firstLine(text: string): string {
  return (text.split('\n').find((line) => line.trim() !== '') ?? '').trim().slice(0, 200);
}

/** Where candidate i's angle is kept (the directives directory, beside the strategist's directive). */
export function angleFilePath(ctx: Pick<LoopContext, 'paths'>, iter: number, candidate: number): string {
  return join(ctx.paths.directivesDir, `directive-${iter}-c${candidate}.md`);
}

function findCandidate(
  beads: readonly Bead[],
  role: string,
  iter: number,
  candidate: number,
): Bead | undefined {
  return beads.find(
    (bead) => loopRoleOf(bead) === role && iterOf(bead) === iter && candidateOf(bead) === candidate,
  );
}

export async function stampPopulation(
  ctx: LoopContext,
  store: BeadStore,
  options: StampIterationOptions,
): Promise<StampResult> {
  const { iter } = options;
  const k = ctx.config.population;
  const beads = await loopBeads(store, ctx.epicId);
  const doers = Array.from({ length: k }, (_, i) => findCandidate(beads, 'doer', iter, i + 1));
  const judges = Array.from({ length: k }, (_, i) => findCandidate(beads, 'judge', iter, i + 1));
  const arbiterHave = findBead(beads, 'arbiter', iter);
  const strategistHave = findBead(beads, 'strategist', iter);
  const existing: StampedBead[] = [...doers, ...judges, arbiterHave, strategistHave].flatMap((bead) =>
    bead === undefined ? [] : [stamped(bead, loopRoleOf(bead) as CycleRole, iter)],
  );
  if (existing.length === 2 * k + 2) return { epic: ctx.epicId, created: [], existing, redactions: 0 };
  const last = lastStampedIter(beads);
  const started = doers.some((bead) => bead !== undefined);
  if (iter > last + 1 || (!started && iter <= last)) {
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
  if (!started && options.directive !== undefined) {
    await ctx.files.writeText(ctx.paths.directive(iter), options.directive.text);
  }
  if (directive !== null && directive.trim() === '') directive = null;
  const angles = populationAngles(inputs.program, directive, k);
  const { config } = ctx;
  const previous =
    findBead(beads, 'strategist', iter - 1) ?? (iter === 1 ? findBead(beads, 'arbiter', 0) : undefined);
  const created: StampedBead[] = [];
  let redactions = 0;
  const make = async (
    have: Bead | undefined,
    role: CycleRole,
    title: string,
    dependsOn: readonly Bead[],
    build: () => Promise<Omit<CreateBeadInput, 'title' | 'parent' | 'dependsOn'>>,
  ): Promise<Bead> => {
    if (have !== undefined) return have;
    const bead = await store.create({
      title,
      parent: ctx.epicId,
      dependsOn: dependsOn.length === 0 ? undefined : dependsOn.map((b) => b.id),
      ...(await build()),
    });
    created.push(stamped(bead, role, iter));
    return bead;
  };

  const judged: Bead[] = [];
  for (let i = 1; i <= k; i += 1) {
    const angle = angles[i - 1] ?? '';
    const of = `(candidate ${i} of ${k})`;
    const doer = await make(
      doers[i - 1],
      'doer',
      `doer-${iter}: ${config.subject} ${of}`,
      previous === undefined ? [] : [previous],
      async () => {
        await ctx.files.writeText(angleFilePath(ctx, iter, i), `${angle}\n`);
        const rendered = await renderDoer(ctx, inputs, iter, angle);
        redactions += rendered.redactions;
        return {
          description: rendered.text,
          labels: [...beadLabels('doer', iter, config.agents.doer), `candidate:${i}`],
        };
      },
    );
    const judge = await make(
      judges[i - 1],
      'judge',
      `judge-${iter}: ${config.subject} ${of}`,
      [doer],
      async () => {
        const bead = await judgeBead(ctx, inputs, iter);
        return { ...bead, labels: [...bead.labels, `candidate:${i}`] };
      },
    );
    judged.push(judge);
  }
  const arbiter = await make(
    arbiterHave,
    'arbiter',
    `arbiter-${iter}: ${config.subject}`,
    judged,
    async () => ({
      description: await render(ctx, 'arbiter', arbiterView(ctx, iter)),
      labels: beadLabels('arbiter', iter),
    }),
  );
  await make(strategistHave, 'strategist', `strategist-${iter}: ${config.subject}`, [arbiter], async () => ({
    description: await render(ctx, 'strategist', strategistView(ctx, inputs, iter)),
    labels: beadLabels('strategist', iter, config.agents.strategist),
  }));
  return { epic: ctx.epicId, created, existing, redactions };
}
