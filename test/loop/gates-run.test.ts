// Running a bead's gates through a fake process port: order, first failure, timeouts, interrupts.
import { describe, expect, it } from 'vitest';
import {
  runGates,
  type GateCommand,
  type GateProcess,
  type GateProcessResult,
} from '../../src/loop/gates.js';

const gates: GateCommand[] = [
  { name: 'test', argv: ['npm', 'test'], timeoutMs: 600_000 },
  { name: 'lint', argv: ['npm', 'run', 'lint'], timeoutMs: 600_000 },
];

function port(answers: Partial<GateProcessResult>[]) {
  const seen: { argv: readonly string[]; timeoutMs: number }[] = [];
  const fake: GateProcess = {
    async run(argv, options) {
      seen.push({ argv, timeoutMs: options.timeoutMs });
      const answer = answers[seen.length - 1] ?? {};
      return { exitCode: 0, timedOut: false, aborted: false, tail: '', durationMs: 1, ...answer };
    },
  };
  return { fake, seen };
}

const run = (p: GateProcess, maxMs?: number) =>
  runGates(gates, p, {
    cwd: '/repo',
    signal: new AbortController().signal,
    maxMs,
  });

describe('runGates', () => {
  it('passes when every gate exits 0, reporting each', async () => {
    const { fake, seen } = port([]);
    const verdict = await run(fake);
    expect(verdict.ok).toBe(true);
    expect(verdict.outcomes.map((o) => [o.gate, o.ok, o.exit])).toEqual([
      ['test', true, 0],
      ['lint', true, 0],
    ]);
    expect(seen).toHaveLength(2);
  });

  it('stops at the first red gate and reports its name, argv, exit and tail', async () => {
    const { fake, seen } = port([{ exitCode: 3, tail: 'line 1\nline 2\n' }]);
    const verdict = await run(fake);
    expect(seen).toHaveLength(1);
    expect(verdict).toMatchObject({ ok: false, message: 'gate test (npm test) exited 3' });
    if (verdict.ok) return;
    expect(verdict.report).toBe(
      [
        'Gate test failed: exited 3.',
        'Command (argv): ["npm","test"]',
        'Exit code: 3',
        'Output (last lines):',
        '```',
        'line 1\nline 2',
        '```',
      ].join('\n'),
    );
    expect(verdict.aborted).toBeUndefined();
    expect(verdict.environment).toBeUndefined();
  });

  it('a timed-out gate is a failure named as killed, never a pass, whatever its exit', async () => {
    const { fake } = port([{ exitCode: 0, timedOut: true }]);
    const verdict = await run(fake);
    expect(verdict).toMatchObject({
      ok: false,
      message: 'gate test (npm test) timed out after 600s and was killed',
    });
  });

  it('a gate is given no more time than the wall clock has left', async () => {
    const { fake, seen } = port([]);
    await run(fake, 5_000);
    expect(seen.map((s) => s.timeoutMs)).toEqual([5_000, 5_000]);
  });

  it('an interrupted gate says so; a program that cannot start is the environment', async () => {
    const interrupted = await run(port([{ exitCode: undefined, aborted: true }]).fake);
    expect(interrupted).toMatchObject({
      ok: false,
      aborted: true,
      message: 'gate test (npm test) was interrupted',
    });
    const missing = await run(port([{ exitCode: undefined, spawnError: 'spawn npm ENOENT' }]).fake);
    expect(missing).toMatchObject({
      ok: false,
      environment: true,
      message: 'gate test (npm test) could not start: spawn npm ENOENT',
    });
  });
});
