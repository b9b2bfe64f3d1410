import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { epicStatus } from '../../src/cli/epic-status.js';
import { renderEpicStatusText } from '../../src/cli/epic-status-text.js';
import { createRunDir } from '../../src/infra/run-dir.js';
import { AppError, BeadStoreError, ExitCode } from '../../src/infra/errors.js';
import { processStartTicks } from '../../src/infra/pid.js';
import type { BeadDetail } from '../../src/beads/types.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('epicStatus of an id the store does not know', () => {
  it('is a usage error even when the ready read fails first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-epic-status-'));
    dirs.push(dir);
    const notFound = (): BeadStoreError =>
      new BeadStoreError('Issue not found: bd-nope', { code: 'ISSUE_NOT_FOUND' });
    const store = {
      // The graph's read answers last; ready fails at once, as a store may for an unknown parent.
      graph: () => new Promise<never>((_resolve, reject) => setTimeout(() => reject(notFound()), 20)),
      ready: () => Promise.reject(notFound()),
    };
    const error = await epicStatus('bd-nope', {
      store,
      runDir: createRunDir(join(dir, 'run')),
      now: () => 0,
      host: 'here',
      isProcessAlive: () => false,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).exitCode).toBe(ExitCode.usage);
    expect((error as AppError).message).toBe(
      'bd-nope has no autoresearch loop and is not a bead in the store.',
    );
  });
});

describe('epicStatus reads', () => {
  it('ask for the epic’s graph and its ready beads at once (each is a br process)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-epic-status-'));
    dirs.push(dir);
    const epic = { id: 'bd-e', title: 'E', status: 'open', issue_type: 'epic' } as BeadDetail;
    const asked = new Set<string>();
    let allAsked: () => void = () => undefined;
    const together = new Promise<void>((resolve) => (allAsked = resolve));
    const ask = (name: string) => {
      asked.add(name);
      if (asked.size === 2) allAsked();
    };
    const store = {
      // The graph answers only once ready was asked too: read one after the other, it never would.
      graph: async () => {
        ask('graph');
        let timer: NodeJS.Timeout | undefined;
        const waited = await Promise.race([
          together.then(() => true),
          new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 2000))),
        ]);
        clearTimeout(timer);
        if (!waited) throw new Error(`asked one at a time: only ${[...asked].join(', ')}`);
        return { epic, beads: [], outside: [], missing: [] };
      },
      ready: async () => (ask('ready'), []),
    };
    const status = await epicStatus('bd-e', {
      store,
      runDir: createRunDir(join(dir, 'run')),
      now: () => 0,
      host: 'here',
      isProcessAlive: () => false,
    });
    expect(status).toMatchObject({ epic: 'bd-e', title: 'E', counts: { total: 0 } });
  });
});

describe('epicStatus beads', () => {
  it('are listed as br lists ready work (P0–P1 first, then oldest first), however the graph came', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-epic-status-'));
    dirs.push(dir);
    const epic = { id: 'bd-e', title: 'E', status: 'open', issue_type: 'epic' } as BeadDetail;
    const bead = (id: string, priority: number, created_at: string) =>
      ({
        id,
        title: id,
        status: 'open',
        priority,
        created_at,
        issue_type: 'task',
        labels: [],
      }) as unknown as BeadDetail;
    const walked = [
      bead('bd-e.3', 2, '2026-11-29T10:00:03Z'),
      bead('bd-e.1', 2, '2026-11-29T10:00:01Z'),
      bead('bd-e.4', 0, '2026-11-29T10:00:04Z'),
      bead('bd-e.2', 2, '2026-11-29T10:00:02Z'),
    ];
    const status = await epicStatus('bd-e', {
      store: {
        graph: async () => ({ epic, beads: walked, outside: [], missing: [] }),
        ready: async () => walked,
      },
      runDir: createRunDir(join(dir, 'run')),
      now: () => 0,
      host: 'here',
      isProcessAlive: () => false,
    });
    expect(status.beads.map((b) => b.id)).toEqual(['bd-e.4', 'bd-e.1', 'bd-e.2', 'bd-e.3']);
  });
});

