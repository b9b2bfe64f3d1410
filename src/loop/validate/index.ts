// `forge-pack validate` and the check before every run: all checks of one epic's beads, as data.
import { checkGraph, type GraphCheckInput } from './graph-checks.js';
import { gatesForBead } from '../gates.js';
import { checkLabels, runsGates, type LabelCheckInput } from './label-checks.js';
import { sortProblems, type ValidationProblem } from './problems.js';

export * from './problems.js';
export { checkGraph, findCycles } from './graph-checks.js';
export { checkLabels, LOOP_ROLES, runsGates, SKILL_ROLES, unknownRole } from './label-checks.js';

export interface EpicCheckInput extends GraphCheckInput, LabelCheckInput {
  /** Configured gates whose program is not there (not on PATH, or no file at its path). */
  missingGatePrograms: readonly { name: string; program: string }[];
}

/** Every problem of the epic's graph and labels, grouped and ordered for reading. */
export function checkEpic(input: EpicCheckInput): ValidationProblem[] {
  return sortProblems([...checkGraph(input), ...checkLabels(input), ...checkGatePrograms(input)]);
}

/** A gate whose program is missing fails every bead that runs it: an error when a bead here would (gates on). */
export function checkGatePrograms(input: EpicCheckInput): ValidationProblem[] {
  const pending = input.graph.beads.filter(
    (bead) => bead.issue_type !== 'epic' && bead.status !== 'closed' && bead.status !== 'tombstone',
  );
  return input.missingGatePrograms.map(({ name, program }) => {
    const runs = (bead: (typeof pending)[number]) => {
      const chosen = gatesForBead(bead.labels, input.gates);
      return runsGates(bead, input.loop) && 'gates' in chosen && chosen.gates.includes(name);
    };
    const users = input.gatesOn === false ? [] : pending.filter(runs).map((b) => b.id);
    return {
      severity: users.length > 0 ? 'error' : 'warning',
      check: 'gate',
      subject: '.forge/config.json',
      message: `gates.${name}: its program ${JSON.stringify(program)} is not there (not on PATH, or no such file)${users.length > 0 ? `, and ${users.length} bead(s) here run it` : ''}`,
      fix: `Install ${program} or put it on PATH, or fix gates.${name} in .forge/config.json (a relative path is taken from the repository root).`,
    };
  });
}
