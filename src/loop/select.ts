// Pure selection and routing rules: which bead runs next, which role it has, which agent runs it.
import { compareTimestamps, type Bead } from '../beads/types.js';

export const FAILED_LABEL = 'ralph:failed';
export const DEFAULT_ROLE = 'default';

/** Deterministic order: priority, then creation time, then id. */
export function compareForRun(a: Bead, b: Bead): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  const byTime = compareTimestamps(a.created_at, b.created_at);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The next bead to run among ready ones: never the epic itself, never one already in progress. */
export function pickNextBead(ready: readonly Bead[], epicId: string): Bead | undefined {
  return ready
    .filter((bead) => bead.id !== epicId && bead.status === 'open' && bead.issue_type !== 'epic')
    .sort(compareForRun)[0];
}

export function labelValue(bead: Pick<Bead, 'labels'>, prefix: string): string | undefined {
  const label = bead.labels.find((l) => l.startsWith(`${prefix}:`));
  return label === undefined ? undefined : label.slice(prefix.length + 1);
}

export function roleOf(bead: Pick<Bead, 'labels'>): string {
  return labelValue(bead, 'role') ?? DEFAULT_ROLE;
}

/**
 * The agent for a bead: its `agent:` label, else the role's default from config, else the run's
 * default (`--agent`, config `agents.default`).
 */
export function agentSpecFor(
  bead: Pick<Bead, 'labels'>,
  role: string,
  roleAgents: Readonly<Record<string, string>>,
  defaultAgent: string,
): { spec: string; fromLabel: boolean } {
  const label = labelValue(bead, 'agent');
  if (label !== undefined) return { spec: label, fromLabel: true };
  return { spec: roleAgents[role] ?? roleAgents[DEFAULT_ROLE] ?? defaultAgent, fromLabel: false };
}

/** Exponential backoff: base·2^(n-1), capped. */
export function backoffDelay(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}
