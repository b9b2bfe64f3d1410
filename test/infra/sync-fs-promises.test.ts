import * as real from 'node:fs/promises';
import { constants, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as sync from '../../src/infra/sync-fs-promises.js';

// The status bundle's node:fs/promises (scripts/build.mjs): every function gives what Node's gives,
// value or error, side by side on the same files.

/** What a call came to: its value, or its error's code, syscall and path. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await call() };
  } catch (error) {
    const { code, syscall, path } = error as NodeJS.ErrnoException;
    return { code, syscall, path };
  }
}

let dir: string;
beforeEach(async () => {
  dir = await real.mkdtemp(join(tmpdir(), 'sync-fsp-'));
});
afterEach(async () => {
  await real.rm(dir, { recursive: true, force: true });
});

describe('sync-fs-promises', () => {
  it('returns a promise, and rejects it (never throws) on an error', async () => {
    const missing = join(dir, 'missing');
    const pending = sync.open(missing, 'r');
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).rejects.toMatchObject({ code: 'ENOENT', syscall: 'open', path: missing });
  });

  it('reads, stats, lists and resolves as Node does, on files there and not', async () => {
    writeFileSync(join(dir, 'a.txt'), 'héllo\n');
    await real.mkdir(join(dir, 'sub'));
    await real.symlink('a.txt', join(dir, 'link'));
    const paths = ['a.txt', 'sub', 'link', 'missing', 'a.txt/below'].map((name) => join(dir, name));
    for (const path of paths) {
      expect(await outcome(() => sync.open(path, 'r').then((handle) => handle.close()))).toEqual(
        await outcome(() => real.open(path, 'r').then((handle) => handle.close())),
      );
      for (const call of ['stat', 'lstat'] as const) {
        const mine = await outcome(() => sync[call](path, { bigint: true }));
        const node = await outcome(() => real[call](path, { bigint: true }));
        expect(mine).toEqual(node);
      }
      expect(await outcome(() => sync.realpath(path))).toEqual(await outcome(() => real.realpath(path)));
      expect(await outcome(() => sync.access(path, constants.W_OK))).toEqual(
        await outcome(() => real.access(path, constants.W_OK)),
      );
    }
    expect(await sync.readdir(dir)).toEqual(await real.readdir(dir));
    const names = (entries: { name: string; isDirectory(): boolean; isSymbolicLink(): boolean }[]) =>
      entries.map((entry) => [entry.name, entry.isDirectory(), entry.isSymbolicLink()]);
    expect(names(await sync.readdir(dir, { withFileTypes: true }))).toEqual(
      names(await real.readdir(dir, { withFileTypes: true })),
    );
    expect(await outcome(() => sync.readdir(join(dir, 'a.txt')))).toEqual(
      await outcome(() => real.readdir(join(dir, 'a.txt'))),
    );
  });

  it('makes, renames and removes as Node does', async () => {
    const deep = join(dir, 'x', 'y');
    expect(await sync.mkdir(deep, { recursive: true })).toBe(join(dir, 'x'));
    expect(await outcome(() => sync.mkdir(deep))).toEqual(await outcome(() => real.mkdir(deep)));
    const temp = await sync.mkdtemp(join(dir, 'tmp-'));
    expect(temp.startsWith(join(dir, 'tmp-'))).toBe(true);
    await sync.writeFile(join(deep, 'f'), 'one', { flag: 'wx' });
    expect(await outcome(() => sync.writeFile(join(deep, 'f'), 'two', { flag: 'wx' }))).toEqual(
      await outcome(() => real.writeFile(join(deep, 'f'), 'two', { flag: 'wx' })),
    );
    await sync.rename(join(deep, 'f'), join(dir, 'g'));
    expect(readFileSync(join(dir, 'g'), 'utf8')).toBe('one');
    await sync.unlink(join(dir, 'g'));
    expect(await outcome(() => sync.unlink(join(dir, 'g')))).toEqual(
      await outcome(() => real.unlink(join(dir, 'g'))),
    );
    expect(await outcome(() => sync.rm(join(dir, 'x')))).toEqual(
      await outcome(() => real.rm(join(dir, 'x'))),
    );
    await sync.rm(join(dir, 'x'), { recursive: true, force: true });
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });

  it('gives a file handle that reads, writes, appends, truncates and closes as a FileHandle', async () => {
    const path = join(dir, 'h');
    for (const fs of [sync, real]) {
      writeFileSync(path, 'abcdef');
      const handle = await fs.open(path, 'r+');
      const buffer = Buffer.alloc(3);
      const read = await handle.read(buffer, 0, 3, 2);
      expect([read.bytesRead, buffer.toString()]).toEqual([3, 'cde']);
      // From the current position (0: the read above gave its own), to the end.
      expect(await handle.readFile('utf8')).toBe('abcdef');
      await handle.write(Buffer.from('XY'), 0, 2, 1);
      await handle.truncate(5);
      expect((await handle.stat()).size).toBe(5);
      await handle.sync();
      await handle.close();
      expect(readFileSync(path, 'utf8')).toBe('aXYde');
      const appending = await fs.open(path, constants.O_WRONLY | constants.O_APPEND);
      await appending.appendFile('!\n');
      await appending.close();
      expect(readFileSync(path, 'utf8')).toBe('aXYde!\n');
      const fresh = await fs.open(join(dir, `new-${fs === sync ? 'sync' : 'real'}`), 'wx');
      await fresh.writeFile('whole');
      expect((await fresh.stat({ bigint: true })).size).toBe(5n);
      await fresh.close();
    }
    expect(await outcome(() => sync.open(path, 'wx'))).toEqual(await outcome(() => real.open(path, 'wx')));
  });
});
