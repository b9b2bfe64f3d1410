// The embedded store's version (BeadStore.version): named from its file's identity without reading a
// bead, the same while only reads happen, and another after every kind of change, compaction included.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createEmbeddedStore, createMemoryBeadStore } from '../../src/beads/embedded/index.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

it('stays while the store is read and moves with every change to it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'forge-store-version-'));
  dirs.push(dir);
  const store = createEmbeddedStore({ cwd: dir });
  expect(await store.version?.()).toBeUndefined();
  await store.init();
  const tokens: string[] = [];
  const seen = async (what: string) => {
    const version = await store.version?.();
    expect(version, what).toBeDefined();
    expect(Math.abs((version?.changedAtMs ?? 0) - Date.now()), what).toBeLessThan(60_000);
    tokens.push(version?.token ?? '');
  };
  await seen('init');
  const epic = (await store.create({ title: 'Epic', type: 'epic' })).id;
  await seen('create');
  const bead = (await store.create({ title: 'Bead', parent: epic })).id;
  await seen('create a child');
  await store.ready(epic);
  await store.graph(epic);
  await store.list();
  await seen('reads');
  await store.claim(bead);
  await seen('claim');
  await store.comment(bead, 'a note');
  await seen('comment');
  await store.addLabel(bead, 'x');
  await seen('label');
  await store.close(bead, 'done');
  await seen('close');
  // Flushing compacts the appended lines: the file is replaced whole.
  await store.flush();
  await seen('flush');
  expect(tokens[3]).toBe(tokens[2]);
  expect(new Set(tokens.filter((_, i) => i !== 3)).size).toBe(tokens.length - 1);
});

it('is none for a store held in memory', async () => {
  expect(createMemoryBeadStore().version).toBeUndefined();
});
