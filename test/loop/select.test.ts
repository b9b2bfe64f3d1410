// Which agent runs a bead, and where that choice came from: one line per case of the precedence.
import { describe, expect, it } from 'vitest';
import { agentSpecFor, describeAgentSource, type AgentChoices } from '../../src/loop/select.js';

const none: AgentChoices = { commandLine: { roles: {} }, config: {}, builtin: 'claude' };
const choices = (over: {
  flagRoles?: Record<string, string>;
  flag?: string;
  config?: Record<string, string>;
}): AgentChoices => ({
  commandLine: { roles: over.flagRoles ?? {}, all: over.flag },
  config: over.config ?? {},
  builtin: none.builtin,
});
const init = { default: 'claude-sonnet', doer: 'claude-opus', judge: 'claude-haiku' };

describe('agentSpecFor: command line, then label, then config role, config default, built-in', () => {
  it.each([
    // role, labels, choices, agent, where it came from
    ['default', [], none, 'claude', 'built-in default'],
    ['doer', [], none, 'claude', 'built-in default'],
    ['default', [], choices({ config: init }), 'claude-sonnet', '.forge/config.json agents.default'],
    ['doer', [], choices({ config: init }), 'claude-opus', '.forge/config.json agents.doer'],
    ['strategist', [], choices({ config: init }), 'claude-sonnet', '.forge/config.json agents.default'],
    ['doer', ['agent:codex'], choices({ config: init }), 'codex', 'label agent:codex'],
    ['doer', [], choices({ flag: 'scripted', config: init }), 'scripted', '--agent'],
    ['default', [], choices({ flag: 'scripted', config: init }), 'scripted', '--agent'],
    ['doer', ['agent:claude-opus'], choices({ flag: 'scripted' }), 'scripted', '--agent'],
    [
      'doer',
      ['agent:claude-opus'],
      choices({ flagRoles: { doer: 'my-agent' } }),
      'my-agent',
      '--agents doer',
    ],
    ['doer', [], choices({ flagRoles: { doer: 'my-agent' }, flag: 'codex' }), 'my-agent', '--agents doer'],
    [
      'judge',
      ['agent:claude-haiku'],
      choices({ flagRoles: { doer: 'x' }, flag: 'codex' }),
      'codex',
      '--agent',
    ],
    [
      'judge',
      ['agent:claude-haiku'],
      choices({ flagRoles: { doer: 'x' } }),
      'claude-haiku',
      'label agent:claude-haiku',
    ],
    ['toString', [], choices({ config: {} }), 'claude', 'built-in default'],
  ] as const)('role %s, labels %j, choices %j', (role, labels, given, agent, source) => {
    const chosen = agentSpecFor({ labels: [...labels] }, role, given);
    expect(chosen.spec).toBe(agent);
    expect(describeAgentSource(chosen, role)).toBe(source);
    expect(chosen.fromLabel).toBe(source.startsWith('label'));
  });
});
