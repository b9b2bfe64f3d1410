// Pure selection and routing rules: which bead runs next, which role it has, which agent runs it.
import { compareTimestamps, type Bead } from '../beads/types.js';
import { labelValue } from '../infra/labels.js';

export { labelValue } from '../infra/labels.js';

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

export function roleOf(bead: Pick<Bead, 'labels'>): string {
  return labelValue(bead, 'role') ?? DEFAULT_ROLE;
}

/**
 * Where each agent choice of a run comes from, most specific first: what the user typed on this
 * command line, the bead's own `agent:` label, the project's `.forge/config.json`, the built-in default.
 */
export interface AgentChoices {
  /** `--agents role=spec` (per role) and `--agent spec` (every agent bead) on this command line. */
  commandLine: { roles: Readonly<Record<string, string>>; all?: string | undefined };
  /** `.forge/config.json` `agents`: entries per role, and `default` for every other bead. */
  config: Readonly<Record<string, string>>;
  /** The agent when nothing else chooses one. */
  builtin: string;
}

/** Where a bead's agent came from; `describeAgentSource` says it in words. */
export type AgentSource = 'flag-role' | 'flag' | 'label' | 'config-role' | 'config-default' | 'built-in';

export interface AgentChoice {
  spec: string;
  source: AgentSource;
  /** A label may only name an agent, never a command. */
  fromLabel: boolean;
}

/**
 * The agent for a bead. The usual rule for CLIs: what the user typed for this run beats everything
 * stored (a bead's label too, since loop beads carry labels stamped from a config); then the bead's
 * label, its most specific stored choice; then the project's config for its role, then the config's
 * default; then the built-in default.
 */
export function agentSpecFor(bead: Pick<Bead, 'labels'>, role: string, choices: AgentChoices): AgentChoice {
  const own = (record: Readonly<Record<string, string>>, key: string): string | undefined =>
    Object.hasOwn(record, key) ? record[key] : undefined;
  const pick = (spec: string, source: AgentSource): AgentChoice => ({
    spec,
    source,
    fromLabel: source === 'label',
  });
  const flagRole = own(choices.commandLine.roles, role);
  if (flagRole !== undefined) return pick(flagRole, 'flag-role');
  if (choices.commandLine.all !== undefined) return pick(choices.commandLine.all, 'flag');
  const label = labelValue(bead, 'agent');
  if (label !== undefined) return pick(label, 'label');
  const configRole = role === DEFAULT_ROLE ? undefined : own(choices.config, role);
  if (configRole !== undefined) return pick(configRole, 'config-role');
  const configDefault = own(choices.config, DEFAULT_ROLE);
  if (configDefault !== undefined) return pick(configDefault, 'config-default');
  return pick(choices.builtin, 'built-in');
}

/** `--agents doer`, `label agent:codex`, `.forge/config.json agents.judge`: what a dry run shows. */
export function describeAgentSource(choice: AgentChoice, role: string): string {
  switch (choice.source) {
    case 'flag-role':
      return `--agents ${role}`;
    case 'flag':
      return '--agent';
    case 'label':
      return `label agent:${choice.spec}`;
    case 'config-role':
      return `.forge/config.json agents.${role}`;
    case 'config-default':
      return '.forge/config.json agents.default';
    case 'built-in':
      return 'built-in default';
  }
}

/** Exponential backoff: base·2^(n-1), capped. */
export function backoffDelay(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}
