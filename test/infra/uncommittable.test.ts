// The special files a commit cannot hold (uncommittable.ts), on a real temp tree: FIFOs under the
// scope go, the runner's own folders are never entered, git's neither.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeSpecialFiles } from '../../src/infra/uncommittable.js';
import { tempTree } from '../support/temp-tree.js';

describe('removeSpecialFiles', () => {
  it('removes FIFOs in the scope, at its top and deeper, but not in the runner’s folders or git’s', async () => {
    const root = await tempTree({ 'src/a.txt': 'a\n', 'notes.txt': 'n\n' });
    for (const dir of ['src/deep', '.forge/epics/e', '.git'])
      await mkdir(join(root, dir), { recursive: true });
    await writeFile(join(root, 'src', 'deep', 'b.txt'), 'b\n');
    for (const fifo of ['src/mode', 'src/deep/flag', 'top-fifo', '.forge/epics/e/stop', '.git/pipe'])
      execFileSync('mkfifo', [join(root, fifo)]);

    expect(await removeSpecialFiles(root, ['src/'])).toEqual(['src/deep/flag', 'src/mode']);
    expect(existsSync(join(root, 'top-fifo'))).toBe(true);
    // The whole tree as the scope: the runner's own folder is skipped when named, git's always.
    expect(await removeSpecialFiles(root, ['.'], ['.forge'])).toEqual(['top-fifo']);
    expect(existsSync(join(root, '.forge', 'epics', 'e', 'stop'))).toBe(true);
    expect(existsSync(join(root, '.git', 'pipe'))).toBe(true);
    // Regular files are never touched; a scope that is not there is nothing.
    expect(existsSync(join(root, 'src', 'deep', 'b.txt'))).toBe(true);
    expect(await removeSpecialFiles(root, ['missing/'])).toEqual([]);
  });

  it('never removes a node outside the tree, reached through a linked folder on the scope’s way', async () => {
    const root = await tempTree({ 'src/a.txt': 'a\n' });
    const outside = await tempTree({ 'keep.txt': 'k\n' }, 'forge-outside-');
    execFileSync('mkfifo', [join(outside, 'fifo')]);
    await symlink(outside, join(root, 'linked'));
    expect(await removeSpecialFiles(root, ['linked/fifo'])).toEqual([]);
    expect(existsSync(join(outside, 'fifo'))).toBe(true);
  });
});
