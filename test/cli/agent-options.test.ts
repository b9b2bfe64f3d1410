// Agent options: --agents pairs, the agents a new loop stamps, and the names users may give their own agents.
import { describe, expect, it } from 'vitest';
import { loopAgents, parseRoleAgents, runAgentChoices } from '../../src/cli/agent-options.js';
import { forgeConfigSchema } from '../../src/cli/forge-config.js';

const config = (value: unknown) => forgeConfigSchema.parse(value);

describe('ralph-loop --agents', () => {
  it('reads role=agent pairs, repeatable, roles written as on labels', () => {
    const first = parseRoleAgents('doer=my-agent, judge=codex');
    expect(parseRoleAgents('resume_strategist=scripted', first)).toEqual({
      doer: 'my-agent',
      judge: 'codex',
      'resume-strategist': 'scripted',
    });
  });

  it.each(['doer', 'doer=', '=codex', 'default=codex'])('refuses %j', (value) => {
    expect(() => parseRoleAgents(value)).toThrow();
  });

  it('refuses an agent no run could start, on the command line and in the config, before anything runs', () => {
    // Seen: "gemini-" passed doctor, validate and --dry-run, then failed its first bead (exit 5).
    for (const flags of [{ agent: 'gemini-' }, { agents: { doer: 'opencode-' } }]) {
      expect(() => runAgentChoices(flags, { agents: {} })).toThrow(/is not a model name/);
    }
    const bad = forgeConfigSchema.safeParse({ agents: { default: 'gemini-' } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({ path: ['agents', 'default'] });
    expect(bad.error?.issues[0]?.message).toMatch(/is not a model name/);
    // A command, or a name of the user's own, stays fine.
    expect(
      config({ agents: { default: 'my-agent --flag', doer: 'mine' }, agent_commands: { mine: ['x'] } }),
    ).toBeDefined();
    expect(
      runAgentChoices({ agent: 'mine' }, { agents: {}, agent_commands: { mine: ['x'] } }).commandLine.all,
    ).toBe('mine');
  });

  it('puts the command line above the config for the runner', () => {
    expect(
      runAgentChoices({ agent: 'scripted', agents: { doer: 'x' } }, { agents: { default: 'codex' } }),
    ).toEqual({
      commandLine: { roles: { doer: 'x' }, all: 'scripted' },
      config: { default: 'codex' },
      builtin: 'claude',
    });
  });
});

describe('forge-pack loop: the agents stamped on the beads', () => {
  const own = { 'my-agent': ['my-agent'] };
  it.each([
    // --agents, .forge/config.json, the loop config's agents
    [undefined, {}, {}],
    [undefined, { agents: { default: 'codex' } }, { doer: 'codex', judge: 'codex', strategist: 'codex' }],
    [
      undefined,
      { agents: { default: 'claude-sonnet', doer: 'claude-opus', 'resume-strategist': 'codex' } },
      {
        doer: 'claude-opus',
        judge: 'claude-sonnet',
        strategist: 'claude-sonnet',
        resume_strategist: 'codex',
      },
    ],
    [
      { doer: 'my-agent' },
      { agents: { default: 'codex' }, agent_commands: own },
      { doer: 'my-agent', judge: 'codex', strategist: 'codex' },
    ],
    [{ doer: 'scripted', doerr: 'x' }, {}, { doer: 'scripted', doerr: 'x' }],
  ] as const)('--agents %j with config %j → %j', (flags, file, expected) => {
    expect(loopAgents(flags, config(file))).toEqual(expected);
  });

  it('refuses an agent a label could not name, saying where it came from and how to name it', () => {
    expect(() => loopAgents({ doer: 'their-agent' }, config({}))).toThrow(
      /--agents doer: unknown agent "their-agent"/,
    );
    expect(() => loopAgents(undefined, config({ agents: { default: 'my-agent --flag' } }))).toThrow(
      /\.forge\/config\.json agents\.default: unknown agent/,
    );
  });
});

describe('.forge/config.json agent_commands', () => {
  it('takes names to argv arrays', () => {
    expect(config({ agent_commands: { 'my-agent': ['my-agent', '--flag'] } }).agent_commands).toEqual({
      'my-agent': ['my-agent', '--flag'],
    });
  });

  it.each([
    [{ claude: ['x'] }, "one of Forge's own agents"],
    [{ 'codex-mine': ['x'] }, "one of Forge's own agents"],
    [{ 'my agent': ['x'] }, 'a name of letters'],
    [{ 'my-agent': [] }, ''],
  ])('refuses %j', (commands, message) => {
    const parsed = forgeConfigSchema.safeParse({ agent_commands: commands });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain(message);
  });
});
