// What a person sees when a command fails: one sentence and a hint, the right exit code, no stack.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
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

  it('a file or a FIFO where a folder of Forge’s goes, or a folder where a file goes: one sentence naming what is in the way, exit 3', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-shape-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, '.forge'), 'x\n');
    execFileSync('mkfifo', [join(dir, '.beads')]);
    await mkdir(join(dir, 'config.json'));
    const fault = (code: string, syscall: string, path: string) =>
      new Error('could not start', {
        cause: Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path }),
      });
    const cases: [Error, string][] = [
      [
        fault('ENOTDIR', 'mkdir', join(dir, '.forge', 'epics', 'bd-e')),
        `ralph-loop: Could not mkdir ${join(dir, '.forge', 'epics', 'bd-e')}: ${join(dir, '.forge')} is a file, where a folder must be (ENOTDIR).`,
      ],
      [
        fault('ENOTDIR', 'open', join(dir, '.beads', 'issues.jsonl')),
        `ralph-loop: Could not open ${join(dir, '.beads', 'issues.jsonl')}: ${join(dir, '.beads')} is a FIFO (named pipe), where a folder must be (ENOTDIR).`,
      ],
      [
        fault('EEXIST', 'mkdir', join(dir, '.forge')),
        `ralph-loop: Could not make the folder ${join(dir, '.forge')}: a file is there (EEXIST).`,
      ],
      [
        fault('EISDIR', 'read', join(dir, 'config.json')),
        `ralph-loop: Could not read ${join(dir, 'config.json')}: it is a folder, where a file must be (EISDIR).`,
      ],
    ];
    for (const [error, said] of cases) {
      const { deps, text } = capture();
      expect(reportError(deps, 'ralph-loop', error, false)).toBe(3);
      const lines = text().trim().split('\n');
      expect(lines[0]).toBe(said);
      expect(lines[1]).toMatch(/^hint: Forge makes that path itself: move what is in the way aside/);
      expect(text()).not.toContain('unexpected');
    }
    // EEXIST from anything but mkdir (an O_EXCL create that lost a race) is not this fault.
    const { deps, text } = capture();
    expect(reportError(deps, 'ralph-loop', fault('EEXIST', 'open', join(dir, '.forge')), false)).toBe(1);
    expect(text()).toContain('unexpected error');
  });
});
