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
});
