// writeFileAtomic: readers see the old file or the new, and a write that fails leaves nothing beside it.
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readSmallRegularFileSync, writeFileAtomic } from '../../src/infra/atomic-file.js';

/** A 64 KiB tmpfs of its own, unmounted when the test ends (needs root, as CI runs). */
async function tinyDisk(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-tiny-disk-'));
  const mounted = await execa('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { reject: false });
  if (mounted.exitCode !== 0) {
    await rm(dir, { recursive: true, force: true });
    // Fails, never skips: a suite that quietly skipped this would be green without a full disk tried.
    throw new Error(`This test needs root and mount -t tmpfs (${mounted.stderr.trim()}).`);
  }
  onTestFinished(async () => {
    await execa('umount', ['-l', dir], { reject: false });
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

describe('writeFileAtomic', () => {
  it('on a full disk fails with ENOSPC, keeps the old file, and leaves no temp file holding the space', async () => {
    // Seen: each rerun on a full disk left a 2 MB temp file beside the one it could not write.
    const disk = await tinyDisk();
    const path = join(disk, 'state.json');
    await writeFile(path, 'old\n');
    await expect(writeFileAtomic(path, Buffer.alloc(1024 * 1024, 1))).rejects.toMatchObject({
      code: 'ENOSPC',
    });
    expect(await readdir(disk)).toEqual(['state.json']);
    expect(await readFile(path, 'utf8')).toBe('old\n');
  });
});

describe('readSmallRegularFileSync', () => {
  it('reads a regular file under the limit as its bytes; nothing there is null, anything else undefined, a FIFO never waited on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-small-read-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const bytes = Buffer.from([0x72, 0x65, 0x66, 0xff, 0x0a]);
    await writeFile(join(dir, 'HEAD'), bytes);
    expect(readSmallRegularFileSync(join(dir, 'HEAD'), 64)).toEqual(bytes);
    expect(readSmallRegularFileSync(join(dir, 'HEAD'), bytes.length + 1)).toEqual(bytes);
    // At the limit or past it: not read as if whole.
    expect(readSmallRegularFileSync(join(dir, 'HEAD'), bytes.length)).toBeUndefined();
    await writeFile(join(dir, 'empty'), '');
    expect(readSmallRegularFileSync(join(dir, 'empty'), 64)).toEqual(Buffer.alloc(0));
    expect(readSmallRegularFileSync(join(dir, 'missing'), 64)).toBeNull();
    await mkdir(join(dir, 'folder'));
    expect(readSmallRegularFileSync(join(dir, 'folder'), 64)).toBeUndefined();
    await symlink(join(dir, 'HEAD'), join(dir, 'link'));
    expect(readSmallRegularFileSync(join(dir, 'link'), 64)).toBeUndefined();
    if (process.platform !== 'win32') {
      execFileSync('mkfifo', [join(dir, 'fifo')]);
      expect(readSmallRegularFileSync(join(dir, 'fifo'), 64)).toBeUndefined();
    }
  });
});
