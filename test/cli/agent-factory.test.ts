// The CLI's agent factory loads one adapter's module per spec: it must build the same runners the
// registry would, for every adapter the registry has.
import { describe, expect, it } from 'vitest';
import { agentAdapters } from '../../src/agents/index.js';
import { createAgentFactory, LAZY_ADAPTERS } from '../../src/cli/agent-factory.js';
import { UsageError } from '../../src/infra/errors.js';

describe('the lazy agent factory', () => {
  it('lists every adapter of the registry, each with the registry’s own factory', async () => {
    expect(Object.keys(LAZY_ADAPTERS).sort()).toEqual(Object.keys(agentAdapters).sort());
    for (const [name, load] of Object.entries(LAZY_ADAPTERS)) {
      expect(await load(), name).toBe(agentAdapters[name]);
    }
  });

  it('builds a runner from a command line, and refuses one from a label as the registry does', async () => {
    const factory = createAgentFactory();
    const runner = await factory('node agent.mjs', { fromLabel: false });
    expect(runner).toHaveProperty('run');
    const failure = (spec: string) =>
      Promise.resolve()
        .then(() => factory(spec, { fromLabel: true }))
        .catch((error: unknown) => error);
    const refused = await failure('node agent.mjs');
    expect(refused).toBeInstanceOf(UsageError);
    const unknown = await failure('no-such-agent');
    expect(unknown).toBeInstanceOf(UsageError);
  });
});
