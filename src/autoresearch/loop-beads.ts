// The epic's loop beads as labels describe them: `autoresearch`, `role:<role>`, `iter:<n>` and, for
// agent roles, `agent:<name>`. Queries over those labels and the label set a new bead gets.
import type { Bead, BeadStore } from '../beads/types.js';
import { iterOf, labelValue } from '../infra/labels.js';

export const LOOP_LABEL = 'autoresearch';
export const CYCLE_ROLES = ['doer', 'judge', 'arbiter', 'strategist'] as const;
export type CycleRole = (typeof CYCLE_ROLES)[number];
export type LoopRole = CycleRole | 'retrospective' | 'resume-strategist';

export interface StampedBead {
  id: string;
  title: string;
  role: LoopRole;
  iter: number;
}

export function loopRoleOf(bead: Pick<Bead, 'labels'>): string | undefined {
  return labelValue(bead, 'role');
}

/** The epic's autoresearch beads (direct children labelled `autoresearch`). */
export async function loopBeads(store: BeadStore, epicId: string): Promise<Bead[]> {
  return (await store.children(epicId)).filter((bead) => bead.labels.includes(LOOP_LABEL));
}

export function findBead(beads: readonly Bead[], role: string, iter: number): Bead | undefined {
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

export function stamped(bead: Bead, role: LoopRole, iter: number): StampedBead {
  return { id: bead.id, title: bead.title, role, iter };
}

/** The labels of a new loop bead; `agent` names the agent that works it (none for the arbiter). */
export function beadLabels(role: LoopRole, iter: number, agent?: string): string[] {
  return [LOOP_LABEL, `role:${role}`, ...(agent === undefined ? [] : [`agent:${agent}`]), `iter:${iter}`];
}
