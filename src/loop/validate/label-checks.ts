// Checks of the labels that route beads: `role:`, `agent:`, `iter:`, `gates:`, and labels br would refuse.
// Pure: the caller passes what the project's config knows (roles given agents, own agents, gates).
import { parseAgentSpec } from '../../agents/spec.js';
import { LABEL_PATTERN, type Bead, type EpicGraph } from '../../beads/types.js';
import { DEFAULT_ROLE, roleOf } from '../select.js';
import { gatesForBead } from '../gates.js';
import type { ValidationProblem } from './problems.js';

/** Roles an autoresearch loop's built-in executors take (its epic only; `judge` runs read-only anywhere). */
export const LOOP_ROLES: readonly string[] = [
  'doer',
  'judge',
  'arbiter',
  'arbiter-script',
  'strategist',
  'retrospective',
  'resume-strategist',
];
/** Roles Forge's own skills put on beads; they run as plain agents (`human` is for a person). */
export const SKILL_ROLES: readonly string[] = [
  'spec-intake',
  'spec-clarify',
  'spec-score',
  'spec-review',
  'spec-plan',
  'spec-beads',
  'spec-beads-review',
  'human',
];
/** A pipeline's stage bead: the runner runs the stage's loop or epic itself, never an agent. */
export const STAGE_ROLE = 'loop';
const ROLE_NAME = /^[a-z][a-z0-9-]*$/;
const ROUTING = ['role', 'agent', 'iter'] as const;

export interface LabelCheckInput {
  graph: EpicGraph;
  /** The epic is an autoresearch loop (its workspace was found). */
  loop: boolean;
  /** Roles `.forge/config.json` `agents` gives an agent (`doer`, `reviewer`, `default`, …). */
  configRoles: readonly string[];
  /** `.forge/config.json` `agent_commands`: the user's own agents, which labels may name. */
  agentCommands: Readonly<Record<string, readonly string[]>>;
  /** Names of the gates in `.forge/config.json` `gates`. */
  gates: readonly string[];
  /** `--agent` on this command line: agent labels are not used by this run. */
  agentOverride?: boolean;
  /** Gates run after code-writing beads (`runner.run_gates`, `--gates`/`--no-gates`; default on). */
  gatesOn?: boolean;
}

/** Whether the runner runs gates after this bead: agent beads with full tools, not a loop's own roles. */
export function runsGates(bead: Pick<Bead, 'labels'>, loop: boolean): boolean {
  const role = roleOf(bead);
  return role !== 'judge' && role !== STAGE_ROLE && !(loop && LOOP_ROLES.includes(role));
}

/** Why a role is not one a run knows, or undefined when it is. */
export function unknownRole(
  role: string,
  input: Pick<LabelCheckInput, 'loop' | 'configRoles'>,
): string | undefined {
  if (role === DEFAULT_ROLE || role === 'judge' || input.configRoles.includes(role)) return undefined;
  if (SKILL_ROLES.includes(role) || role === STAGE_ROLE) return undefined;
  if (LOOP_ROLES.includes(role))
    return input.loop
      ? undefined
      : 'is a loop role, and this epic is not an autoresearch loop: it runs as a plain agent bead';
  return 'is not a role Forge knows: no executor takes it, and .forge/config.json gives it no agent';
}

