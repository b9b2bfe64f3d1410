// What git does not keep of a tracked tree (tree-metadata.ts), on a real temp tree: a mode, a time or a
// link an agent gave a tracked file or folder is gone after settle(), and what it did not touch is left
// as it was, inode and all.
import { chmod, link, lstat, mkdir, open, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TreeEntry } from '../../src/infra/git-parse.js';
import { recordTreeMetadata } from '../../src/infra/tree-metadata.js';
import { tempTree } from '../support/temp-tree.js';

const file = (path: string, mode = '100644'): TreeEntry => ({
  mode,
  type: 'blob',
  object: '0'.repeat(40),
  path,
});
const OLD = new Date('2001-01-01T00:00:00Z');

describe('recordTreeMetadata', () => {
  it('puts back modes, times and links an agent gave tracked files and folders, and leaves the rest alone', async () => {
    const root = await tempTree({
      'src/mode.txt': 'm\n',
      'src/time.txt': 't\n',
      'src/linked.txt': 'l\n',
      'src/lib/run.sh': 'echo\n',
      'src/untouched.txt': 'u\n',
      'notes.md': 'n\n',
      '.forge/own.json': '{}\n',
    });
    await chmod(join(root, 'src/lib/run.sh'), 0o755);
    await chmod(join(root, 'src/lib'), 0o750);
    const outside = await tempTree({}, 'forge-outside-');
    const tracked = [
      file('src/mode.txt'),
      file('src/time.txt'),
      file('src/linked.txt'),
      file('src/lib/run.sh', '100755'),
      file('src/untouched.txt'),
      file('notes.md'),
      file('.forge/own.json'),
    ];
    // Made before the record, past the slack given the kernel's ctime clock.
    await utimes(join(root, 'src/untouched.txt'), OLD, OLD);
    const untouched = await lstat(join(root, 'src/untouched.txt'));
    await new Promise((done) => setTimeout(done, 150));
    const metadata = await recordTreeMetadata(root, tracked, ['.forge/']);

    // The agent: flags of every kind git does not see.
    await chmod(join(root, 'src/mode.txt'), 0o604);
    await utimes(join(root, 'src/time.txt'), OLD, OLD);
    await link(join(root, 'src/linked.txt'), join(outside, 'held'));
    await chmod(join(root, 'src/lib'), 0o705);
    await utimes(join(root, 'src'), OLD, OLD);
    await chmod(join(root, 'notes.md'), 0o600);
    await mkdir(join(root, 'src/new'), { mode: 0o700 });
    await writeFile(join(root, 'src/new/added.txt'), 'a\n');
    await chmod(join(root, '.forge/own.json'), 0o600);
    const settled = await metadata.settle([...tracked, file('src/new/added.txt')]);

    expect(settled.modes).toEqual(['notes.md', 'src/lib', 'src/mode.txt', 'src/new']);
    const mode = async (path: string) => (await lstat(join(root, path))).mode & 0o7777;
    expect(await mode('src/mode.txt')).toBe(0o644);
    expect(await mode('notes.md')).toBe(0o644);
    expect(await mode('src/lib')).toBe(0o750);
    expect(await mode('src/lib/run.sh')).toBe(0o755);
    // A folder the agent made takes its parent's mode.
    expect(await mode('src/new')).toBe(await mode('src'));
    for (const path of ['src/time.txt', 'src']) {
      expect((await lstat(join(root, path))).mtime.getUTCFullYear()).toBeGreaterThan(2001);
    }
    expect((await lstat(join(root, 'src/linked.txt'))).nlink).toBe(1);
    expect((await lstat(join(outside, 'held'))).nlink).toBe(1);
    expect(settled.rewritten).toEqual(
      expect.arrayContaining(['src/mode.txt', 'src/time.txt', 'src/linked.txt', 'src/new/added.txt']),
    );
    // Untouched: the same inode, the same old time. Forge's own folder: never entered.
    const after = await lstat(join(root, 'src/untouched.txt'));
    expect([after.ino, after.mtimeMs]).toEqual([untouched.ino, untouched.mtimeMs]);
    expect(settled.rewritten).not.toContain('src/untouched.txt');
    expect(await mode('.forge/own.json')).toBe(0o600);
  });

  it('rewrites a touched link, and never a file reached through a folder linked out of the tree', async () => {
    const root = await tempTree({ 'src/a.txt': 'a\n' });
    const outside = await tempTree({ 'data.txt': 'd\n' }, 'forge-outside-');
    await symlink('a.txt', join(root, 'src/to-a'));
    await symlink(outside, join(root, 'away'));
    const tracked = [file('src/a.txt'), file('src/to-a', '120000'), file('away/data.txt')];
    const metadata = await recordTreeMetadata(root, tracked);
    await chmod(join(outside, 'data.txt'), 0o604);
    await utimes(join(outside, 'data.txt'), OLD, OLD);
    const before = await lstat(join(outside, 'data.txt'));
    const settled = await metadata.settle(tracked);
    expect(settled.rewritten).toContain('src/to-a');
    expect(settled.rewritten).not.toContain('away/data.txt');
    const after = await lstat(join(outside, 'data.txt'));
    expect([after.ino, after.mode, after.mtimeMs]).toEqual([before.ino, before.mode, before.mtimeMs]);
  });

  it('rewrites a file of any size in constant memory, a sparse one staying sparse', async () => {
    const root = await tempTree({});
    // Past what one read can hold (2 GiB): a doer that left one in its scope ended the run with a
    // RangeError. Made sparse: two words and a hole between.
    const big = join(root, 'src', 'big.bin');
    const size = 2 ** 31 + 4096;
    await mkdir(join(root, 'src'));
    const handle = await open(big, 'wx');
    await handle.write('head', 0);
    await handle.write('tail', size - 4);
    await handle.close();
    // Zeros between other bytes, over more than one piece of the copy.
    const mixed = Buffer.concat([Buffer.from('a'), Buffer.alloc(3 * 1024 * 1024), Buffer.from('b')]);
    await writeFile(join(root, 'src', 'mixed.bin'), mixed);
    const tracked = [file('src/big.bin'), file('src/mixed.bin')];
    const metadata = await recordTreeMetadata(root, tracked);
    await chmod(big, 0o604);
    await chmod(join(root, 'src', 'mixed.bin'), 0o604);

    const settled = await metadata.settle(tracked);
    expect(settled.rewritten).toEqual(['src/big.bin', 'src/mixed.bin']);
    const info = await lstat(big);
    expect(info.mode & 0o777).toBe(0o644);
    expect(info.size).toBe(size);
    // On disk: the two pieces of the copy that hold the words, not 2 GiB of zeros.
    expect(info.blocks * 512).toBeLessThan(4 * 1024 * 1024);
    const words = await open(big, 'r');
    const word = Buffer.alloc(4);
    await words.read(word, 0, 4, 0);
    expect(word.toString()).toBe('head');
    await words.read(word, 0, 4, size - 4);
    expect(word.toString()).toBe('tail');
    await words.close();
    expect(await readFile(join(root, 'src', 'mixed.bin'))).toEqual(mixed);
  });
});
