// The human progress renderer: one line per bead on plain stderr, a live line with elapsed time on a TTY.
import { describe, expect, it } from 'vitest';
import { createProgressRenderer } from '../../src/cli/progress.js';
import type { LoopEvent } from '../../src/loop/types.js';

const started: LoopEvent = {
  type: 'bead_started',
  ts: 't',
  epic: 'bd-e',
  bead: 'bd-e.1',
  title: 'Write the parser',
  role: 'doer',
  agent: 'claude-opus',
  executor: 'agent',
  attempt: 1,
};
const finished: LoopEvent = {
  type: 'attempt_finished',
  ts: 't',
  epic: 'bd-e',
  bead: 'bd-e.1',
  title: 'Write the parser',
  role: 'doer',
  agent: 'claude-opus',
  attempt: 1,
  outcome: 'ok',
  duration_ms: 83_000,
  input_tokens: 12_000,
  output_tokens: 345,
  cost_usd: 0.4123,
  message: 'done',
  transcript: '/logs/bd-e.1.log',
};

function render(tty: boolean, events: LoopEvent[], now = () => 0): string {
  let out = '';
  const renderer = createProgressRenderer({ sink: { write: (t) => (out += t) }, tty, color: false, now });
  for (const event of events) renderer.render(event);
  renderer.stop();
  return out;
}

describe('progress renderer', () => {
  it('prints plain lines without control characters when stderr is not a TTY', () => {
    const out = render(false, [started, finished]);
    expect(out.includes('\r') || out.includes('\u001b')).toBe(false);
    expect(out).toContain('▶ bd-e.1 Write the parser (role:doer, agent claude-opus, attempt 1)');
    expect(out).toContain('✓ bd-e.1 ok (1m23s · 12.3k tokens · $0.4123)');
  });

  it('shows what a bead or an agent wrote as escapes, never as terminal commands', () => {
    // A title that retitles the window and hides the rest of the line; a message that prints over itself.
    const title = 'Fix \u001b]0;pwned\u0007the \u001b[8mhidden\u001b[0m parser \u202eevil';
    const out = render(false, [
      { ...started, title },
      { ...finished, outcome: 'error', message: 'boom\r✓ bd-e.1 ok' },
      { type: 'activity', ts: 't', epic: 'bd-e', bead: 'bd-e.1', message: 'note\u009b2J' },
    ]);
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(out).toContain(
      '▶ bd-e.1 Fix \\u001b]0;pwned\\u0007the \\u001b[8mhidden\\u001b[0m parser \\u202eevil',
    );
    expect(out).toContain(': boom\\r✓ bd-e.1 ok');
    expect(out).toContain('note\\u009b2J');
  });

  it('draws a live line with the elapsed time on a TTY and clears it before the next line', () => {
    let clock = 0;
    let out = '';
    const renderer = createProgressRenderer({
      sink: { write: (t) => (out += t) },
      tty: true,
      color: false,
      now: () => clock,
    });
    renderer.render(started);
    clock = 65_000;
    renderer.render({
      type: 'activity',
      ts: 't',
      epic: 'bd-e',
      bead: 'bd-e.1',
      message: 'rate limit reached',
    });
    renderer.render(finished);
    renderer.stop();
    expect(out).toContain('\r\x1b[2K… bd-e.1 doer via claude-opus 1m05s · rate limit reached');
    expect(out).toContain('\r\x1b[2K✓ bd-e.1 ok');
  });

  it('shows a failure with its message and a built-in executor without an agent', () => {
    const out = render(false, [
      { ...started, agent: 'built-in', executor: 'arbiter', role: 'arbiter' },
      { ...finished, outcome: 'error', message: 'no base commit' },
    ]);
    expect(out).toContain('(role:arbiter, arbiter, attempt 1)');
    expect(out).toContain('✗ bd-e.1 error');
    expect(out).toContain(': no base commit');
  });

  it('says each iteration’s score and decision, rounded, and the live line shows beads done/total', () => {
    const score = (149 / 153) * 100; // 97.38562091503268: printed to six significant digits
    const judged: LoopEvent = {
      type: 'judged',
      ts: 't',
      epic: 'bd-e',
      bead: 'bd-e.2',
      iter: 3,
      score,
      evidence: '149/153 passed (TAP)',
    };
    const decided: LoopEvent = {
      type: 'decided',
      ts: 't',
      epic: 'bd-e',
      bead: 'bd-e.3',
      iter: 3,
      decision: 'keep',
      score,
      best_before: 7,
      best_after: score,
      delta: score - 7,
      terminal: 'goal_reached',
    };
    const plain = render(false, [judged, decided]);
    expect(plain).toContain('  iter 3 judged: 97.3856 · 149/153 passed (TAP)');
    expect(plain).toContain('iter 3: 7 → 97.3856 kept; the loop ends: goal_reached');
    const failed = render(false, [{ ...judged, score: null, failure: 'no TAP plan' }]);
    expect(failed).toContain('iter 3 judged: no score (no TAP plan)');

    const live = render(true, [{ ...started, progress: { done: 4, total: 9 } }], () => 0);
    expect(live).toContain('[4/9 done · 0s] … bd-e.1 doer via claude-opus 0s');
  });

  it('a parallel run lists the beads in flight on the live line, and says what merged or conflicted', () => {
    const second: LoopEvent = { ...started, bead: 'bd-e.2', title: 'Write the printer' };
    const third: LoopEvent = { ...started, bead: 'bd-e.3', title: 'Write the docs' };
    const out = render(true, [started, second, third, { ...finished, bead: 'bd-e.2' }]);
    expect(out).toContain('… 3 running: bd-e.1, bd-e.2, bd-e.3');
    expect(out.split('\r\x1b[2K').at(-2)).toContain('… 2 running: bd-e.1, bd-e.3');
    const merges = render(false, [
      { type: 'merged', ts: 't', epic: 'bd-e', bead: 'bd-e.1', attempt: 1, commit: 'abcdef0123456789' },
      {
        type: 'merge_conflict',
        ts: 't',
        epic: 'bd-e',
        bead: 'bd-e.2',
        attempt: 1,
        message: 'Merge conflict in a.ts\n\ndetail',
      },
    ]);
    expect(merges).toContain('merged bd-e.1 (attempt 1) as abcdef0123');
    expect(merges).toContain('conflict bd-e.2 (attempt 1): Merge conflict in a.ts\n');
  });
});