describe('epicStatus of a locked epic: the one liveness rule for lock holders', () => {
  const epic = { id: 'bd-e', title: 'E', status: 'open', issue_type: 'epic' } as BeadDetail;
  const store = {
    graph: async () => ({ epic, beads: [], outside: [], missing: [] }),
    ready: async () => [],
  };

  it('a live pid that is now another process (its start differs from the lock’s) is a stale lock', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-epic-status-'));
    dirs.push(dir);
    const runDir = createRunDir(join(dir, 'run'));
    const start = processStartTicks(process.pid);
    expect(start).toBeDefined();
    const lock = { pid: process.pid, host: 'here', started_at: 'x', epic: 'bd-e', run_id: 'r' };
    const status = async (pidStart: number) => {
      await mkdir(dirname(runDir.lockPath), { recursive: true });
      await writeFile(runDir.lockPath, JSON.stringify({ ...lock, pid_start: pidStart }));
      return epicStatus('bd-e', { store, runDir, now: () => 0, host: 'here', isProcessAlive: () => true });
    };
    const reused = await status(start! + 1);
    expect(reused.live).toBeNull();
    expect(reused.stale_lock).toMatchObject({ pid: process.pid, host: 'here' });
    expect((await status(start!)).live).toMatchObject({ pid: process.pid, verified: true });
  });

  it("a parallel run's beads in flight show as a list, in the JSON and the text", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-epic-status-'));
    dirs.push(dir);
    const runDir = createRunDir(join(dir, 'run'));
    await mkdir(dirname(runDir.lockPath), { recursive: true });
    const lock = { pid: process.pid, host: 'here', started_at: 'x', epic: 'bd-e', run_id: 'r' };
    await writeFile(
      runDir.lockPath,
      JSON.stringify({ ...lock, bead: 'bd-e.2', running: ['bd-e.1', 'bd-e.2'] }),
    );
    const status = await epicStatus('bd-e', {
      store,
      runDir,
      now: () => 0,
      host: 'here',
      isProcessAlive: () => true,
    });
    expect(status.live?.running).toEqual(['bd-e.1', 'bd-e.2']);
    expect(renderEpicStatusText(status)).toContain('2 running: bd-e.1, bd-e.2');
  });
});

describe('epicStatus of a run whose log grows between statuses', () => {
  it('reads each log on from where the last status left it, and shows what a whole read shows', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-epic-status-'));
    dirs.push(dir);
    const runDir = createRunDir(join(dir, 'run'), dir);
    const epic = { id: 'bd-e', title: 'E', status: 'open', issue_type: 'epic' } as BeadDetail;
    const bead = (id: string, labels: string[] = []) =>
      ({
        id,
        title: id,
        status: 'open',
        issue_type: 'task',
        labels,
        comments: [],
        created_at: '2026-01-01T00:00:00Z',
        priority: 2,
      }) as unknown as BeadDetail;
    const store = {
      // bd-e.1 failed with no comment: its message comes from the events.
      graph: async () => ({
        epic,
        beads: [bead('bd-e.1', ['ralph:failed']), bead('bd-e.2')],
        outside: [],
        missing: [],
      }),
      ready: async () => [],
    };
    await mkdir(runDir.runsDir, { recursive: true });
    await mkdir(dirname(runDir.lockPath), { recursive: true });
    await writeFile(
      runDir.lockPath,
      JSON.stringify({
        pid: process.pid,
        host: 'here',
        started_at: 'x',
        epic: 'bd-e',
        run_id: 'r',
        bead: 'bd-e.2',
      }),
    );
    const log = runDir.eventLogPath('r');
    const events = (list: Record<string, unknown>[]) => list.map((e) => `${JSON.stringify(e)}\n`).join('');
    await writeFile(
      log,
      events([
        { type: 'run_started', run_id: 'r', ts: '2026-01-01T00:00:00.000Z' },
        { type: 'bead_started', bead: 'bd-e.1', title: 'one', ts: '2026-01-01T00:00:01.000Z' },
        {
          type: 'bead_failed',
          bead: 'bd-e.1',
          message: 'the agent exited 1',
          ts: '2026-01-01T00:00:02.000Z',
        },
        { type: 'bead_started', bead: 'bd-e.2', title: 'two', role: 'doer', ts: '2026-01-01T00:00:03.000Z' },
      ]),
    );
    const ports = {
      store,
      runDir,
      now: () => Date.parse('2026-01-01T00:01:00.000Z'),
      host: 'here',
      isProcessAlive: () => true,
      keepLogDigests: true,
    };
    const kept = join(runDir.root, 'status-runs.json');
    const first = await epicStatus('bd-e', ports);
    expect(first.live).toMatchObject({ bead: 'bd-e.2', title: 'two', role: 'doer' });
    expect(first.failures).toMatchObject([
      { bead: 'bd-e.1', message: 'the agent exited 1', source: 'event' },
    ]);
    const { appendFile, readFile, rm: remove } = await import('node:fs/promises');
    expect(JSON.parse(await readFile(kept, 'utf8'))).toMatchObject({ logs: [{ name: 'r.jsonl' }] });
    await appendFile(
      log,
      events([
        {
          type: 'gate_finished',
          gate: 'test',
          bead: 'bd-e.2',
          ok: true,
          exit: 0,
          ts: '2026-01-01T00:00:04.000Z',
        },
        { type: 'bead_closed', bead: 'bd-e.2', ts: '2026-01-01T00:00:05.000Z' },
        {
          type: 'run_finished',
          run_id: 'r',
          summary: { reason: 'idle', beadsRun: 2 },
          ts: '2026-01-01T00:00:06.000Z',
        },
      ]),
    );
    const second = await epicStatus('bd-e', ports);
    expect(second.live?.bead).toBeNull();
    expect(second.gates).toMatchObject([{ gate: 'test', ok: true }]);
    expect(second.last_run).toMatchObject({ state: 'finished', reason: 'idle', beads_run: 2 });
    await remove(kept);
    expect(await epicStatus('bd-e', ports)).toEqual(second);
    // A status that keeps nothing (a report's) reads the logs whole and writes no digest.
    await remove(kept);
    expect(await epicStatus('bd-e', { ...ports, keepLogDigests: false })).toEqual(second);
    expect(existsSync(kept)).toBe(false);
  });
});
