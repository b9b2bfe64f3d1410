// The gates part of .forge/config.json: argv or {argv, timeout_seconds}, the timeout each gate gets,
// and names a gates: label can hold.
import { describe, expect, it } from 'vitest';
import { configuredGates } from '../../src/cli/config-gates.js';
import { forgeConfigSchema, parseConfigText } from '../../src/cli/forge-config.js';
import { ConfigError } from '../../src/infra/errors.js';

const parse = (config: unknown) =>
  parseConfigText('.forge/config.json', JSON.stringify(config), forgeConfigSchema);

describe('gates config', () => {
  it('gives each gate its own timeout, else runner.gate_timeout_seconds, else 600 s, in config order', () => {
    const config = parse({
      runner: { gate_timeout_seconds: 120 },
      gates: {
        test: ['npm', 'test'],
        e2e: { argv: ['npm', 'run', 'e2e'], timeout_seconds: 900 },
        lint: { argv: ['eslint', '.'] },
      },
    });
    expect(configuredGates(config)).toEqual([
      { name: 'test', argv: ['npm', 'test'], timeoutMs: 120_000 },
      { name: 'e2e', argv: ['npm', 'run', 'e2e'], timeoutMs: 900_000 },
      { name: 'lint', argv: ['eslint', '.'], timeoutMs: 120_000 },
    ]);
    expect(configuredGates(parse({ gates: { test: ['npm', 'test'] } }))[0]!.timeoutMs).toBe(600_000);
  });

  it('refuses a gate name no label could hold, and an unknown key in a gate, naming the field', () => {
    expect(() => parse({ gates: { 'unit tests': ['npm', 'test'] } })).toThrow(ConfigError);
    expect(() => parse({ gates: { 'unit tests': ['npm', 'test'] } })).toThrow(
      /\.forge\/config\.json: gates\.unit tests: a gate name is 1-40 letters/,
    );
    expect(() => parse({ gates: { test: { argv: ['npm'], timeout: 5 } } })).toThrow(
      /\.forge\/config\.json: gates\.test/,
    );
    expect(() => parse({ runner: { gate_timeout_seconds: 0 } })).toThrow(/runner\.gate_timeout_seconds/);
  });

  it('says what a gate is when one is a shell string, the usual slip (zod alone says "Invalid input")', () => {
    expect(() => parse({ gates: { test: 'npm test' } })).toThrow(
      '.forge/config.json: gates.test: expected an argv array (["npm", "test"]) or {"argv": [...], "timeout_seconds": N}; a command is never a shell string',
    );
  });
});
