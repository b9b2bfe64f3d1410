// What a person sees when a command fails: one sentence and a hint, the right exit code, no stack.
import { describe, expect, it } from 'vitest';
import { reportError } from '../../src/cli/output.js';

function capture() {
  let text = '';
  return {
    deps: { stderr: { write: (chunk: string) => void (text += chunk) }, env: {}, stderrIsTTY: false },
    text: () => text,
  };
}

describe('reportError', () => {
  it('a full disk is an environment error in one sentence, exit 3, with no stack trace', () => {
    const { deps, text } = capture();
    const error = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
    });
    expect(reportError(deps, 'ralph-loop', error, false)).toBe(3);
    const lines = text().trim().split('\n');
    expect(lines[0]).toMatch(/^ralph-loop: The disk is full \(ENOSPC\); free some space, then run again\.$/);
    expect(lines).toHaveLength(2);
    expect(text()).not.toContain('unexpected');
    expect(text()).not.toMatch(/^\s+at /m);
  });

  it('finds a full disk behind a wrapping error too', () => {
    const { deps } = capture();
    const cause = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    expect(reportError(deps, 'forge-pack', new Error('could not save', { cause }), false)).toBe(3);
  });

  it('a file made read-only or immutable (chattr +i) under a run is one sentence naming it, exit 3', () => {
    const { deps, text } = capture();
    const cause = Object.assign(new Error("EPERM: operation not permitted, open '/r/.beads/issues.jsonl'"), {
      code: 'EPERM',
      syscall: 'open',
      path: '/r/.beads/issues.jsonl',
    });
    expect(reportError(deps, 'ralph-loop', new Error('could not write the store', { cause }), false)).toBe(3);
    const lines = text().trim().split('\n');
    expect(lines[0]).toBe(
      'ralph-loop: Could not open /r/.beads/issues.jsonl: it is not writable by this user (or immutable) (EPERM).',
    );
    expect(lines[1]).toMatch(/^hint: Make it writable again/);
    expect(text()).not.toContain('unexpected');
  });

  it('a permission error with no path (not a file of Forge’s) stays unexpected', () => {
    const { deps, text } = capture();
    const error = Object.assign(new Error('EPERM: operation not permitted, kill'), {
      code: 'EPERM',
      syscall: 'kill',
    });
    expect(reportError(deps, 'ralph-loop', error, false)).toBe(1);
    expect(text()).toContain('unexpected error');
  });
});
