// The store reads a run makes beyond the protocol's: the first pick takes the ready read made while the
// run was checked, and a run that knows every bead closed reads the epic once to end, with no ready read.
// Each saving holds only while nothing can have changed the beads; these tests change them.
import { describe, expect, it } from 'vitest';
import type { Bead, BeadStore } from '../../src/beads/types.js';
import type { BeadGuard } from '../../src/loop/types.js';
import { createHarness, ok, type Harness } from './harness.js';

/** The harness's store with every ready and graph read counted. */
function countingStore(h: Harness): { store: BeadStore; reads: { ready: number; graph: number } } {
  const reads = { ready: 0, graph: 0 };
  const store: BeadStore = Object.create(h.store) as BeadStore;
  store.ready = (...args) => {
    reads.ready += 1;
    return h.store.ready(...args);
  };
  store.graph = (...args) => {
    reads.graph += 1;
    return h.store.graph(...args);
  };
  return { store, reads };
}

/** What validation reads before a run: the epic's beads, with no runner holding its lock. */
async function beadsAtStart(h: Harness, epicId: string): Promise<Bead[]> {
  return (await h.store.graph(epicId)).beads;
}

describe('runner: reads a run makes beyond ready, claim and close', () => {
  it('ends with one read of the epic and no ready read once every bead it knows is closed', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b', 'c']);
    const { store, reads } = countingStore(h);
    const summary = await h.run({ epicId, beadsAtStart: await beadsAtStart(h, epicId) }, { store });
    expect(summary.reason).toBe('done');
    expect(h.requests.map((r) => r.bead.id)).toEqual(ids);
    expect((await h.store.show(epicId)).status).toBe('closed');
    // One ready per bead picked, none after the last: the end's read of the epic showed nothing open.
    expect(reads).toEqual({ ready: 3, graph: 1 });
  });

  it('starts the end read beside the close of the last bead, and takes it with that bead closed', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b']);
    const order: string[] = [];
    const { store, reads } = countingStore(h);
    const graph = store.graph;
    store.graph = (...args) => {
      order.push('graph');
      return graph(...args);
    };
    // The last close lands only after the end read was made, so that read shows b still open.
    store.close = async (id, reason) => {
      order.push(`close ${id}`);
      if (id === ids[1]) await new Promise((resolve) => setTimeout(resolve, 20));
      const closed = await h.store.close(id, reason);
      order.push(`closed ${id}`);
      return closed;
    };
    const summary = await h.run({ epicId, beadsAtStart: await beadsAtStart(h, epicId) }, { store });
    expect(summary.reason).toBe('done');
    // The read starts just before the close is asked, and b's close lands after it.
    expect(order).toEqual([
      `close ${ids[0]}`,
      `closed ${ids[0]}`,
      'graph',
      `close ${ids[1]}`,
      `closed ${ids[1]}`,
      `close ${epicId}`,
      `closed ${epicId}`,
    ]);
    expect(reads).toEqual({ ready: 2, graph: 1 });
    expect((await h.store.show(epicId)).status).toBe('closed');
  });

  it('stops as before when the store refused the last close: the read beside it is not used', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a']);
    const { store, reads } = countingStore(h);
    let refused = 0;
    store.close = async (id, reason) => {
      if (id === ids[0] && refused === 0) {
        refused += 1;
        return { ok: false, reason: 'database is locked' };
      }
      return h.store.close(id, reason);
    };
    const error = await h
      .run({ epicId, beadsAtStart: await beadsAtStart(h, epicId) }, { store })
      .catch((e: unknown) => e);
    // The store did not close it: the run says so and stops; no end is explained from the early read.
    expect((error as Error).message).toContain(`Bead ${ids[0]} ran but the store did not close it`);
    expect((await h.store.show(ids[0]!)).status).toBe('in_progress');
    expect((await h.store.show(epicId)).status).toBe('open');
    expect(reads.graph).toBe(1);
  });

  it('still runs a bead the last bead added: the end read finds it open, and a ready read picks it', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'planner']);
    let added = '';
    h.behaviours.set('planner', async () => {
      added = (await h.store.create({ title: 'added by the planner', parent: epicId })).id;
      return ok();
    });
    const { store, reads } = countingStore(h);
    const summary = await h.run({ epicId, beadsAtStart: await beadsAtStart(h, epicId) }, { store });
    expect(summary.reason).toBe('done');
    expect(h.requests.map((r) => r.bead.id)).toEqual([...ids, added]);
    expect((await h.store.show(added)).status).toBe('closed');
    expect((await h.store.show(epicId)).status).toBe('closed');
    expect(reads.graph).toBe(2);
  });

  it('reads ready after all when a bead it knows was reopened by someone else meanwhile', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b']);
    h.behaviours.set('b', async () => {
      await h.store.reopen(ids[0]!, 'reopened by a human');
      return ok();
    });
    const summary = await h.run({ epicId, beadsAtStart: await beadsAtStart(h, epicId) });
    expect(summary.reason).toBe('done');
    expect(h.requests.map((r) => r.bead.id)).toEqual([ids[0], ids[1], ids[0]]);
    expect((await h.store.show(epicId)).status).toBe('closed');
  });

  it('says why the epic stalls when the last bead added a bead that cannot run', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a']);
    const outside = await h.store.create({ title: 'outside blocker' });
    let added = '';
    h.behaviours.set('a', async () => {
      added = (await h.store.create({ title: 'waits outside', parent: epicId })).id;
      await h.store.addDependency(added, outside.id);
      return ok();
    });
    const summary = await h.run({ epicId, beadsAtStart: await beadsAtStart(h, epicId) });
    expect(summary.reason).toBe('stalled');
    expect(summary.message).toContain(`${added} "waits outside": waits for ${outside.id}`);
    expect((await h.store.show(epicId)).status).toBe('open');
  });

  it('takes the ready read made at the start for the first pick, and reads ready for every pick after', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b']);
    const { store, reads } = countingStore(h);
    const readyAtStart = h.store.ready(epicId, { recursive: true });
    await h.run({ epicId, beadsAtStart: await beadsAtStart(h, epicId), readyAtStart }, { store });
    expect(h.requests.map((r) => r.bead.id)).toEqual(ids);
    expect(reads.ready).toBe(1);
  });

  it('reads ready again when recovery reopened a bead the start read could not list', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['left in progress', 'b'], { priorities: [1, 2] });
    await h.store.claim(ids[0]!);
    // Read while the dead runner's claim stood: it lists b only.
    const readyAtStart = h.store.ready(epicId, { recursive: true });
    h.lockState.holder = { pid: 999, host: 'test-host', started_at: 'earlier', epic: epicId, run_id: 'dead' };
    const summary = await h.run({ epicId, readyAtStart });
    expect(summary.reason).toBe('done');
    // The reopened bead (higher priority) comes first, as a fresh read shows it.
    expect(h.requests.map((r) => r.bead.id)).toEqual(ids);
  });

  it('reads ready again when a guard ran before the first pick', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a']);
    const readyAtStart = h.store.ready(epicId, { recursive: true });
    let added = '';
    const guard: BeadGuard = {
      start: async () => {
        added = (await h.store.create({ title: 'made by the guard', parent: epicId, priority: 0 })).id;
      },
      beforeBead: async () => undefined,
      afterBead: async () => undefined,
      leftOpen: async () => undefined,
    };
    await h.run({ epicId, readyAtStart }, { guard });
    expect(h.requests.map((r) => r.bead.id)).toEqual([added, ...ids]);
  });

  it('reads ready again when the start read failed, and runs as usual', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a']);
    const readyAtStart = Promise.reject(new Error('br was busy'));
    const summary = await h.run({ epicId, readyAtStart });
    expect(summary.reason).toBe('done');
    expect(h.requests.map((r) => r.bead.id)).toEqual(ids);
  });
});
