// A plain epic's status keeps what it read of the embedded store (epic-status-cache.ts): the next status
// of the same store reads that instead of every bead, says exactly what a read of the store would, and
// never outlives a change to the store, a deferred bead coming due, or an edit of the cache itself.
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import type { BeadStore } from '../../src/beads/types.js';
import { STATUS_CACHE_FILE } from '../../src/cli/epic-status-cache.js';
import { epicStatus, type EpicStatus, type EpicStatusPorts } from '../../src/cli/epic-status.js';
import { createRunDir, type RunDir } from '../../src/infra/run-dir.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Later than any change the test makes: the store has settled by then. */
const settled = () => Date.now() + 5_000;

interface Fixture {
  dir: string;
  clock: FakeClock;
  store: BeadStore;
  runDir: RunDir;
  epic: string;
  first: string;
  second: string;
  failed: string;
  /** How often status read the store's beads (its graph). */
  reads(): number;
  status(wallNow?: () => number, store?: EpicStatusPorts['store']): Promise<EpicStatus>;
}

/** An epic of three beads on the embedded store: one ready, one blocked by it, one failed with a comment. */
async function fixture(clock: FakeClock = createFakeClock(Date.now())): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-status-cache-'));
  dirs.push(dir);
  const store = createEmbeddedStore({ cwd: dir, clock });
  await store.init();
  const epic = (await store.create({ title: 'Epic', type: 'epic' })).id;
  const first = (await store.create({ title: 'First', parent: epic })).id;
  const second = (await store.create({ title: 'Second', parent: epic, dependsOn: [first] })).id;
  const failed = (await store.create({ title: 'Failed', parent: epic, labels: ['ralph:failed'] })).id;
  await store.comment(failed, 'ralph-loop attempt 3 failed: the tests did not pass');
  const runDir = createRunDir(join(dir, '.forge', 'epics', epic), dir);
  await mkdir(runDir.runsDir, { recursive: true });
  let reads = 0;
  const counted: EpicStatusPorts['store'] = {
    graph: (id, options) => ((reads += 1), store.graph(id, options)),
    ready: (id, options) => store.ready(id, options),
    version: () => store.version?.() ?? Promise.resolve(undefined),
  };
  return {
    dir,
    clock,
    store,
    runDir,
    epic,
    first,
    second,
    failed,
    reads: () => reads,
    status: (wallNow = settled, over = counted) =>
      epicStatus(epic, {
        store: over,
        runDir,
        now: () => clock.now(),
        wallNow,
        host: 'here',
        isProcessAlive: () => false,
      }),
  };
}

/** The first bead deferred until `due`, as br writes it: a later line for an id replaces the earlier. */
async function defer(f: Fixture, due: number): Promise<void> {
  const path = join(f.dir, '.beads', 'issues.jsonl');
  const lines = (await readFile(path, 'utf8')).trim().split('\n');
  const line = JSON.parse(lines.findLast((text) => text.includes(`"id":"${f.first}"`)) ?? '{}') as object;
  await appendFile(path, `${JSON.stringify({ ...line, defer_until: new Date(due).toISOString() })}\n`);
}

