// The small filesystem helpers loop and autoresearch use instead of node:fs, on a real temp directory.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { pathExists } from '../../src/infra/atomic-file.js';
import {
  listDir,
  listDirIfExists,
  listEntries,
  makeDir,
  makeTempDir,
  openRangeReader,
  readBytesIfReadable,
  removePath,
  renamePath,
} from '../../src/infra/fs-ops.js';

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-fsops-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('listing', () => {
  it('listDir names what is there and throws for a missing directory', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'a');
    await mkdir(join(dir, 'sub'));
    expect((await listDir(dir)).sort()).toEqual(['a.txt', 'sub']);
    await expect(listDir(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('listDirIfExists gives undefined for a missing directory', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'x'), '');
    expect(await listDirIfExists(dir)).toEqual(['x']);
    expect(await listDirIfExists(join(dir, 'missing'))).toBeUndefined();
  });

  it('listEntries tells directories, files and symlinks apart without following links', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'd'));
    await writeFile(join(dir, 'f'), 'f');
    await symlink(join(dir, 'd'), join(dir, 'link'));
    const kinds = Object.fromEntries((await listEntries(dir)).map((entry) => [entry.name, entry.kind]));
    expect(kinds).toEqual({ d: 'dir', f: 'file', link: 'symlink' });
    expect(await listEntries(join(dir, 'missing'))).toEqual([]);
  });
});

describe('changing the tree', () => {
  it('renamePath moves a file, removePath removes it and ignores what is already gone', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'old'), 'content');
    await renamePath(join(dir, 'old'), join(dir, 'new'));
    expect(await pathExists(join(dir, 'old'))).toBe(false);
    expect(await readFile(join(dir, 'new'), 'utf8')).toBe('content');
    await removePath(join(dir, 'new'));
    expect(await pathExists(join(dir, 'new'))).toBe(false);
    await expect(removePath(join(dir, 'new'))).resolves.toBeUndefined();
  });

  it('removePath removes a directory tree only when asked to recurse', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'tree', 'deep'), { recursive: true });
    await writeFile(join(dir, 'tree', 'deep', 'f'), 'f');
    await expect(removePath(join(dir, 'tree'))).rejects.toThrow();
    expect(await pathExists(join(dir, 'tree', 'deep', 'f'))).toBe(true);
    await removePath(join(dir, 'tree'), { recursive: true });
    expect(await pathExists(join(dir, 'tree'))).toBe(false);
  });

  it('makeDir creates missing parents and accepts an existing directory', async () => {
    const dir = await tempDir();
    await makeDir(join(dir, 'a', 'b', 'c'));
    await makeDir(join(dir, 'a', 'b', 'c'));
    expect(await listDir(join(dir, 'a', 'b'))).toEqual(['c']);
  });

  it('makeTempDir makes a fresh empty directory under the root with the prefix', async () => {
    const root = await tempDir();
    const one = await makeTempDir('forge-x-', root);
    const two = await makeTempDir('forge-x-', root);
    expect(one).not.toBe(two);
    expect((await listDir(root)).sort()).toEqual(
      [one, two].map((path) => path.slice(root.length + 1)).sort(),
    );
    expect(one.slice(root.length + 1)).toMatch(/^forge-x-.{6}$/);
    expect(await listDir(one)).toEqual([]);
  });
});

describe('reading', () => {
  it('readBytesIfReadable gives the bytes, or undefined for a missing file or a directory', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'f'), Buffer.from([0, 1, 255]));
    expect(await readBytesIfReadable(join(dir, 'f'))).toEqual(Buffer.from([0, 1, 255]));
    expect(await readBytesIfReadable(join(dir, 'missing'))).toBeUndefined();
    expect(await readBytesIfReadable(dir)).toBeUndefined();
  });

  it('openRangeReader reads byte ranges, short at the end of the file, and is undefined when missing', async () => {
    const dir = await tempDir();
    const path = join(dir, 'ledger.jsonl');
    await writeFile(path, '0123456789');
    const reader = await openRangeReader(path);
    if (reader === undefined) throw new Error('expected a reader');
    try {
      expect(await reader.size()).toBe(10);
      expect((await reader.read(2, 5)).toString()).toBe('234');
      expect((await reader.read(7, 20)).toString()).toBe('789');
      expect((await reader.read(4, 4)).length).toBe(0);
    } finally {
      await reader.close();
    }
    expect(await openRangeReader(join(dir, 'missing'))).toBeUndefined();
    // A directory is refused as it is opened (the handle closed there: one left to the GC is a leaked
    // descriptor and Node's DEP0137 warning), as anything else that is not a regular file is.
    await expect(openRangeReader(dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });
});
