// The readiness rules as a table: each has a name, says what it guarantees, and refuses the moves that
// would break it. Pure: a state and a move in, the rules that forbid it out.
import {
  DIMENSIONS,
  GATE_MIN_SCORE,
  PHASE_PLANNING,
  phaseIndex,
  type HandoffState,
  type Phase,
  type PlanningState,
  type RunState,
} from './schema.js';

/** A move of the machine: to another phase (the planning state follows), or of the handoff. */
export type Move = { kind: 'phase'; from: Phase; to: Phase } | { kind: 'handoff'; to: HandoffState };

/** A move as asked for: who asks and why are part of it. */
export type Transition = Move & { by: string; reason: string };

export interface Rule {
  name: string;
  /** One sentence: what the rule guarantees. */
  says: string;
  /** Whether the rule has a say in this transition. */
  governs(transition: Transition): boolean;
  /** What is wrong with `state` for a transition the rule governs, or undefined when nothing is. */
  check(state: RunState, transition: Transition): string | undefined;
}

export interface Violation {
  rule: string;
  message: string;
}

function isForward(t: Transition): t is Transition & { kind: 'phase'; from: Phase; to: Phase } {
  return t.kind === 'phase' && phaseIndex(t.to) > phaseIndex(t.from);
}

/** Moving forward out of `phase`: its output is checked. */
function leaves(t: Transition, phase: Phase): boolean {
  return isForward(t) && t.from === phase;
}

/** Moving forward into `planning` from another planning state. */
function enters(t: Transition, planning: PlanningState): boolean {
  return isForward(t) && PHASE_PLANNING[t.to] === planning && PHASE_PLANNING[t.from] !== planning;
}

/** Reaching PLANNING_READY, or releasing the handoff (which needs everything PLANNING_READY needs). */
function reachesReady(t: Transition): boolean {
  return enters(t, 'PLANNING_READY') || (t.kind === 'handoff' && t.to === 'ELIGIBLE');
}

const openBlockers = (state: RunState) => state.blockers.filter((b) => b.resolved === null);

/** The dimensions not yet scored, and those below the 80/80 line. */
export function scoreShortfalls(state: RunState): { unscored: string[]; low: string[] } {
  const unscored = DIMENSIONS.filter((d) => state.scores[d] === undefined);
  const low = DIMENSIONS.filter((d) => (state.scores[d] ?? GATE_MIN_SCORE) < GATE_MIN_SCORE).map(
    (d) => `${d} ${String(state.scores[d])}`,
  );
  return { unscored, low };
}

const always = (): boolean => true;
const gateMoves = (t: Transition): boolean => enters(t, 'ADVERSARIAL_REVIEW') || reachesReady(t);

