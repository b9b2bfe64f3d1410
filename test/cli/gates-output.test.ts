// Where gate results show up for people and agents: the progress lines, `ralph-loop logs`, the next prompt.
import { describe, expect, it } from 'vitest';
import { describeGateResults, lastGateResults } from '../../src/cli/epic-status-gates.js';
import { boundedTail, GATE_TAIL_CHARS } from '../../src/cli/gate-process.js';
import { formatEvent } from '../../src/cli/logs-command.js';
import { createProgressRenderer } from '../../src/cli/progress.js';
import { beadPrompt } from '../../src/loop/agent-executor.js';
import type { LoopEvent } from '../../src/loop/types.js';

const gate = (over: Partial<Extract<LoopEvent, { type: 'gate_finished' }>> = {}): LoopEvent => ({
  type: 'gate_finished',
  ts: '2026-01-02T03:04:05.000Z',
  epic: 'bd-e',
  bead: 'bd-e.1',
  attempt: 1,
  gate: 'test',
  argv: ['npm', 'test'],
  ok: false,
  exit: 1,
  duration_ms: 12_000,
  tail: 'FAIL',
  ...over,
});

function render(events: LoopEvent[]): string {
  let out = '';
  const renderer = createProgressRenderer({
    sink: { write: (t) => (out += t) },
    tty: false,
    color: false,
    now: () => 0,
  });
  for (const event of events) renderer.render(event);
  renderer.stop();
  return out;
}

describe('gate output', () => {
  it('progress prints each gate with its time, and the run line the total gate time', () => {
    const out = render([
      gate(),
      gate({ ok: true, exit: 0, duration_ms: 3_000 }),
      gate({ exit: null, timed_out: true }),
      {
        type: 'run_finished',
        ts: 't',
        epic: 'bd-e',
        run_id: 'r',
        summary: { reason: 'done', message: 'm', beadsRun: 1, beadsClosed: 1, costUsd: 0, gateMs: 75_000 },
      },
    ]);
    expect(out).toContain('  gate test failed (exit 1) (12s, npm test)');
    expect(out).toContain('  gate test passed (3s, npm test)');
    expect(out).toContain('  gate test timed out (12s, npm test)');
    expect(out).toContain('(1 of 1 bead(s) run closed, gates 1m15s)');
  });

  it('logs show a gate event with its name, result, exit, time and argv', () => {
    expect(formatEvent(gate() as unknown as Record<string, unknown>)).toBe(
      '2026-01-02 03:04:05Z gate_finished bd-e.1  attempt=1 gate=test ok=false exit=1 duration_ms=12000 argv=["npm","test"]',
    );
  });

  it("the next attempt's prompt carries the feedback after the bead's text, under its own heading", () => {
    const bead = { id: 'bd-e.1', title: 'Fix sum', description: 'Make sum right.', labels: [] };
    const request = { bead: bead as never, epicId: 'bd-e' };
    const first = beadPrompt(request);
    expect(first).not.toContain('did not pass the gates');
    const second = beadPrompt({ ...request, feedback: 'Gate test failed: exited 1.\nexpected 4' });
    const heading = second.indexOf('## The previous attempt did not pass the gates');
    expect(heading).toBeGreaterThan(second.indexOf('Make sum right.'));
    expect(second.indexOf('expected 4')).toBeGreaterThan(heading);
    expect(second.indexOf('expected 4')).toBeLessThan(second.indexOf('Bead bd-e.1 of epic bd-e'));
  });

  it("a gate's tail keeps the last lines within the bound", () => {
    expect(boundedTail(['a', 'b'])).toBe('a\nb');
    const long = Array.from({ length: 40 }, (_, i) => `${i}`.padEnd(300, '.'));
    const tail = boundedTail(long);
    expect(tail.length).toBe(GATE_TAIL_CHARS + 3);
    expect(tail.startsWith('[…]')).toBe(true);
    expect(tail.endsWith(long.at(-1)!)).toBe(true);
  });

  it("status shows each gate's last result in the run, a failing one with its exit, bead and attempt", () => {
    const results = lastGateResults([
      gate({ gate: 'test', ok: false, exit: 1, attempt: 1, bead: 'bd-e.1' }),
      gate({ gate: 'test', ok: true, exit: 0, attempt: 2, bead: 'bd-e.1', duration_ms: 3_400 }),
      gate({ gate: 'lint', ok: false, exit: 2, attempt: 2, bead: 'bd-e.2', duration_ms: 800 }),
      gate({ gate: 'build', ok: false, exit: null, timed_out: true, bead: 'bd-e.3' }),
    ] as unknown as Record<string, unknown>[]);
    expect(describeGateResults(results)).toBe(
      'test passed (3.4s, bd-e.1, attempt 2) · lint FAILED exit 2 (0.8s, bd-e.2, attempt 2) · build TIMED OUT (12s, bd-e.3)',
    );
  });
});
