// The reflogs after an agent's run (reflogs.ts), on files laid out as git's: appended entries lose
// their text, those naming removed objects go, a log rewritten in place is put back, a log of no ref goes.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NEUTRAL_MESSAGE, readReflogs, settleReflogs } from '../../src/infra/reflogs.js';
import { tempTree } from '../support/temp-tree.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const entry = (from: string, to: string, message: string) =>
  `${from} ${to} A U Thor <a@b> 1700000000 +0000\t${message}\n`;

describe('settleReflogs', () => {
  it('keeps what was there, strips what the run appended, and puts back what it rewrote', async () => {
    const git = await tempTree({
      'logs/HEAD': entry(A, B, 'commit: the user’s'),
      'logs/refs/heads/main': entry(A, B, 'commit: the user’s'),
      'logs/refs/stash': entry(A, B, 'On main: mine'),
    });
    const before = await readReflogs([git]);
    // The run: a message of its own, a commit later removed, a stash log rewritten, a log for no ref.
    await writeFile(
      join(git, 'logs/HEAD'),
      entry(A, B, 'commit: the user’s') + entry(B, C, 'flag') + entry(C, B, 'back') + 'junk\n',
    );
    await writeFile(
      join(git, 'logs/refs/heads/main'),
      entry(A, B, 'commit: the user’s') + entry(B, B, 'answers: 42'),
    );
    await writeFile(join(git, 'logs/refs/stash'), entry(A, C, 'On main: flag'));
    await mkdir(join(git, 'logs/refs/tags'), { recursive: true });
    await writeFile(join(git, 'logs/refs/tags/flag'), entry(A, B, 'flag'));

    const changed = await settleReflogs([git], before, new Set([C]), (ref) => ref === 'refs/heads/main');
    expect(changed.map((path) => path.slice(git.length + 1))).toEqual([
      'logs/HEAD',
      'logs/refs/heads/main',
      'logs/refs/stash',
      'logs/refs/tags/flag',
    ]);
    expect(await readFile(join(git, 'logs/HEAD'), 'utf8')).toBe(entry(A, B, 'commit: the user’s'));
    expect(await readFile(join(git, 'logs/refs/heads/main'), 'utf8')).toBe(
      entry(A, B, 'commit: the user’s') + entry(B, B, NEUTRAL_MESSAGE).replace(/\n$/, '') + '\n',
    );
    expect(await readFile(join(git, 'logs/refs/stash'), 'utf8')).toBe(entry(A, B, 'On main: mine'));
    expect(existsSync(join(git, 'logs/refs/tags/flag'))).toBe(false);
  });

  it('changes nothing where the run appended nothing', async () => {
    const git = await tempTree({ 'logs/HEAD': entry(A, B, 'commit: x') });
    const before = await readReflogs([git]);
    expect(await settleReflogs([git], before, new Set(), () => true)).toEqual([]);
  });
});