const states = (status: EpicStatus) => status.beads.map((bead) => [bead.title, bead.state]);
const cachePath = (f: Fixture) => join(f.runDir.root, STATUS_CACHE_FILE);
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('a plain epic’s status of an unchanged embedded store', () => {
  it('reads the cache the first status left instead of the store, and says the same', async () => {
    const f = await fixture();
    const first = await f.status();
    expect(f.reads()).toBe(1);
    expect(states(first)).toEqual([
      ['First', 'open'],
      ['Second', 'blocked'],
      ['Failed', 'failed'],
    ]);
    expect(first.failures).toEqual([
      expect.objectContaining({
        bead: f.failed,
        message: 'ralph-loop attempt 3 failed: the tests did not pass',
        source: 'comment',
      }),
    ]);
    const again = await f.status();
    expect(f.reads()).toBe(1);
    expect(again).toEqual(first);
  });

  it('is not cached while the store changed under a second before (coarse file times)', async () => {
    const f = await fixture();
    await f.status(() => Date.now());
    expect(await exists(cachePath(f))).toBe(false);
    await f.status(() => Date.now());
    expect(f.reads()).toBe(2);
  });

  it('counts the store settled only if it was before the read began, however long the read took', async () => {
    const f = await fixture();
    // A read that took seconds: the store had changed just before it began, and settled during it.
    let read = false;
    const store: EpicStatusPorts['store'] = {
      graph: async (id, options) => {
        const graph = await f.store.graph(id, options);
        read = true;
        return graph;
      },
      ready: (id, options) => f.store.ready(id, options),
      version: () => f.store.version?.() ?? Promise.resolve(undefined),
    };
    await f.status(() => Date.now() + (read ? 5_000 : 0), store);
    expect(read).toBe(true);
    expect(await exists(cachePath(f))).toBe(false);
  });

  it('sees every change to the store at once: a close unblocks the bead after it', async () => {
    const f = await fixture();
    await f.status();
    await f.store.claim(f.first);
    expect(states(await f.status())[0]).toEqual(['First', 'in_progress']);
    await f.store.close(f.first, 'done');
    const after = await f.status();
    expect(f.reads()).toBe(3);
    expect(states(after)).toEqual([
      ['First', 'done'],
      ['Second', 'open'],
      ['Failed', 'failed'],
    ]);
  });

  it('sees a deferred bead come due, with nothing in the store changed', async () => {
    const f = await fixture();
    await defer(f, f.clock.now() + 3_600_000);
    expect(states(await f.status())[0]).toEqual(['First', 'blocked']);
    expect(states(await f.status())[0]).toEqual(['First', 'blocked']);
    expect(f.reads()).toBe(1);
    f.clock.advance(3_600_001);
    expect(states(await f.status())[0]).toEqual(['First', 'open']);
    expect(f.reads()).toBe(2);
  });

  it('expires with a deferred bead that comes due while the store is read', async () => {
    const start = Date.now();
    let time = start;
    const clock = { ...createFakeClock(start), now: () => time };
    const f = await fixture(clock);
    await defer(f, start + 1_000);
    // The store's ready finds the bead not yet due; by the time the view is made, it is.
    const store: EpicStatusPorts['store'] = {
      graph: (id, options) => f.store.graph(id, options),
      ready: async (id, options) => {
        const ready = await f.store.ready(id, options);
        time = start + 2_000;
        return ready;
      },
      version: () => f.store.version?.() ?? Promise.resolve(undefined),
    };
    expect(states(await f.status(settled, store))[0]).toEqual(['First', 'blocked']);
    expect(states(await f.status())[0]).toEqual(['First', 'open']);
  });

  it('does not use a cache that was edited, or made for another epic or store', async () => {
    const f = await fixture();
    const right = await f.status();
    const cached = JSON.parse(await readFile(cachePath(f), 'utf8')) as {
      view: { beads: { state: string }[] };
      epic: string;
      token: string;
    };
    for (const edit of [
      '{"format":1',
      JSON.stringify({ ...cached, epic: 'bd-other' }),
      JSON.stringify({ ...cached, token: `${cached.token}0` }),
      JSON.stringify({
        ...cached,
        view: { ...cached.view, beads: [{ ...cached.view.beads[0], state: 'sunk' }] },
      }),
      JSON.stringify({ ...cached, format: 2 }),
    ]) {
      await writeFile(cachePath(f), edit);
      expect(await f.status()).toEqual(right);
    }
    expect(f.reads()).toBe(6);
  });

  it('keeps no cache through a run folder that is a link, nor for a store that has no version', async () => {
    const f = await fixture();
    const elsewhere = await mkdtemp(join(tmpdir(), 'forge-status-cache-elsewhere-'));
    dirs.push(elsewhere);
    await rm(f.runDir.root, { recursive: true });
    await symlink(elsewhere, f.runDir.root);
    await f.status();
    expect(await exists(join(elsewhere, STATUS_CACHE_FILE))).toBe(false);

    const g = await fixture();
    const { store } = g;
    const unversioned: EpicStatusPorts['store'] = {
      graph: (id, options) => store.graph(id, options),
      ready: (id, options) => store.ready(id, options),
    };
    expect(states(await g.status(settled, unversioned))).toEqual(states(await g.status()));
    await rm(cachePath(g));
    await g.status(settled, unversioned);
    expect(await exists(cachePath(g))).toBe(false);
  });
});
