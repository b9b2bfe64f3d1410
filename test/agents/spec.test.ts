// Agent labels and --agent values: which adapter, which model, and commands split without a shell.
import { describe, expect, it } from 'vitest';
import { parseAgentSpec, splitCommandLine } from '../../src/agents/spec.js';

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

describe('splitCommandLine', () => {
  const split = (text: string) => {
    const result = splitCommandLine(text);
    if (!result.ok) throw new Error(result.reason);
    return result.argv;
  };

  it('splits on whitespace and keeps quoted spaces', () => {
    expect(split('  a  b\tc ')).toEqual(['a', 'b', 'c']);
    expect(split(`a 'b c' "d e" f\\ g`)).toEqual(['a', 'b c', 'd e', 'f g']);
  });

  it('expands nothing: $, backticks, globs, ~ and operators stay literal', () => {
    expect(split('echo $HOME `id` *.ts ~ ; | > x && y')).toEqual([
      'echo',
      '$HOME',
      '`id`',
      '*.ts',
      '~',
      ';',
      '|',
      '>',
      'x',
      '&&',
      'y',
    ]);
    expect(split(`"$(rm -rf /)"`)).toEqual(['$(rm -rf /)']);
  });

  it('handles escapes inside double quotes and literal single quotes', () => {
    expect(split(`"say \\"hi\\" \\\\ \\n"`)).toEqual(['say "hi" \\ \\n']);
    expect(split(`'it'\\''s'`)).toEqual(["it's"]);
    expect(split(`'a\\b'`)).toEqual(['a\\b']);
  });

  it('keeps empty quoted arguments', () => {
    expect(split(`a "" ''`)).toEqual(['a', '', '']);
  });

  it('rejects unterminated quotes and a trailing backslash', () => {
    expect(splitCommandLine(`a 'b`).ok).toBe(false);
    expect(splitCommandLine('a \\').ok).toBe(false);
  });
});
