// writeFileAtomic: readers see the old file or the new, and a write that fails leaves nothing beside it.
import { execa } from 'execa';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { writeFileAtomic } from '../../src/infra/atomic-file.js';

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
