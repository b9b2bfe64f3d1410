// Agent choices from the command line and `.forge/config.json`: `--agents role=spec` parsing, the
// run's precedence inputs, and the agents a new loop stamps on its beads.
import { InvalidArgumentError } from 'commander';
import { parseAgentSpec } from '../agents/spec.js';
import { UsageError } from '../infra/errors.js';
import type { AgentChoices } from '../loop/select.js';
import type { ForgeConfig } from './forge-config.js';

/** The agent when neither the command line, a label nor the config names one. */
export const BUILT_IN_AGENT = 'claude';

/** The roles of an autoresearch loop, as they are named in `.autoresearch/config.json` `agents`. */
const LOOP_AGENT_ROLES = ['doer', 'judge', 'strategist', 'retrospective', 'resume_strategist'] as const;
type LoopAgentRole = (typeof LOOP_AGENT_ROLES)[number];

/**
 * `doer=claude-opus,judge=codex` → `{doer: 'claude-opus', judge: 'codex'}` (repeatable; later wins).
 * Roles are written as on labels (`resume-strategist`; `resume_strategist` is accepted too).
 */
export function parseRoleAgents(
  value: string,
  previous: Record<string, string> = {},
): Record<string, string> {
  const agents = { ...previous };
  for (const item of value.split(',').map((part) => part.trim())) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0 || eq === item.length - 1) {
      throw new InvalidArgumentError(`expected role=agent pairs such as doer=claude-opus, got '${item}'.`);
    }
    const role = item.slice(0, eq).trim().replace(/_/g, '-');
    if (role === 'default') {
      throw new InvalidArgumentError('use --agent <spec> for every bead; --agents names roles (doer=…).');
    }
    agents[role] = item.slice(eq + 1).trim();
  }
  return agents;
}

/** What a run chooses agents from: this command line, then (per bead) its label, the config, the built-in. */
export function runAgentChoices(
  flags: { agent?: string; agents?: Record<string, string> },
  config: Pick<ForgeConfig, 'agents'> & Partial<Pick<ForgeConfig, 'agent_commands'>>,
): AgentChoices {
  // An agent the run could not start is the command line's fault, said before anything runs (the
  // config's own are checked as it is read).
  const given = [
    ...(flags.agent === undefined ? [] : [['--agent', flags.agent] as const]),
    ...Object.entries(flags.agents ?? {}).map(([role, spec]) => [`--agents ${role}`, spec] as const),
  ];
  for (const [flag, spec] of given) {
    const parsed = parseAgentSpec(spec, { allowCommand: true, commands: config.agent_commands ?? {} });
    if (!parsed.ok) throw new UsageError(`${flag} ${spec}: ${parsed.reason}.`);
  }
  return {
    commandLine: { roles: flags.agents ?? {}, all: flags.agent },
    config: config.agents,
    builtin: BUILT_IN_AGENT,
  };
}

/**
 * The agents `forge-pack loop` writes into the loop's config (and so stamps on its beads): `--agents`
 * first, then `.forge/config.json` `agents.<role>`, then its `agents.default`; roles neither sets keep
 * the loop's built-in defaults. Each must be an agent a label can name: a built-in one or one of the
 * user's `agent_commands`, never a command line.
 */
export function loopAgents(
  flagAgents: Readonly<Record<string, string>> | undefined,
  config: Pick<ForgeConfig, 'agents' | 'agent_commands'>,
): Record<string, string> {
  // A role the loop does not have stays in, so the loop config's validation names it.
  const out: Record<string, string> = Object.fromEntries(
    Object.entries(flagAgents ?? {}).filter(
      ([role]) => !(LOOP_AGENT_ROLES as readonly string[]).includes(role),
    ),
  );
  const fromConfig = (role: LoopAgentRole): { spec: string; from: string } | undefined => {
    const key = role.replace(/_/g, '-');
    if (Object.hasOwn(config.agents, key))
      return { spec: config.agents[key] ?? '', from: `.forge/config.json agents.${key}` };
    // Retrospectives and resume strategists follow the strategist unless named themselves.
    if (role === 'retrospective' || role === 'resume_strategist') return undefined;
    if (Object.hasOwn(config.agents, 'default'))
      return { spec: config.agents.default ?? '', from: '.forge/config.json agents.default' };
    return undefined;
  };
  for (const role of LOOP_AGENT_ROLES) {
    const flag = flagAgents !== undefined && Object.hasOwn(flagAgents, role) ? flagAgents[role] : undefined;
    const chosen = flag === undefined ? fromConfig(role) : { spec: flag, from: `--agents ${role}` };
    if (chosen === undefined) continue;
    const parsed = parseAgentSpec(chosen.spec, { commands: config.agent_commands });
    if (!parsed.ok) {
      throw new UsageError(`${chosen.from}: ${parsed.reason}.`, {
        hint: `A loop's beads can only name an agent. Name your command in .forge/config.json "agent_commands" (e.g. "my-agent": ["my-agent", "--flag"]) and use its name.`,
      });
    }
    out[role] = chosen.spec.trim();
  }
  return out;
}
