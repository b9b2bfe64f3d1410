// The spec pipeline's run state (`specs/<slug>/run-state.json`) as a zod schema: the twelve phases, the
// planning and handoff states, evidence and the claims that cite it, completeness scores, question
// rounds, blockers, adversarial reviews, a serving loop's outcome and the history of every change.
import { z } from 'zod';
import { TERMINAL_REASONS } from '../ledger.js';
import { SLUG_PATTERN, SLUG_RULE } from './slug.js';

export { SLUG_PATTERN } from './slug.js';

/** The twelve phases of Forge's spec design, in order. */
export const PHASES = [
  'intake',
  'evidence_fan_out',
  'reduce_merge',
  'gap_analysis',
  'user_input',
  'draft',
  'verify',
  'readiness_gate',
  'adversarial_review',
  'plan_handoff',
  'beads_generation',
  'beads_review',
] as const;
export type Phase = (typeof PHASES)[number];

export const PLANNING_STATES = [
  'DISCOVERY',
  'AWAITING_CLARIFICATION',
  'SPECULATIVE_DRAFT',
  'ADVERSARIAL_REVIEW',
  'PLANNING_READY',
] as const;
export type PlanningState = (typeof PLANNING_STATES)[number];

export const HANDOFF_STATES = ['WITHHELD', 'ELIGIBLE'] as const;
export type HandoffState = (typeof HANDOFF_STATES)[number];

/** The planning state each phase belongs to: the planning state is never set on its own. */
export const PHASE_PLANNING: Readonly<Record<Phase, PlanningState>> = {
  intake: 'DISCOVERY',
  evidence_fan_out: 'DISCOVERY',
  reduce_merge: 'DISCOVERY',
  gap_analysis: 'DISCOVERY',
  user_input: 'AWAITING_CLARIFICATION',
  draft: 'SPECULATIVE_DRAFT',
  verify: 'SPECULATIVE_DRAFT',
  readiness_gate: 'SPECULATIVE_DRAFT',
  adversarial_review: 'ADVERSARIAL_REVIEW',
  plan_handoff: 'PLANNING_READY',
  beads_generation: 'PLANNING_READY',
  beads_review: 'PLANNING_READY',
};

/** The completeness dimensions, each scored 0–100 (the spec-completeness-scoring rubric). */
export const DIMENSIONS = [
  'problem_and_goals',
  'requirements',
  'acceptance_testability',
  'interfaces_and_data',
  'errors_and_edge_cases',
  'non_functional',
  'scope',
  'open_questions',
] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** The 80/80 rule: every dimension at least this, so the whole is too. */
export const GATE_MIN_SCORE = 80;

export const slugSchema = z.string().regex(SLUG_PATTERN, { error: `expected ${SLUG_RULE}` });

const text = z.string().trim().min(1, { error: 'expected a non-empty string' });
const at = z.iso.datetime({ error: 'expected an ISO timestamp' });
const count = z.number().int().min(0, { error: 'expected a whole number ≥ 0' });
const id = (letter: string) =>
  z.string().regex(new RegExp(`^${letter}[1-9][0-9]*$`), { error: `expected an id like ${letter}1` });

export const evidenceIdSchema = id('E');
export const claimIdSchema = id('C');
export const blockerIdSchema = id('B');

const evidence = z.strictObject({ id: evidenceIdSchema, source: text, summary: text, by: text, at });
const claim = z.strictObject({
  id: claimIdSchema,
  text,
  /** The evidence it rests on: provenance. Empty: an unsourced claim, which blocks verification. */
  evidence: z.array(evidenceIdSchema),
  by: text,
  at,
});
const gap = z.strictObject({
  id: id('G'),
  dimension: z.enum(DIMENSIONS).nullable(),
  missing: text,
  by: text,
  at,
});
const questionRound = z
  .strictObject({ round: z.number().int().min(1), asked: count, answered: count, by: text, at })
  .refine((r) => r.answered <= r.asked, { error: 'answered exceeds asked', path: ['answered'] });
