// What the runner does with an agent's change to the files git ignores besides dependencies and caches:
// put back from its copy, removed when the agent made it or a tool writes it again, or left for a
// person when neither can be done; never a write through a link out of the tree.
import { chmod, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isDerived, undoIgnoredChanges } from '../../src/autoresearch/ignored-guard.js';
import { FileCopies, MAX_COPIED_FILE } from '../../src/infra/file-copies.js';
import { fingerprintFiles } from '../../src/infra/ignored-files.js';
import { tempTree } from '../support/temp-tree.js';

const tree = (files: Record<string, string | Buffer>) => tempTree(files, 'forge-ignored-');

const ENTRIES = ['data/', 'dist/', '.env', 'app.log', 'src/generated/'];
const others = (dir: string) => fingerprintFiles(dir, ENTRIES).others;

/** Takes the before state and its copies, lets `change` act, and undoes it as the guard does. */
async function undoAround(dir: string, change: () => Promise<void>) {
  const before = others(dir);
  const copies = new FileCopies(dir);
  await copies.prime(before);
  await change();
  return undoIgnoredChanges(dir, before, others(dir), copies);
}

describe('an agent’s change to ignored files', () => {
  it('is put back from the copy, mode and times included, and what it made is removed', async () => {
    const dir = await tree({ 'data/weights.json': '{"factor": 1}', '.env': 'KEY=1\n' });
    await chmod(join(dir, 'data/weights.json'), 0o640);
    const was = await stat(join(dir, 'data/weights.json'));
    const undo = await undoAround(dir, async () => {
      await writeFile(join(dir, 'data/weights.json'), '{"factor": 10}');
      await chmod(join(dir, 'data/weights.json'), 0o777);
      await rm(join(dir, '.env'));
      await writeFile(join(dir, 'data/override.json'), '{"factor": 20}');
    });
    expect(undo).toEqual({
      restored: ['.env', 'data/weights.json'],
      removed: ['data/override.json'],
      lost: [],
    });
    expect(await readFile(join(dir, 'data/weights.json'), 'utf8')).toBe('{"factor": 1}');
    const now = await stat(join(dir, 'data/weights.json'));
    expect(now.mode & 0o777).toBe(0o640);
    expect(Math.abs(now.mtimeMs - was.mtimeMs)).toBeLessThan(0.01);
    expect(await readFile(join(dir, '.env'), 'utf8')).toBe('KEY=1\n');
    await expect(stat(join(dir, 'data/override.json'))).rejects.toThrow(/ENOENT/);
  });

  it('with no copy, is removed from a build output or a log, and left for a person elsewhere', async () => {
    const big = Buffer.alloc(MAX_COPIED_FILE + 1, 1);
    const dir = await tree({ 'dist/bundle.js': big, 'app.log': big, 'data/big.bin': big });
    const undo = await undoAround(dir, async () => {
      for (const file of ['dist/bundle.js', 'app.log', 'data/big.bin'])
        await writeFile(join(dir, file), Buffer.alloc(MAX_COPIED_FILE + 1, 2));
    });
    expect(undo).toEqual({ restored: [], removed: ['app.log', 'dist/bundle.js'], lost: ['data/big.bin'] });
    await expect(stat(join(dir, 'dist/bundle.js'))).rejects.toThrow(/ENOENT/);
    expect((await readFile(join(dir, 'data/big.bin')))[0]).toBe(2);
  });

  it('is removed, not put back nor left, under a path the metric writes again itself', async () => {
    const big = Buffer.alloc(MAX_COPIED_FILE + 1, 1);
    const dir = await tree({ 'data/processed.bin': big, 'data/weights.json': '{}' });
    const before = others(dir);
    const copies = new FileCopies(dir);
    await copies.prime(before);
    await writeFile(join(dir, 'data/processed.bin'), Buffer.alloc(MAX_COPIED_FILE + 1, 2));
    await writeFile(join(dir, 'data/weights.json'), '{"forged": true}');
    const undo = await undoIgnoredChanges(dir, before, others(dir), copies, { rebuilt: ['data/'] });
    expect(undo).toEqual({ restored: [], removed: ['data/processed.bin', 'data/weights.json'], lost: [] });
    await expect(stat(join(dir, 'data/processed.bin'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(dir, 'data/weights.json'))).rejects.toThrow(/ENOENT/);
  });

  // Git keeps no ignored file: under a doer's scope too, what it made there is not its commit's.
  it('is undone under a doer’s scope too', async () => {
    const dir = await tree({ 'src/generated/types.ts': 'old' });
    const undo = await undoAround(dir, async () => {
      await writeFile(join(dir, 'src/generated/types.ts'), 'new');
      await writeFile(join(dir, 'src/generated/cache.json'), '{}');
    });
    expect(undo).toEqual({
      restored: ['src/generated/types.ts'],
      removed: ['src/generated/cache.json'],
      lost: [],
    });
    expect(await readFile(join(dir, 'src/generated/types.ts'), 'utf8')).toBe('old');
  });

  it('is never undone through a link out of the tree: an agent’s link goes, the user’s is left', async () => {
    const outside = await tree({ 'weights.json': 'outside' });
    const dir = await tree({ 'data/weights.json': 'inside' });
    const undo = await undoAround(dir, async () => {
      await rm(join(dir, 'data'), { recursive: true });
      await symlink(outside, join(dir, 'data'));
    });
    // The agent's link is removed first, then the file is put back in a directory of the tree's own.
    expect(undo).toEqual({ restored: ['data/weights.json'], removed: ['data ->'], lost: [] });
    expect(await readFile(join(dir, 'data/weights.json'), 'utf8')).toBe('inside');
    expect(await readFile(join(outside, 'weights.json'), 'utf8')).toBe('outside');

    // A link the user made to data elsewhere: a change through it is left for a person.
    const linked = await tree({});
    await symlink(outside, join(linked, 'data'));
    const through = await undoAround(linked, () => writeFile(join(linked, 'data/weights.json'), 'forged'));
    expect(through).toEqual({ restored: [], removed: [], lost: ['data/weights.json'] });
    expect(await readFile(join(outside, 'weights.json'), 'utf8')).toBe('forged');
  });

  it('a link is put back where it led', async () => {
    const dir = await tree({ 'data/real.json': '1' });
    await symlink('real.json', join(dir, 'data/current.json'));
    const undo = await undoAround(dir, async () => {
      await unlink(join(dir, 'data/current.json'));
      await symlink('/etc/hostname', join(dir, 'data/current.json'));
    });
    expect(undo.restored).toEqual(['data/current.json']);
    expect(await readFile(join(dir, 'data/current.json'), 'utf8')).toBe('1');
  });

  it('names build outputs, scratch and logs as derived, data and settings not', () => {
    expect(
      ['dist/a.js', 'pkg/build/x.o', 'target/release/app', 'x.egg-info/PKG-INFO', 'logs/run.log'].map(
        isDerived,
      ),
    ).toEqual([true, true, true, true, true]);
    expect(['data/w.json', '.env', 'models/best.pt', 'distance.csv'].map(isDerived)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('copies of ignored files', () => {
  it('are taken only within their bounds, and only at the identity the fingerprint saw', async () => {
    const dir = await tree({
      'data/small.json': 'small',
      'data/large.bin': Buffer.alloc(MAX_COPIED_FILE + 1),
    });
    const seen = others(dir);
    await writeFile(join(dir, 'data/small.json'), 'changed before the copy');
    const copies = new FileCopies(dir);
    await copies.prime(seen);
    expect(copies.get('data/small.json', seen.get('data/small.json')!)).toBeUndefined();
    expect(copies.get('data/large.bin', seen.get('data/large.bin')!)).toBeUndefined();
    const now = others(dir);
    await copies.prime(now);
    expect(copies.get('data/small.json', now.get('data/small.json')!)?.content).toEqual(
      Buffer.from('changed before the copy'),
    );
  });
});
