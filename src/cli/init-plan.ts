// What `forge-pack init` writes: a fresh `.forge/config.json` from what was detected, and `.forge/.gitignore`.
import type { StoreChoice } from '../beads/open-store.js';
import type { DetectedGate } from './detect-gates.js';
import { AGENT_CLIS, knownAgentCli, type AgentCliName } from './agent-clis.js';
import type { ExecutableProbe } from './environment-probes.js';
import type { ForgeConfig } from './forge-config.js';

export const FORGE_GITIGNORE_PATH = '.forge/.gitignore';

/**
 * Run state under `.forge/` that must stay out of git: per-epic locks, events and transcripts,
 * worktrees, temp files of atomic writes, and config backups. `config.json` and `loops.json` are
 * meant to be committed.
 */
export const FORGE_GITIGNORE_ENTRIES = ['epics/', 'worktrees/', 'logs/', '*.lock', '*.tmp', '*.bak'] as const;

const GITIGNORE_HEADER =
  '# Forge run state (locks, events, transcripts, worktrees); config.json is committed.';

/** The config file as written: only what init decided, everything else left to the defaults. */
export type ForgeConfigFile = Pick<ForgeConfig, 'store' | 'agents' | 'gates'> & {
  actor?: string | undefined;
  agent_commands?: Record<string, string[]>;
};

export interface FreshConfigInput {
  store: StoreChoice;
  /** The agent CLI chosen for every role; undefined writes no agent (ralph-loop --agent decides). */
  agentCli: AgentCliName | undefined;
  gates: readonly DetectedGate[];
  actor?: string | undefined;
}

export function buildFreshConfig(input: FreshConfigInput): ForgeConfigFile {
  const commands = commandsFor(input.agentCli);
  return {
    store: input.store,
    actor: input.actor,
    agents: agentsFor(input.agentCli),
    ...(Object.keys(commands).length === 0 ? {} : { agent_commands: commands }),
    gates: Object.fromEntries(input.gates.map((gate) => [gate.name, gate.argv])),
  };
}

/** The agent CLIs found, in Forge's order of preference (its own adapters first, Claude Code first of all). */
export function installedAgentClis(found: readonly ExecutableProbe[]): AgentCliName[] {
  return AGENT_CLIS.map((cli) => cli.name).filter((name) =>
    found.some((probe) => probe.name === name && probe.path !== undefined),
  );
}

/**
 * Agents per role for one CLI (see AGENT_CLIS): e.g. for Claude Code the strongest model does the work,
 * the cheapest judges, a middle one plans. None: no entry, so nothing names an agent the machine does
 * not have.
 */
export function agentsFor(cli: AgentCliName | undefined): Record<string, string> {
  return cli === undefined ? {} : { ...knownAgentCli(cli).agents };
}

/** The named agents a CLI without an adapter of its own runs through (`agent_commands`). */
export function commandsFor(cli: AgentCliName | undefined): Record<string, string[]> {
  const commands = cli === undefined ? undefined : knownAgentCli(cli).commands;
  return Object.fromEntries(Object.entries(commands ?? {}).map(([name, argv]) => [name, [...argv]]));
}

export interface GitignoreUpdate {
  text: string;
  action: 'created' | 'updated' | 'unchanged';
  added: string[];
}

/** Adds the entries Forge needs to an existing `.forge/.gitignore`, keeping the user's own lines. */
export function mergeGitignore(existing: string | undefined): GitignoreUpdate {
  if (existing === undefined) {
    return {
      text: `${GITIGNORE_HEADER}\n${FORGE_GITIGNORE_ENTRIES.join('\n')}\n`,
      action: 'created',
      added: [...FORGE_GITIGNORE_ENTRIES],
    };
  }
  const present = new Set(existing.split(/\r?\n/).map((line) => line.trim()));
  const added = FORGE_GITIGNORE_ENTRIES.filter((entry) => !present.has(entry));
  if (added.length === 0) return { text: existing, action: 'unchanged', added: [] };
  const base = existing === '' || existing.endsWith('\n') ? existing : `${existing}\n`;
  return { text: `${base}${added.join('\n')}\n`, action: 'updated', added };
}

export function describeGates(
  gates: Record<string, readonly string[] | { argv: readonly string[] }>,
): string {
  const entries = Object.entries(gates);
  if (entries.length === 0) return 'none detected';
  return entries
    .map(([name, gate]) => `${name}: ${('argv' in gate ? gate.argv : gate).join(' ')}`)
    .join(' · ');
}

export function describeAgents(agents: Record<string, string>): string {
  const entries = Object.entries(agents);
  if (entries.length === 0) return 'none set (ralph-loop --agent <spec> decides; built-in default: claude)';
  return entries.map(([role, spec]) => `${role} ${spec}`).join(', ');
}
