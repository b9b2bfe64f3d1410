// The readiness state machine: moves asked for by name, checked against the rule table, applied with a
// history entry; what the next step needs; whether the readiness gate passes; a serving loop's re-entry.
import { GATE_RULES, RULES, violations, type Move, type Transition, type Violation } from './rules.js';
import {
  HANDOFF_STATES,
  PHASE_PLANNING,
  PHASES,
  PLANNING_STATES,
  phaseIndex,
  positionOf,
  type HandoffState,
  type LoopOutcome,
  type Phase,
  type PlanningState,
  type RunState,
} from './schema.js';

/** A phase, a planning state (its first phase) or a handoff state: what `advance --to` accepts. */
export type Target = Phase | PlanningState | HandoffState;

export const TARGETS: readonly Target[] = [...PHASES, ...PLANNING_STATES, ...HANDOFF_STATES];

export function isTarget(value: string): value is Target {
  return (TARGETS as readonly string[]).includes(value);
}

export interface Who {
  by: string;
  reason: string;
  /** ISO time of the change. */
  at: string;
}

/** The move a target names from `state`: a planning state means its first phase. */
export function moveTo(state: RunState, target: Target): Move {
  if ((HANDOFF_STATES as readonly string[]).includes(target))
    return { kind: 'handoff', to: target as HandoffState };
  const phase = (PHASES as readonly string[]).includes(target)
    ? (target as Phase)
    : (PHASES.find((p) => PHASE_PLANNING[p] === target) ?? state.phase);
  return { kind: 'phase', from: state.phase, to: phase };
}

export type AdvanceResult =
  { ok: true; state: RunState; transition: Transition } | { ok: false; violations: Violation[] };

/** The state after moving to `target`, or every rule that forbids the move. */
export function advance(state: RunState, target: Target, who: Who): AdvanceResult {
  const transition: Transition = { ...moveTo(state, target), by: who.by, reason: who.reason };
  const refused = violations(state, transition);
  if (refused.length > 0) return { ok: false, violations: refused };
  return { ok: true, state: applyMove(state, transition, who), transition };
}

/** Applies a move the rules allowed (or one the system makes, like a loop's re-entry). */
function applyMove(state: RunState, move: Move, who: Who): RunState {
  const from = positionOf(state);
  let next: RunState;
  if (move.kind === 'handoff') {
    next = { ...state, handoff: move.to };
  } else {
    const planning = PHASE_PLANNING[move.to];
    // Leaving PLANNING_READY withdraws the handoff: ELIGIBLE exists only there.
    const handoff = planning === 'PLANNING_READY' ? state.handoff : 'WITHHELD';
    next = { ...state, phase: move.to, planning, handoff };
  }
  const entry = {
    kind: 'transition' as const,
    at: who.at,
    by: who.by,
    reason: who.reason,
    from,
    to: positionOf(next),
  };
  return { ...next, history: [...state.history, entry] };
}

export interface NextStep {
  /** What `advance --to` would be asked next; null when the pipeline is through its last phase. */
  target: Target | null;
  /** The rules that refuse that move today, with what each needs. */
  needs: Violation[];
}

/** Where the spec goes next and what that needs: the plan handoff is released before beads are made. */
export function nextStep(state: RunState): NextStep {
  let target: Target | null;
  if (state.phase === 'plan_handoff' && state.handoff === 'WITHHELD') target = 'ELIGIBLE';
  else target = PHASES[phaseIndex(state.phase) + 1] ?? null;
  if (target === null) return { target, needs: [] };
  const probe: Transition = { ...moveTo(state, target), by: 'status', reason: 'what is needed next' };
  return { target, needs: violations(state, probe) };
}

export interface GateVerdict {
  passes: boolean;
  /** Empty when it passes. */
  needs: Violation[];
}

/**
 * The readiness gate: the spec has reached it (or gone past) and every gate rule holds today. Scores
 * alone never pass it: an open blocker, an unsourced claim or a sparse request never asked about fail it.
 */
export function gateVerdict(state: RunState): GateVerdict {
  const needs: Violation[] = [];
  if (phaseIndex(state.phase) < phaseIndex('readiness_gate')) {
    needs.push({
      rule: 'reached-readiness-gate',
      message: `the spec is in ${state.phase}, before the readiness gate`,
    });
  }
  const probe: Transition = {
    kind: 'phase',
    from: 'readiness_gate',
    to: 'adversarial_review',
    by: 'gate',
    reason: 'gate check',
  };
  for (const rule of RULES) {
    if (!(GATE_RULES as readonly string[]).includes(rule.name)) continue;
    const message = rule.check(state, probe);
    if (message !== undefined) needs.push({ rule: rule.name, message });
  }
  return { passes: needs.length === 0, needs };
}

/**
 * A loop that served the spec has ended: its outcome is recorded and a spec at or past the readiness
 * gate goes back to it (handoff withheld), where the gate's rules decide again. A spec not yet there
 * stays in its phase: a loop never lets it skip the phases before the gate. A system move, not a request.
 */
export function reenterAfterLoop(state: RunState, outcome: LoopOutcome, by: string): RunState {
  const score = outcome.final_score === null ? 'no final score' : `final score ${outcome.final_score}`;
  const ended = `loop ${outcome.epic} (${outcome.strategy}) ended: ${outcome.terminal_reason}, ${score}`;
  const recorded = { ...state, loop: outcome };
  if (phaseIndex(state.phase) < phaseIndex('readiness_gate')) {
    const what = [`${ended}; the spec stays in ${state.phase}, before the readiness gate`];
    const entry = { kind: 'record' as const, at: outcome.at, by, reason: null, what };
    return { ...recorded, history: [...state.history, entry] };
  }
  return applyMove(
    recorded,
    { kind: 'phase', from: state.phase, to: 'readiness_gate' },
    { by, reason: `${ended}; back at the readiness gate`, at: outcome.at },
  );
}