export const RULES: readonly Rule[] = [
  {
    name: 'who-and-why',
    says: 'every transition names who made it and why',
    governs: always,
    check: (_s, t) =>
      t.by.trim() === '' || t.reason.trim() === '' ? 'a transition needs --by and --reason' : undefined,
  },
  {
    name: 'one-phase-at-a-time',
    says: "forward moves go one phase at a time, so each phase's output is checked before the next starts",
    governs: (t) => t.kind === 'phase',
    check: (_s, t) => {
      if (t.kind !== 'phase') return undefined;
      if (t.to === t.from) return `the spec is already in ${t.to}`;
      return isForward(t) && phaseIndex(t.to) !== phaseIndex(t.from) + 1
        ? `${t.to} is not the phase after ${t.from}; advance one phase at a time`
        : undefined;
    },
  },
  {
    name: 'intake-classifies-prompt',
    says: 'intake records whether the request was sparse or rich',
    governs: (t) => leaves(t, 'intake'),
    check: (s) =>
      s.prompt === null ? 'intake has not classified the request (record --prompt sparse|rich)' : undefined,
  },
  {
    name: 'evidence-fan-out-collects',
    says: 'the evidence fan-out ends with at least one piece of evidence',
    governs: (t) => leaves(t, 'evidence_fan_out'),
    check: (s) =>
      s.evidence.length === 0 ? 'no evidence recorded (record --evidence … --source …)' : undefined,
  },
  {
    name: 'single-reducer',
    says: 'one reducer merges the fan-out into claims',
    governs: (t) => leaves(t, 'reduce_merge'),
    check: (s) =>
      s.reducer === null
        ? 'no reducer recorded (record --reducer <name>, once, by the one agent that merged)'
        : undefined,
  },
  {
    name: 'claims-trace-to-evidence',
    says: 'every canonical claim cites evidence before the draft is verified or planned from',
    governs: (t) => leaves(t, 'reduce_merge') || leaves(t, 'verify') || reachesReady(t),
    check: (s) => {
      if (s.claims.length === 0) return 'no claims recorded (record --claim … --from E1)';
      const unsourced = s.claims.filter((c) => c.evidence.length === 0).map((c) => c.id);
      return unsourced.length > 0
        ? `claims without evidence: ${unsourced.join(', ')} (record --cite C1 --from E1)`
        : undefined;
    },
  },
  {
    name: 'gaps-analysed',
    says: 'the gap analysis records its gaps (or that there are none) before user input',
    governs: (t) => leaves(t, 'gap_analysis'),
    check: (s) =>
      s.gaps === null ? 'the gap analysis has not run (record --gap … or --no-gaps)' : undefined,
  },
  {
    name: 'sparse-prompt-needs-questions',
    says: 'a sparse request with zero question rounds can never leave user input or reach PLANNING_READY',
    governs: (t) => leaves(t, 'user_input') || reachesReady(t),
    check: (s) =>
      s.prompt === 'sparse' && !s.question_rounds.some((r) => r.asked > 0)
        ? 'the request was sparse and no question round has been asked (record --question-round N)'
        : undefined,
  },
  {
    name: 'questions-answered',
    says: 'user input ends when every question asked has an answer (or a recorded default)',
    governs: (t) => leaves(t, 'user_input'),
    check: (s) => {
      const open = s.question_rounds.filter((r) => r.answered < r.asked).map((r) => `round ${r.round}`);
      return open.length > 0 ? `unanswered questions in ${open.join(', ')}` : undefined;
    },
  },
  {
    name: 'draft-recorded',
    says: 'the draft phase ends with the draft spec recorded (its path and content hash)',
    governs: (t) => leaves(t, 'draft'),
    check: (s) => (s.draft === null ? 'no draft recorded (record --draft specs/<slug>/spec.md)' : undefined),
  },
  {
    name: 'verify-scores-every-dimension',
    says: 'verification ends with every completeness dimension scored',
    governs: (t) => leaves(t, 'verify'),
    check: (s) => {
      const { unscored } = scoreShortfalls(s);
      return unscored.length > 0 ? `not scored: ${unscored.join(', ')}` : undefined;
    },
  },
  {
    name: 'blockers-beat-scores',
    says: 'no score overrides a blocker: ADVERSARIAL_REVIEW, PLANNING_READY and ELIGIBLE need none open',
    governs: gateMoves,
    check: (s) => {
      const open = openBlockers(s);
      return open.length > 0
        ? `open blockers: ${open.map((b) => `${b.id} (${b.reason})`).join('; ')}`
        : undefined;
    },
  },
  {
    name: 'eighty-eighty',
    says: `every completeness dimension is scored and at least ${GATE_MIN_SCORE} to pass the readiness gate`,
    governs: gateMoves,
    check: (s) => {
      const { unscored, low } = scoreShortfalls(s);
      const parts = [
        ...(unscored.length > 0 ? [`not scored: ${unscored.join(', ')}`] : []),
        ...(low.length > 0 ? [`below ${GATE_MIN_SCORE}: ${low.join(', ')}`] : []),
      ];
      return parts.length > 0 ? parts.join('; ') : undefined;
    },
  },
  {
    name: 'reviewers-zero-material',
    says: 'PLANNING_READY needs at least one adversarial reviewer, and every reviewer at zero material findings',
    governs: reachesReady,
    check: (s) => {
      const latest = latestReviews(s);
      if (latest.size === 0) return 'no adversarial review recorded (record --review <name> --material N)';
      const material = [...latest].filter(([, n]) => n > 0).map(([who, n]) => `${who} ${n}`);
      return material.length > 0 ? `material findings open: ${material.join(', ')}` : undefined;
    },
  },
  {
    name: 'handoff-only-from-planning-ready',
    says: 'the handoff becomes ELIGIBLE only in PLANNING_READY',
    governs: (t) => t.kind === 'handoff' && t.to === 'ELIGIBLE',
    check: (s) =>
      s.planning !== 'PLANNING_READY' ? `the spec is ${s.planning}, not PLANNING_READY` : undefined,
  },
  {
    name: 'handoff-changes',
    says: 'a handoff move changes the handoff',
    governs: (t) => t.kind === 'handoff',
    check: (s, t) =>
      t.kind === 'handoff' && t.to === s.handoff ? `the handoff is already ${t.to}` : undefined,
  },
  {
    name: 'beads-need-eligible-handoff',
    says: 'beads are generated only from a plan whose handoff is ELIGIBLE',
    governs: (t) => leaves(t, 'plan_handoff'),
    check: (s) =>
      s.handoff !== 'ELIGIBLE' ? 'the handoff is WITHHELD (advance --to ELIGIBLE first)' : undefined,
  },
  {
    name: 'beads-epic-recorded',
    says: 'beads generation ends with the build epic recorded',
    governs: (t) => leaves(t, 'beads_generation'),
    check: (s) => (s.beads_epic === null ? 'no build epic recorded (record --beads-epic <id>)' : undefined),
  },
];

/** The rules the readiness gate applies, whatever move is asked: what `specGatePasses` checks. */
export const GATE_RULES = [
  'claims-trace-to-evidence',
  'sparse-prompt-needs-questions',
  'blockers-beat-scores',
  'eighty-eighty',
] as const;

/** Each adversarial reviewer's latest count of material findings. */
export function latestReviews(state: RunState): Map<string, number> {
  const latest = new Map<string, number>();
  for (const review of state.reviews) latest.set(review.reviewer, review.material);
  return latest;
}

/** Every rule that forbids the transition, in table order; empty when it is allowed. */
export function violations(
  state: RunState,
  transition: Transition,
  rules: readonly Rule[] = RULES,
): Violation[] {
  const out: Violation[] = [];
  for (const rule of rules) {
    if (!rule.governs(transition)) continue;
    const message = rule.check(state, transition);
    if (message !== undefined) out.push({ rule: rule.name, message });
  }
  return out;
}