export function checkLabels(input: LabelCheckInput): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const add = (p: Omit<ValidationProblem, 'severity'> & { severity?: ValidationProblem['severity'] }) =>
    problems.push({ severity: 'error', ...p });
  const beads = [input.graph.epic, ...input.graph.beads].filter(
    (bead) => bead.status !== 'closed' && bead.status !== 'tombstone',
  );
  for (const bead of beads) {
    for (const label of bead.labels) {
      if (!LABEL_PATTERN.test(label))
        add({
          check: 'label',
          subject: bead.id,
          message: `label ${JSON.stringify(label)} of ${bead.id} is not one br accepts (1 to 50 letters, digits, "_", ":" or "-")`,
          fix: `Replace it with a valid label (forge-pack beads label remove ${bead.id} <label>, then label add).`,
        });
    }
    for (const prefix of ROUTING) {
      const values = bead.labels.filter((l) => l.startsWith(`${prefix}:`));
      if (values.length > 1)
        add({
          check: 'label',
          subject: bead.id,
          message: `${bead.id} has ${values.length} ${prefix}: labels (${values.join(', ')}); the runner reads only the first`,
          fix: `Keep one: forge-pack beads label remove ${bead.id} ${values.slice(1).join(' ')}`,
        });
    }
    if (bead.issue_type === 'epic') continue; // no run takes an epic: its role and agent do nothing
    problems.push(...roleProblems(bead, input), ...agentProblems(bead, input), ...gateProblems(bead, input));
    const iter = bead.labels.find((l) => l.startsWith('iter:'));
    if (iter !== undefined && !/^iter:\d+$/.test(iter))
      add({
        check: 'label',
        subject: bead.id,
        message: `${bead.id} has ${iter}: an iteration is a whole number, so the loop does not count this bead as any`,
        fix: `Label it with its iteration: forge-pack beads label remove ${bead.id} ${iter}, then label add ${bead.id} iter:<N>.`,
      });
  }
  return problems;
}

function roleProblems(bead: Bead, input: LabelCheckInput): ValidationProblem[] {
  const label = bead.labels.find((l) => l.startsWith('role:'));
  if (label === undefined) return [];
  const role = label.slice('role:'.length);
  if (!ROLE_NAME.test(role))
    return [
      {
        severity: 'error',
        check: 'label',
        subject: bead.id,
        message: `${bead.id} has ${JSON.stringify(label)}: a role is lower-case letters, digits and "-"`,
        fix: `Fix the label: forge-pack beads label remove ${bead.id} ${label}, then label add ${bead.id} role:<role>.`,
      },
    ];
  if (role === 'human')
    return [
      {
        severity: 'warning',
        check: 'role',
        subject: bead.id,
        message: `${bead.id} (role:human) is for a person, but it is inside the epic: the run gives it to an agent`,
        fix: 'Keep questions for people outside the epic and make the bead that needs the answer depend on them.',
      },
    ];
  const why = unknownRole(role, input);
  if (why === undefined) return [];
  const loopRole = LOOP_ROLES.includes(role);
  return [
    {
      severity: loopRole ? 'warning' : 'error',
      check: 'role',
      subject: bead.id,
      message: `${bead.id} has role:${role}, which ${why}`,
      fix: loopRole
        ? `Nothing to do if a plain agent should do it; otherwise run it in its loop's epic.`
        : `Fix the role (roles Forge knows: default, judge, ${LOOP_ROLES.filter((r) => r !== 'judge').join(', ')} in a loop, ${SKILL_ROLES.join(', ')}), or give role ${role} an agent in .forge/config.json "agents".`,
    },
  ];
}

function agentProblems(bead: Bead, input: LabelCheckInput): ValidationProblem[] {
  const label = bead.labels.find((l) => l.startsWith('agent:'));
  if (label === undefined) return [];
  const parsed = parseAgentSpec(label.slice('agent:'.length), { commands: input.agentCommands });
  if (parsed.ok) return [];
  return [
    {
      severity: input.agentOverride === true ? 'warning' : 'error',
      check: 'agent',
      subject: bead.id,
      message: `${bead.id} has ${label}: ${parsed.reason}${input.agentOverride === true ? ' (--agent overrides it in this run)' : ''}`,
      fix: `Name an agent a label can name (forge-pack beads label remove ${bead.id} ${label}, then label add ${bead.id} agent:<name>), or add yours under "agent_commands" in .forge/config.json.`,
    },
  ];
}

function gateProblems(bead: Bead, input: LabelCheckInput): ValidationProblem[] {
  const chosen = gatesForBead(bead.labels, input.gates);
  if (!('error' in chosen)) return [];
  const matters = input.gatesOn !== false && runsGates(bead, input.loop);
  return [
    {
      severity: matters ? 'error' : 'warning',
      check: 'gate',
      subject: bead.id,
      message: `${bead.id}: ${chosen.error}${matters ? '' : ' (no gates run after this bead in a run)'}`,
      fix: 'Fix the gates: label, use gates:none, or add the gate under "gates" in .forge/config.json.',
    },
  ];
}
