// Snapshots of named files, most of which do not exist: what each holds, and what changed after.
import { execFileSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  changedPaths,
  MAX_HELD_BYTES,
  OversizedFileError,
  restoreSnapshot,
  takeSnapshot,
} from '../../src/infra/file-vault.js';
import { openOwnLogSync } from '../../src/infra/own-log.js';

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-vault-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('takeSnapshot of named files', () => {
  it('holds each file’s bytes, and null for one that is absent, under a file, in no folder or not a regular file', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'present'), 'bytes');
    await writeFile(join(dir, 'plain'), 'a file, not a folder');
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    const files = ['present', 'absent', 'plain/under', 'no-folder/absent', 'fifo'].map((name) =>
      join(dir, name),
    );
    const snapshot = await takeSnapshot({ repo: dir, dirs: [], files });
    const held = Object.fromEntries(
      [...snapshot].map(([path, content]) => [path.slice(dir.length + 1), content?.toString() ?? null]),
    );
    expect(held).toEqual({
      present: 'bytes',
      absent: null,
      'plain/under': null,
      'no-folder/absent': null,
      fifo: null,
    });
  });

  it('sees a file made, changed or removed between two snapshots, and puts each back', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, '.cargo'));
    await writeFile(join(dir, '.cargo', 'config.toml'), 'as it was');
    await writeFile(join(dir, 'removed'), 'gone later');
    const files = [
      join(dir, '.cargo', 'config.toml'),
      join(dir, 'made'),
      join(dir, 'removed'),
      join(dir, 'x', 'y'),
    ];
    const before = await takeSnapshot({ repo: dir, dirs: [], files });
    await writeFile(join(dir, '.cargo', 'config.toml'), 'changed');
    await writeFile(join(dir, 'made'), 'new');
    await rm(join(dir, 'removed'));
    await mkdir(join(dir, 'x'));
    await writeFile(join(dir, 'x', 'y'), 'new too');
    const changed = changedPaths(before, await takeSnapshot({ repo: dir, dirs: [], files }));
    expect(changed).toEqual([...files].sort());
    await restoreSnapshot(before, changed);
    expect(changedPaths(before, await takeSnapshot({ repo: dir, dirs: [], files }))).toEqual([]);
  });

  it('holds a file past MAX_HELD_BYTES as a mark of it: unchanged while untouched, put back once grown into one, and one already that large is never written over', async () => {
    const dir = await tempDir();
    const files = [join(dir, 'ledger'), join(dir, 'big')];
    await writeFile(files[0]!, 'small\n');
    execFileSync('truncate', ['-s', String(MAX_HELD_BYTES + 1), files[1]!]);
    const layout = { repo: dir, dirs: [], files };
    const before = await takeSnapshot(layout);
    expect(before.get(files[1]!)!.length).toBeLessThan(200);
    expect(changedPaths(before, await takeSnapshot(layout))).toEqual([]);
    // Grown past it (3 GB, past what one read of Node holds): seen as changed, and put back.
    execFileSync('truncate', ['-s', '3G', files[0]!]);
    execFileSync('truncate', ['-s', '3G', files[1]!]);
    const changed = changedPaths(before, await takeSnapshot(layout));
    expect(changed).toEqual([...files].sort());
    await expect(restoreSnapshot(before, [files[0]!])).resolves.toBeUndefined();
    expect(await readFile(files[0]!, 'utf8')).toBe('small\n');
    // No copy of what the large one was: said, and it is left as it is.
    await expect(restoreSnapshot(before, [files[1]!])).rejects.toThrow(OversizedFileError);
    expect((await stat(files[1]!)).size).toBe(3 * 1024 ** 3);
  });

  // Seen in a test run: /dev/null, watched as GIT_CONFIG_GLOBAL and found "changed", was removed.
  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'never removes or replaces a device node, whatever the snapshot says was there',
    async () => {
      try {
        await restoreSnapshot(new Map([['/dev/null', null]]), ['/dev/null']);
        await restoreSnapshot(new Map([['/dev/null', Buffer.from('[user]\n')]]), ['/dev/null']);
        expect((await stat('/dev/null')).isCharacterDevice()).toBe(true);
      } finally {
        // Should it ever regress, the machine gets its /dev/null back.
        if (!(await stat('/dev/null').catch(() => undefined))?.isCharacterDevice()) {
          await rm('/dev/null', { force: true });
          execFileSync('mknod', ['-m', '666', '/dev/null', 'c', '1', '3']);
        }
      }
    },
  );

  // Seen: a queue test handed /dev/null as a transcript path; the log opener took it for a link an agent
  // left, removed it and made a file there, and every later spawn and git call of the run failed.
  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'a log opened at a device path leaves the device, and refuses',
    () => {
      try {
        expect(() => openOwnLogSync('/dev/null', '/')).toThrow(/is a device, not a log file/);
        expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
      } finally {
        if (!statSync('/dev/null', { throwIfNoEntry: false })?.isCharacterDevice()) {
          rmSync('/dev/null', { force: true });
          execFileSync('mknod', ['-m', '666', '/dev/null', 'c', '1', '3']);
        }
      }
    },
  );
});