const blocker = z.strictObject({
  id: blockerIdSchema,
  reason: text,
  by: text,
  at,
  resolved: z.strictObject({ by: text, at, reason: text }).nullable(),
});
const draft = z.strictObject({
  /** Repository-relative path of the draft spec, usually specs/<slug>/spec.md. */
  path: text,
  /** Its content when recorded: what verification and the scores refer to. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected a sha256 in hex' }),
  by: text,
  at,
});
const review = z.strictObject({ reviewer: text, material: count, minor: count, by: text, at });
const loopOutcome = z.strictObject({
  strategy: z.literal('autoresearch'),
  epic: text,
  final_score: z.number().nullable(),
  best_score: z.number().nullable(),
  terminal_reason: z.enum(TERMINAL_REASONS),
  at,
});

const position = z.strictObject({
  phase: z.enum(PHASES),
  planning: z.enum(PLANNING_STATES),
  handoff: z.enum(HANDOFF_STATES),
});
export type Position = z.output<typeof position>;

const historyEntry = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('transition'), at, by: text, reason: text, from: position, to: position }),
  z.strictObject({ kind: z.literal('record'), at, by: text, reason: text.nullable(), what: z.array(text) }),
]);

export const runStateSchema = z
  .strictObject({
    version: z.literal(1),
    slug: slugSchema,
    /** How the intake judged the request: a sparse one must go through at least one question round. */
    prompt: z.enum(['sparse', 'rich']).nullable(),
    phase: z.enum(PHASES),
    planning: z.enum(PLANNING_STATES),
    handoff: z.enum(HANDOFF_STATES),
    evidence: z.array(evidence),
    claims: z.array(claim),
    /** Who reduced the fan-out into one merged evidence set: one reducer, never two. */
    reducer: text.nullable(),
    /** null until the gap analysis ran; [] when it found none. */
    gaps: z.array(gap).nullable(),
    question_rounds: z.array(questionRound),
    /** The draft the spec pipeline wrote; null until the draft phase records it. */
    draft: draft.nullable().default(null),
    scores: z.partialRecord(z.enum(DIMENSIONS), z.number().int().min(0).max(100)),
    blockers: z.array(blocker),
    reviews: z.array(review),
    beads_epic: text.nullable(),
    /** The last loop that served this spec (a loop config naming the slug), recorded by its retrospective. */
    loop: loopOutcome.nullable(),
    history: z.array(historyEntry),
  })
  .superRefine((state, ctx) => {
    if (state.planning !== PHASE_PLANNING[state.phase]) {
      ctx.addIssue({
        code: 'custom',
        path: ['planning'],
        message: `phase ${state.phase} belongs to ${PHASE_PLANNING[state.phase]}, not ${state.planning}`,
      });
    }
    if (state.handoff === 'ELIGIBLE' && state.planning !== 'PLANNING_READY') {
      ctx.addIssue({ code: 'custom', path: ['handoff'], message: 'ELIGIBLE only in PLANNING_READY' });
    }
    const known = new Set(state.evidence.map((e) => e.id));
    state.claims.forEach((c, index) =>
      c.evidence.forEach((e, at) => {
        if (!known.has(e))
          ctx.addIssue({
            code: 'custom',
            path: ['claims', index, 'evidence', at],
            message: `no evidence ${e}`,
          });
      }),
    );
    for (const key of ['evidence', 'claims', 'gaps', 'blockers'] as const) {
      const seen = new Set<string>();
      (state[key] ?? []).forEach((item, index) => {
        if (seen.has(item.id))
          ctx.addIssue({ code: 'custom', path: [key, index, 'id'], message: `duplicate id ${item.id}` });
        seen.add(item.id);
      });
    }
  });

export type RunState = z.output<typeof runStateSchema>;
export type Evidence = RunState['evidence'][number];
export type Claim = RunState['claims'][number];
export type Blocker = RunState['blockers'][number];
export type Review = RunState['reviews'][number];
export type LoopOutcome = NonNullable<RunState['loop']>;
export type HistoryEntry = RunState['history'][number];

/** A run state that has just started: intake, nothing recorded. */
export function newRunState(slug: string): RunState {
  return {
    version: 1,
    slug,
    prompt: null,
    phase: 'intake',
    planning: 'DISCOVERY',
    handoff: 'WITHHELD',
    evidence: [],
    claims: [],
    reducer: null,
    gaps: null,
    question_rounds: [],
    draft: null,
    scores: {},
    blockers: [],
    reviews: [],
    beads_epic: null,
    loop: null,
    history: [],
  };
}

export function positionOf(state: Pick<RunState, 'phase' | 'planning' | 'handoff'>): Position {
  return { phase: state.phase, planning: state.planning, handoff: state.handoff };
}

export function phaseIndex(phase: Phase): number {
  return PHASES.indexOf(phase);
}
