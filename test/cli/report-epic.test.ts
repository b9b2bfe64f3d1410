// readEpicReport gathers a plain epic's report from one read of its graph (the one its status makes) and
// the ready read, and says what the status says.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryBeadStore } from '../../src/beads/embedded/store.js';
import type { BeadStore } from '../../src/beads/types.js';
import { epicStatus } from '../../src/cli/epic-status.js';
import { buildEpicReport, readEpicReport } from '../../src/cli/report-epic.js';
import { createRunDir } from '../../src/infra/run-dir.js';
import { FAILED_LABEL } from '../../src/loop/select.js';

/** An epic with a bead of each state: closed, failed (label and the runner's comment), waiting, ready. */
async function epicOfEveryState(store: BeadStore) {
  const epic = await store.create({ title: 'epic', type: 'epic' });
  const bead = (title: string) => store.create({ title, parent: epic.id });
  const done = await bead('done');
  await store.close(done.id, 'Done');
  const failed = await bead('failed');
  await store.addLabel(failed.id, FAILED_LABEL);
  await store.comment(failed.id, 'ralph-loop attempt 3: error (the agent exited 1)');
  const ready = await bead('ready');
  const waits = await bead('waits');
  await store.addDependency(waits.id, ready.id);
  return epic.id;
}

/** The store, counting each kind of read. */
function counted(store: BeadStore) {
  const calls: Record<string, number> = {};
  const count =
    <K extends 'show' | 'children' | 'ready' | 'graph'>(name: K) =>
    (...args: Parameters<BeadStore[K]>) => {
      calls[name] = (calls[name] ?? 0) + 1;
      return (store[name] as (...a: Parameters<BeadStore[K]>) => ReturnType<BeadStore[K]>)(...args);
    };
  return {
    calls,
    store: { show: count('show'), children: count('children'), ready: count('ready'), graph: count('graph') },
  };
}

describe('the report of a plain epic', () => {
  it('reads the graph once and the ready beads once, and says what the status’s own reads say', async () => {
    const store = createMemoryBeadStore();
    const epicId = await epicOfEveryState(store);
    const runDir = createRunDir(await mkdtemp(join(tmpdir(), 'forge-report-')));
    const ports = {
      runDir,
      now: () => Date.parse('2026-11-29T12:00:00Z'),
      host: 'here',
      isProcessAlive: () => false,
    };

    const { calls, store: reads } = counted(store);
    const report = await readEpicReport(epicId, { ...ports, store: reads });
    expect(calls).toEqual({ graph: 1, ready: 1 });

    const status = await epicStatus(epicId, { ...ports, store });
    const expected = buildEpicReport(
      status,
      await store.graph(epicId),
      [],
      0,
      new Date(ports.now()).toISOString(),
    );
    expect(report).toEqual(expected);
    expect(status.failures.map((f) => f.message)).toEqual([
      'ralph-loop attempt 3: error (the agent exited 1)',
    ]);
    expect(Object.fromEntries(status.beads.map((b) => [b.title, b.state]))).toEqual({
      done: 'done',
      failed: 'failed',
      ready: 'open',
      waits: 'blocked',
    });
  });

  it('of an id the store does not hold: the status’s own error, which says what to look at', async () => {
    const store = createMemoryBeadStore();
    const runDir = createRunDir(await mkdtemp(join(tmpdir(), 'forge-report-')));
    const ports = { runDir, now: () => 0, host: 'here', isProcessAlive: () => false };
    await expect(readEpicReport('bd-none', { ...ports, store })).rejects.toThrow(
      'bd-none has no autoresearch loop and is not a bead in the store.',
    );
  });
});
