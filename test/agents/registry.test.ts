// From a label or --agent value to the right adapter; unknown agents are usage errors.
import { describe, expect, it } from 'vitest';
import { agentAdapters, createAgentRunner, resolveAgentRunner } from '../../src/agents/registry.js';
import type { AgentRunner } from '../../src/agents/types.js';
import { UsageError } from '../../src/infra/errors.js';
import { setUpFakeAgents } from '../support/fake-agents/harness.js';
import { init, result } from '../support/fake-agents/claude-lines.js';

describe('agent registry', () => {
  it('has an adapter for each built-in agent', () => {
    expect(Object.keys(agentAdapters).sort()).toEqual([
      'claude',
      'codex',
      'command',
      'gemini',
      'opencode',
      'scripted',
    ]);
    expect(resolveAgentRunner('agent:claude-opus').name).toBe('claude-opus');
    expect(resolveAgentRunner('codex-o3').name).toBe('codex-o3');
    expect(resolveAgentRunner('opencode-anthropic/claude-sonnet-4-5').name).toBe(
      'opencode-anthropic/claude-sonnet-4-5',
    );
    expect(resolveAgentRunner('gemini-flash').name).toBe('gemini-flash');
    expect(resolveAgentRunner('scripted').name).toBe('scripted');
    expect(resolveAgentRunner('my-agent --x', { allowCommand: true }).name).toBe('my-agent --x');
  });

  it('refuses an unknown agent with a usage error', () => {
    expect(() => resolveAgentRunner('agent:gpt-pilot')).toThrow(UsageError);
    expect(() => resolveAgentRunner('agent:gpt-pilot')).toThrow(/unknown agent "gpt-pilot"/);
    let caught: unknown;
    try {
      createAgentRunner({ cli: 'cursor', text: 'cursor' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UsageError);
    expect((caught as UsageError).message).toContain('No adapter for agent "cursor"');
    expect((caught as UsageError).hint).toContain('claude, codex, opencode, gemini, command, scripted');
  });

  it('uses the adapters it is given', () => {
    const fake: AgentRunner = { name: 'fake', run: () => Promise.reject(new Error('unused')) };
    expect(createAgentRunner({ cli: 'claude', text: 'claude' }, {}, { claude: () => fake })).toBe(fake);
    expect(() => createAgentRunner({ cli: 'toString', text: 'toString' })).toThrow(UsageError);
  });

  it('hands the model and options through to the adapter', async () => {
    const fakes = await setUpFakeAgents();
    const runner = resolveAgentRunner('claude-haiku', { runningAsRoot: true });
    const run = await runner.run({
      prompt: 'p',
      cwd: fakes.work,
      env: fakes.env([{ line: init() }, { line: result() }]),
      mode: 'full',
    });
    expect(run.outcome).toBe('ok');
    const [call] = await fakes.calls();
    expect(call!.argv).toContain('haiku');
    expect(call!.env.IS_SANDBOX).toBe('1');
  });
});
