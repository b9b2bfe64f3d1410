// Agent labels and --agent values: which adapter, which model, and commands split without a shell.
import { describe, expect, it } from 'vitest';
import { parseAgentSpec } from '../../src/agents/spec.js';

function spec(text: string, allowCommand = false) {
  const parsed = parseAgentSpec(text, { allowCommand });
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.spec;
}

describe('parseAgentSpec', () => {
  it.each([
    ['claude', 'claude', undefined],
    ['agent:claude', 'claude', undefined],
    ['claude-opus', 'claude', 'opus'],
    ['claude-sonnet', 'claude', 'sonnet'],
    ['agent:claude-haiku', 'claude', 'haiku'],
    ['claude-opus-4-1-20250805', 'claude', 'claude-opus-4-1-20250805'],
    ['claude-3-5-haiku-20241022', 'claude', 'claude-3-5-haiku-20241022'],
    ['claude-claude-sonnet-4-5', 'claude', 'claude-sonnet-4-5'],
    ['codex', 'codex', undefined],
    ['codex-gpt-5-codex', 'codex', 'gpt-5-codex'],
    ['agent:codex-o3', 'codex', 'o3'],
    ['opencode', 'opencode', undefined],
    ['opencode-anthropic/claude-sonnet-4-5', 'opencode', 'anthropic/claude-sonnet-4-5'],
    ['agent:opencode-openrouter/qwen/qwen3-coder', 'opencode', 'openrouter/qwen/qwen3-coder'],
    ['gemini', 'gemini', undefined],
    ['gemini-2.5-pro', 'gemini', 'gemini-2.5-pro'],
    ['gemini-flash', 'gemini', 'flash'],
    ['gemini-gemini-2.5-flash', 'gemini', 'gemini-2.5-flash'],
    ['scripted', 'scripted', undefined],
  ])('%s → %s %s', (text, cli, model) => {
    const parsed = spec(text);
    expect(parsed.cli).toBe(cli);
    expect(parsed.model).toBe(model);
  });

  it('refuses an unknown agent in a label, naming the known ones', () => {
    const parsed = parseAgentSpec('agent:cluade-opus');
    expect(parsed).toEqual({
      ok: false,
      reason: expect.stringContaining('unknown agent "cluade-opus"') as unknown,
    });
    expect(!parsed.ok && parsed.reason).toContain('codex');
  });

  it('never turns a label into a command', () => {
    expect(parseAgentSpec('rm -rf /').ok).toBe(false);
    expect(parseAgentSpec('my-agent').ok).toBe(false);
  });

  it('refuses a model that could pose as a flag', () => {
    expect(parseAgentSpec('claude--dangerously-skip-permissions').ok).toBe(false);
    expect(parseAgentSpec('codex--config=x').ok).toBe(false);
    expect(parseAgentSpec('gemini--yolo').ok).toBe(false);
    expect(parseAgentSpec('opencode--auto/x').ok).toBe(false);
  });

  it('asks opencode for provider/model', () => {
    const parsed = parseAgentSpec('opencode-claude-sonnet-4-5');
    expect(!parsed.ok && parsed.reason).toMatch(/provider\/model/);
  });

  it('points a scripted:<path> label at FORGE_SCRIPTED_AGENT', () => {
    const parsed = parseAgentSpec('scripted:demo/script.json', { allowCommand: true });
    expect(!parsed.ok && parsed.reason).toContain('FORGE_SCRIPTED_AGENT');
  });

  it('takes a user command when allowed, split into argv', () => {
    expect(spec('my-agent --flag "two words"', true)).toEqual({
      cli: 'command',
      argv: ['my-agent', '--flag', 'two words'],
      text: 'my-agent --flag "two words"',
    });
    expect(spec('my-agent', true)).toMatchObject({ cli: 'command', argv: ['my-agent'] });
    expect(spec('claude-opus', true)).toMatchObject({ cli: 'claude', model: 'opus' });
  });

  it('reports an unterminated quote in a command', () => {
    const parsed = parseAgentSpec('my-agent "oops', { allowCommand: true });
    expect(!parsed.ok && parsed.reason).toContain('unterminated " quote');
  });

  it('refuses an empty spec', () => {
    expect(parseAgentSpec('  ').ok).toBe(false);
    expect(parseAgentSpec('""', { allowCommand: true }).ok).toBe(false);
  });
});

describe("the user's own agents, named in .forge/config.json agent_commands", () => {
  const commands = { 'my-agent': ['my-agent', '--flag', 'two words'] };

  it('resolve by name, from a label too, to the configured argv', () => {
    for (const text of ['my-agent', 'agent:my-agent']) {
      expect(parseAgentSpec(text, { commands })).toEqual({
        ok: true,
        spec: { cli: 'command', argv: ['my-agent', '--flag', 'two words'], text: 'my-agent' },
      });
    }
  });

  it('never turn a label that is not a name into a command, and say where names come from', () => {
    const parsed = parseAgentSpec('agent:my-agent --evil', { commands });
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toContain('yours: my-agent');
    expect(!parsed.ok && parsed.reason).toContain('"agent_commands" in .forge/config.json');
  });

  it('leave the built-in agents as they are', () => {
    expect(parseAgentSpec('claude-opus', { commands })).toMatchObject({ ok: true, spec: { cli: 'claude' } });
  });
});

describe('agent commands are split without a shell', () => {
  it('keeps quoted spaces and escapes', () => {
    const parsed = parseAgentSpec(`my-agent 'b c' "d e" f\\ g`, { allowCommand: true });
    expect(parsed).toEqual({
      ok: true,
      spec: { cli: 'command', argv: ['my-agent', 'b c', 'd e', 'f g'], text: `my-agent 'b c' "d e" f\\ g` },
    });
  });

  it('refuses shell syntax with a reason instead of passing it on literally', () => {
    for (const text of [
      'my-agent $HOME',
      'my-agent `id`',
      'my-agent | tee log',
      'my-agent > out',
      'my-agent *.ts',
    ]) {
      const parsed = parseAgentSpec(text, { allowCommand: true });
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.reason).toMatch(/shell|glob/);
    }
  });

  it('rejects unterminated quotes and a trailing backslash', () => {
    expect(parseAgentSpec(`my-agent 'b`, { allowCommand: true }).ok).toBe(false);
    expect(parseAgentSpec('my-agent \\', { allowCommand: true }).ok).toBe(false);
  });
});
