// The ignored files a measured run reads: what it changed of them is put back from the copy, or left and
// named when too large to copy; the same bytes written again get their times back; what the runs write
// themselves (build outputs, the recorded outputs, the paths the loop names as rebuilt) is not held.
import { mkdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDataWatch, isRunWritten } from '../../src/autoresearch/measured-data.js';
import { MAX_COPIED_FILE } from '../../src/infra/file-copies.js';
import { identityAt } from '../../src/infra/ignored-files.js';
import { tempTree } from '../support/temp-tree.js';

/** The identities of `paths` in `dir`, as the dependency guard's snapshot gives them. */
async function fingerprint(dir: string, paths: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const path of paths) {
    const id = await identityAt(join(dir, path));
    if (id !== null) found.set(path, id);
  }
  return found;
}

const PATHS = ['data/key.txt', 'data/big.bin', 'build/app', 'gen/table.txt', 'results.json', 'data/new.txt'];

async function setUp() {
  const dir = await tempTree({
    'data/key.txt': '7\n',
    'data/big.bin': Buffer.alloc(MAX_COPIED_FILE + 1, 1),
    'build/app': 'old build\n',
    'gen/table.txt': 'generated\n',
    'results.json': '{}\n',
  });
  // An old time, as a dataset has: what is put back must have it again.
  await utimes(join(dir, 'data', 'key.txt'), new Date('2020-01-01'), new Date('2020-01-01'));
  const watch = createDataWatch(dir, ['gen/']);
  const outputs = new Set(['results.json']);
  const before = await fingerprint(dir, PATHS);
  await watch.prime(before, outputs);
  return { dir, watch, outputs };
}

describe('createDataWatch', () => {
  it('puts back what a run changed or removed of the data, with its times; names what it cannot', async () => {
    const { dir, watch, outputs } = await setUp();
    await writeFile(join(dir, 'data', 'key.txt'), '3\n');
    await writeFile(join(dir, 'data', 'big.bin'), 'x');
    const change = await watch.settle(await fingerprint(dir, PATHS), outputs);
    expect(change.putBack).toEqual(['data/key.txt']);
    expect(change.lost).toEqual(['data/big.bin']);
    expect(await readFile(join(dir, 'data', 'key.txt'), 'utf8')).toBe('7\n');
    expect((await stat(join(dir, 'data', 'key.txt'))).mtime.toISOString()).toBe('2020-01-01T00:00:00.000Z');

    const removed = await fingerprint(dir, PATHS);
    await watch.prime(removed, outputs);
    await rm(join(dir, 'data', 'key.txt'));
    expect((await watch.settle(await fingerprint(dir, PATHS), outputs)).putBack).toEqual(['data/key.txt']);
    expect(await readFile(join(dir, 'data', 'key.txt'), 'utf8')).toBe('7\n');
  });

  it('names the same bytes written again, and gives them their times back', async () => {
    const { dir, watch, outputs } = await setUp();
    await writeFile(join(dir, 'data', 'key.txt'), '7\n');
    const change = await watch.settle(await fingerprint(dir, PATHS), outputs);
    expect(change).toEqual({ putBack: [], lost: [], rewritten: ['data/key.txt'], made: [] });
    expect((await stat(join(dir, 'data', 'key.txt'))).mtime.toISOString()).toBe('2020-01-01T00:00:00.000Z');
  });

  it('leaves build outputs, the rebuilt paths and the recorded outputs to the runs; names what they made', async () => {
    const { dir, watch, outputs } = await setUp();
    await writeFile(join(dir, 'build', 'app'), 'new build\n');
    await writeFile(join(dir, 'gen', 'table.txt'), 'regenerated\n');
    await writeFile(join(dir, 'results.json'), '{"score": 1}\n');
    await writeFile(join(dir, 'data', 'new.txt'), 'made\n');
    const change = await watch.settle(await fingerprint(dir, PATHS), outputs);
    expect(change).toEqual({ putBack: [], lost: [], rewritten: [], made: ['data/new.txt'] });
    expect(await readFile(join(dir, 'build', 'app'), 'utf8')).toBe('new build\n');
  });

  it('takes the start afresh: a file put back between two runs (by an agent’s guard) is no change of the next', async () => {
    const { dir, watch, outputs } = await setUp();
    const listed = await fingerprint(dir, PATHS);
    // Written and put back after the listing was taken, before the run: a new identity, the same bytes.
    await writeFile(join(dir, 'data', 'key.txt'), '7\n');
    await watch.prime(listed, outputs);
    const change = await watch.settle(await fingerprint(dir, PATHS), outputs);
    expect(change).toEqual({ putBack: [], lost: [], rewritten: [], made: [] });
  });

  it("leaves tools' and editors' own state alone: an IDE's workspace file, Hypothesis' database, a swap file", async () => {
    for (const path of [
      '.idea/workspace.xml',
      'sub/.hypothesis/examples/ab',
      '.gradle/8.5/fileHashes.bin',
      'data/.key.txt.swp',
      'notes.md~',
      '.DS_Store',
    ]) {
      expect(isRunWritten(path, []), path).toBe(true);
    }
    for (const path of ['data/key.txt', 'idea/workspace.xml', 'data/swp.txt', 'models/weights.bin']) {
      expect(isRunWritten(path, []), path).toBe(false);
    }
    expect(isRunWritten('gen/table.txt', ['gen/'])).toBe(true);
    // Outside the repository no folder's name makes a file a build's.
    expect(isRunWritten('/tmp/datasets/build/key.txt', [])).toBe(false);
  });

  it('names a folder a run made whole, and a file it made in a folder that was there by itself', async () => {
    const { dir, watch, outputs } = await setUp();
    await mkdir(join(dir, 'results', 'run-7'), { recursive: true });
    await writeFile(join(dir, 'results', 'run-7', 'a.json'), '{}');
    await writeFile(join(dir, 'results', 'run-7', 'b.json'), '{}');
    await writeFile(join(dir, 'data', 'extra.txt'), 'x');
    const paths = [...PATHS, 'results/run-7/a.json', 'results/run-7/b.json', 'data/extra.txt'];
    const change = await watch.settle(await fingerprint(dir, paths), outputs);
    expect(change.made).toEqual(['data/extra.txt', 'results/']);
  });

  it('finds at the next start what a run killed while it measured left changed; nothing after a clean kill', async () => {
    const { dir, outputs } = await setUp();
    const marker = join(dir, 'measuring.json');
    const listed = await fingerprint(dir, PATHS);
    // A runner killed during a run that changed the key: its copies die with it, its marker stays.
    await createDataWatch(dir, [], { marker }).prime(listed, outputs);
    await writeFile(join(dir, 'data', 'key.txt'), '3\n');
    const next = createDataWatch(dir, [], { marker });
    expect(await next.prime(await fingerprint(dir, PATHS), outputs)).toEqual(['data/key.txt']);
    await next.settle(await fingerprint(dir, PATHS), outputs);
    await expect(stat(marker)).rejects.toThrow();

    // Killed during a run that changed nothing: the next start finds nothing.
    await createDataWatch(dir, [], { marker }).prime(await fingerprint(dir, PATHS), outputs);
    expect(await createDataWatch(dir, [], { marker }).prime(await fingerprint(dir, PATHS), outputs)).toEqual(
      [],
    );
  });
});
