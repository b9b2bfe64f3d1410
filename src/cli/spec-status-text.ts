// `forge-pack spec status`: where a spec stands and what the next step needs, as lines for people and
// as one JSON document for scripts and skills.
import {
  gateVerdict,
  nextStep,
  type GateVerdict,
  type NextStep,
} from '../autoresearch/spec-state/machine.js';
import { latestReviews } from '../autoresearch/spec-state/rules.js';
import { DIMENSIONS, type RunState } from '../autoresearch/spec-state/schema.js';

export interface SpecStatus {
  slug: string;
  phase: RunState['phase'];
  planning: RunState['planning'];
  handoff: RunState['handoff'];
  next: NextStep;
  gate: GateVerdict;
  loop: RunState['loop'];
  state: RunState;
}

export function specStatus(state: RunState): SpecStatus {
  return {
    slug: state.slug,
    phase: state.phase,
    planning: state.planning,
    handoff: state.handoff,
    next: nextStep(state),
    gate: gateVerdict(state),
    loop: state.loop,
    state,
  };
}

export function specStatusLines(status: SpecStatus): string[] {
  const { state } = status;
  const open = state.blockers.filter((b) => b.resolved === null);
  const unsourced = state.claims.filter((c) => c.evidence.length === 0).length;
  const reviewers = [...latestReviews(state)].map(([who, n]) => `${who} ${n} material`);
  const scores = DIMENSIONS.map((d) => `${d} ${state.scores[d] ?? '-'}`).join(', ');
  const lines = [
    `${state.slug}: ${state.phase} (${state.planning}), handoff ${state.handoff}`,
    `  request ${state.prompt ?? 'not classified'}; evidence ${state.evidence.length}; claims ${state.claims.length}` +
      `${unsourced > 0 ? ` (${unsourced} unsourced)` : ''}; question rounds ${state.question_rounds.length}; ` +
      `blockers ${open.length} open of ${state.blockers.length}`,
    `  scores: ${scores}`,
    `  reviewers: ${reviewers.length === 0 ? 'none yet' : reviewers.join(', ')}`,
  ];
  if (state.loop !== null) {
    const { loop } = state;
    lines.push(
      `  last loop: ${loop.epic} (${loop.strategy}) ended ${loop.terminal_reason}, final score ${loop.final_score ?? 'none'}, best ${loop.best_score ?? 'none'}`,
    );
  }
  lines.push(
    status.gate.passes
      ? '  readiness gate: passes'
      : `  readiness gate: does not pass (${status.gate.needs.map((n) => n.rule).join(', ')})`,
  );
  const { next } = status;
  if (next.target === null) {
    lines.push('next: nothing; the pipeline is through beads review');
  } else if (next.needs.length === 0) {
    lines.push(`next: forge-pack spec advance ${state.slug} --to ${next.target} --by <who> --reason <why>`);
  } else {
    lines.push(`next: ${next.target}, which needs:`);
    for (const need of next.needs) lines.push(`  - ${need.rule}: ${need.message}`);
  }
  return lines;
}
