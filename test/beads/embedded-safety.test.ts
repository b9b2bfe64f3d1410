// The embedded store under damage and contention: corrupt lines, stale and live locks, racing processes.
import { spawn } from 'node:child_process';
import { lstat, readFile, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import { breakStaleLock, observeLock } from '../../src/beads/embedded/lock.js';
import type { BeadStore } from '../../src/beads/types.js';
import { BeadStoreError } from '../../src/infra/errors.js';
import { pidNamespace } from '../../src/infra/pid.js';
import { withStopSignal } from '../../src/infra/stop-scope.js';
import { parseBrJsonl } from '../support/embedded/br-issue-line.js';
import { issuesPath, readIssues, tempWorkspace } from '../support/embedded/workspace.js';
import { deadPid } from '../support/pids.js';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const CREATE_MANY = join(REPO_ROOT, 'test/support/embedded/create-many.ts');
const HOLD_LOCK = join(REPO_ROOT, 'test/support/embedded/hold-store-lock.ts');

async function errorOf(promise: Promise<unknown>): Promise<BeadStoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BeadStoreError);
  return error as BeadStoreError;
}

function lockPath(cwd: string): string {
  return join(cwd, '.beads', 'forge-embedded.lock');
}

async function fileExists(path: string): Promise<boolean> {
  return readFile(path).then(
    () => true,
    () => false,
  );
}

/** Every operation of the store, each as a thunk, with ids that exist in the intact file. */
function everyOperation(
  store: BeadStore,
  epic: string,
  child: string,
): Array<[string, () => Promise<unknown>]> {
  return [
    ['init', () => store.init()],
    ['create', () => store.create({ title: 'new' })],
    ['ready', () => store.ready(epic)],
    ['show', () => store.show(child)],
    ['list', () => store.list({ all: true })],
    ['children', () => store.children(epic, { recursive: true })],
    ['claim', () => store.claim(child)],
    ['reopen', () => store.reopen(child, 'why')],
    ['close', () => store.close(child, 'done')],
    ['addDependency', () => store.addDependency(child, epic, 'related')],
    ['addLabel', () => store.addLabel(child, 'x')],
    ['removeLabel', () => store.removeLabel(child, 'x')],
    ['comment', () => store.comment(child, 'hello')],
    ['flush', () => store.flush()],
  ];
}

describe('embedded store: a corrupt issues.jsonl', () => {
  async function storeWithLines() {
    const cwd = await tempWorkspace();
    const store = createEmbeddedStore({ cwd });
    await store.init();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const child = await store.create({ title: 'child', parent: epic.id });
    await store.create({ title: 'other' });
    return { cwd, store, epic: epic.id, child: child.id };
  }

  it('fails every operation naming file and line, and leaves the file byte for byte as it was', async () => {
    const { cwd, store, epic, child } = await storeWithLines();
    const lines = (await readIssues(cwd)).split('\n');
    lines.splice(1, 0, '{"id":"bd-torn","title":"half a li');
    const damaged = lines.join('\n');
    await writeFile(issuesPath(cwd), damaged);

    for (const [name, operation] of everyOperation(store, epic, child)) {
      const error = await errorOf(operation());
      expect(error.code, name).toBe('JSONL_PARSE_ERROR');
      expect(error.message, name).toContain(`${issuesPath(cwd)}:2:`);
      expect(error.hint, name).toMatch(/line 2 of .*issues\.jsonl/);
    }
    expect(await readIssues(cwd)).toBe(damaged);
    expect(await fileExists(lockPath(cwd))).toBe(false);
  });

  it('names the field of a line that is JSON but not an issue', async () => {
    const { cwd, store } = await storeWithLines();
    const lines = (await readIssues(cwd)).split('\n');
    const third = JSON.parse(lines[2]!) as Record<string, unknown>;
    lines[2] = JSON.stringify({ ...third, priority: 'high' });
    await writeFile(issuesPath(cwd), lines.join('\n'));
    const error = await errorOf(store.list());
    expect(error.message).toContain(`${issuesPath(cwd)}:3: not a valid issue line: priority:`);
  });

  it('recognises a git merge conflict and says so', async () => {
    const { cwd, store } = await storeWithLines();
    const content = await readIssues(cwd);
    await writeFile(issuesPath(cwd), `<<<<<<< HEAD\n${content}=======\n>>>>>>> theirs\n`);
    const error = await errorOf(store.list());
    expect(error.message).toContain(':1:');
    expect(error.hint).toContain('merge conflict');
  });
});

describe('embedded store: the lock file', () => {
  async function initialised() {
    const cwd = await tempWorkspace();
    const takeovers: string[] = [];
    const store = createEmbeddedStore({ cwd, lock: { waitMs: 2_000, onTakeover: (m) => takeovers.push(m) } });
    await store.init();
    return { cwd, store, takeovers };
  }

  it('takes over a lock whose holder process is dead', async () => {
    const { cwd, store, takeovers } = await initialised();
    const pid = deadPid();
    await writeFile(
      lockPath(cwd),
      JSON.stringify({ pid, host: hostname(), started_at: new Date().toISOString(), token: 'old' }),
    );
    const bead = await store.create({ title: 'after the crash' });
    expect((await store.show(bead.id)).title).toBe('after the crash');
    expect(takeovers).toEqual([expect.stringContaining(`pid ${pid} is not running`)]);
    expect(await fileExists(lockPath(cwd))).toBe(false);
  });

  // An agent's `forge-pack beads …` runs in the agent's PID namespace (containment): its pid names
  // some other process outside, or none, and was taken for a dead holder's while the agent wrote.
  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'waits for a live holder in another PID namespace rather than taking its lock over',
    async () => {
      const { cwd, store, takeovers } = await initialised();
      const holder = spawn(
        'unshare',
        ['--pid', '--fork', '--mount-proc', process.execPath, '--import', 'tsx', HOLD_LOCK, lockPath(cwd)],
        { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
      );
      const ended = new Promise((resolve) => holder.once('exit', resolve));
      try {
        const lines = createInterface({ input: holder.stdout });
        await new Promise<void>((resolve, reject) => {
          lines.once('line', (line) => (line === 'held' ? resolve() : reject(new Error(line))));
          holder.once('exit', (code) => reject(new Error(`the holder exited (${String(code)})`)));
        });
        const seen = await observeLock(lockPath(cwd));
        expect(seen?.holder?.pid_ns).toMatch(/^pid:\[\d+\]$/);
        expect(seen?.holder?.pid_ns).not.toBe(pidNamespace());
        const error = await store.create({ title: 'while the agent writes' }).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(BeadStoreError);
        expect((error as BeadStoreError).code).toBe('DATABASE_LOCKED');
        expect(takeovers).toEqual([]);
      } finally {
        holder.stdin?.end();
        await ended;
      }
      // Let go, the lock is the runner's again.
      const bead = await store.create({ title: 'after the agent' });
      expect((await store.show(bead.id)).title).toBe('after the agent');
    },
  );

  it('takes over a lock abandoned long ago on another host, or left unreadable', async () => {
    const { cwd, store, takeovers } = await initialised();
    const old = new Date(Date.now() - 10 * 60_000);
    await writeFile(
      lockPath(cwd),
      JSON.stringify({ pid: 1, host: 'elsewhere.example', started_at: old.toISOString(), token: 'x' }),
    );
    await utimes(lockPath(cwd), old, old);
    await store.create({ title: 'a' });
    await writeFile(lockPath(cwd), '');
    await utimes(lockPath(cwd), old, old);
    await store.create({ title: 'b' });
    expect(takeovers).toEqual([
      expect.stringContaining('elsewhere.example'),
      expect.stringContaining('unreadable'),
    ]);
    expect((await store.list()).map((b) => b.title).sort()).toEqual(['a', 'b']);
  });

  // Without a deadline on every path these spun for ever; the test timeout stands in for "for ever".
  const HANG = { timeout: 30_000 };

  it("takes over a dead holder's lock past a takeover guard an agent dated years ahead", HANG, async () => {
    const { cwd, store, takeovers } = await initialised();
    const pid = deadPid();
    await writeFile(
      lockPath(cwd),
      JSON.stringify({ pid, host: hostname(), started_at: new Date().toISOString(), token: 'old' }),
    );
    const guard = `${lockPath(cwd)}.takeover`;
    await writeFile(guard, 'x\n');
    const future = new Date(Date.now() + 10 * 365 * 24 * 3600_000);
    await utimes(guard, future, future);
    const bead = await store.create({ title: 'after the plant' });
    expect((await store.show(bead.id)).title).toBe('after the plant');
    expect(takeovers).toEqual([expect.stringContaining(`pid ${pid} is not running`)]);
    expect(await fileExists(guard)).toBe(false);
  });

  it('takes over an unreadable lock dated in the future', HANG, async () => {
    const { cwd, store, takeovers } = await initialised();
    await writeFile(lockPath(cwd), 'garbage');
    const future = new Date(Date.now() + 10 * 365 * 24 * 3600_000);
    await utimes(lockPath(cwd), future, future);
    await store.create({ title: 'a' });
    expect(takeovers).toEqual([expect.stringContaining('unreadable')]);
  });

  it(
    'gives up by the deadline, naming lock and guard, when a stale lock cannot be taken over',
    HANG,
    async () => {
      const cwd = await tempWorkspace();
      const store = createEmbeddedStore({ cwd, lock: { waitMs: 100 } });
      await store.init();
      const dead = JSON.stringify({ pid: deadPid(), host: hostname(), started_at: '', token: 'old' });
      await writeFile(lockPath(cwd), dead);
      // A fresh guard: another waiter's, as far as anyone can tell, so it is left alone for now.
      const guard = `${lockPath(cwd)}.takeover`;
      await writeFile(guard, '1\n');
      const error = await errorOf(store.create({ title: 'x' }));
      expect(error.code).toBe('DATABASE_LOCKED');
      expect(error.message).toContain(lockPath(cwd));
      expect(error.hint).toContain(guard);
      expect(await readFile(lockPath(cwd), 'utf8')).toBe(dead);
      expect(await readIssues(cwd)).toBe('');
    },
  );

  it(
    'stops waiting soon after the work around it is asked to stop, however long its wait',
    HANG,
    async () => {
      const cwd = await tempWorkspace();
      const store = createEmbeddedStore({ cwd, lock: { waitMs: 10 * 60_000 } });
      await store.init();
      await writeFile(
        lockPath(cwd),
        JSON.stringify({ pid: deadPid(), host: hostname(), started_at: '', token: 'old' }),
      );
      await writeFile(`${lockPath(cwd)}.takeover`, '1\n');
      const stop = new AbortController();
      const write = withStopSignal(stop.signal, () => store.create({ title: 'x' }));
      stop.abort();
      const error = await errorOf(write);
      expect(error.code).toBe('DATABASE_LOCKED');
      expect(await readIssues(cwd)).toBe('');
    },
  );

  it('gives up by the deadline on a lock path that refuses creation yet cannot be read', HANG, async () => {
    const cwd = await tempWorkspace();
    const store = createEmbeddedStore({ cwd, lock: { waitMs: 100 } });
    await store.init();
    await symlink(join(cwd, 'nowhere'), lockPath(cwd));
    const error = await errorOf(store.create({ title: 'x' }));
    expect(error.code).toBe('DATABASE_LOCKED');
    expect(error.hint).toContain(lockPath(cwd));
    expect(await readIssues(cwd)).toBe('');
  });

  it('waits for a live holder, then gives up with DATABASE_LOCKED naming it, taking nothing over', async () => {
    const cwd = await tempWorkspace();
    const store = createEmbeddedStore({ cwd, lock: { waitMs: 100 } });
    await store.init();
    const held = JSON.stringify({
      pid: process.pid,
      host: hostname(),
      started_at: new Date().toISOString(),
      token: 'live',
    });
    await writeFile(lockPath(cwd), held);
    const error = await errorOf(store.create({ title: 'x' }));
    expect(error.code).toBe('DATABASE_LOCKED');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(`pid ${process.pid}`);
    expect(await readFile(lockPath(cwd), 'utf8')).toBe(held);
    expect(await readIssues(cwd)).toBe('');
  });

  it('removes a stale lock only while it is still the one judged stale', async () => {
    const { cwd } = await initialised();
    const stale = JSON.stringify({
      pid: deadPid(),
      host: hostname(),
      started_at: new Date().toISOString(),
      token: 'old',
    });
    await writeFile(lockPath(cwd), stale);
    const seen = await observeLock(lockPath(cwd));
    // Meanwhile another waiter took it over and now holds a fresh lock of its own.
    const fresh = JSON.stringify({
      pid: process.pid,
      host: hostname(),
      started_at: new Date().toISOString(),
      token: 'new',
    });
    await writeFile(`${lockPath(cwd)}.new`, fresh);
    await rename(`${lockPath(cwd)}.new`, lockPath(cwd));
    expect(await breakStaleLock(lockPath(cwd), seen!)).toBe(false);
    expect(await readFile(lockPath(cwd), 'utf8')).toBe(fresh);
    expect(await breakStaleLock(lockPath(cwd), (await observeLock(lockPath(cwd)))!)).toBe(true);
    expect(await fileExists(lockPath(cwd))).toBe(false);
  });

  it('lets many writers race past one stale lock without losing a write', async () => {
    const cwd = await tempWorkspace();
    await createEmbeddedStore({ cwd }).init();
    const pid = deadPid();
    await writeFile(
      lockPath(cwd),
      JSON.stringify({ pid, host: hostname(), started_at: new Date().toISOString(), token: 'old' }),
    );
    // Separate store instances share no in-process queue: they meet only at the lock file.
    const writers = Array.from({ length: 6 }, () => createEmbeddedStore({ cwd, lock: { waitMs: 10_000 } }));
    await Promise.all(
      writers.map(async (store, w) => {
        for (let i = 0; i < 10; i += 1) await store.create({ title: `w${w}-${i}` });
      }),
    );
    const lines = parseBrJsonl(await readIssues(cwd));
    expect(new Set(lines.map((l) => l.title)).size).toBe(60);
  });
});

describe('embedded store: several processes at once', () => {
  it('keeps every bead when two processes each create 100 at the same moment', async () => {
    const cwd = await tempWorkspace();
    const store = createEmbeddedStore({ cwd });
    await store.init();
    const epic = await store.create({ title: 'Epic', type: 'epic' });

    const children = ['alpha', 'beta'].map((tag) =>
      spawn(process.execPath, ['--import', 'tsx', CREATE_MANY, cwd, '100', tag, epic.id], {
        cwd: REPO_ROOT,
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    const outcomes = children.map(
      (child) =>
        new Promise<{ code: number | null; stderr: string }>((done) => {
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('close', (code) => done({ code, stderr }));
        }),
    );
    // Start them together: each loads, says ready, and waits for the go.
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((ready, failed) => {
            const lines = createInterface({ input: child.stdout });
            lines.once('line', (text) => (text === 'ready' ? ready() : failed(new Error(text))));
            child.once('close', () => failed(new Error('helper exited before it was ready')));
          }),
      ),
    );
    for (const child of children) child.stdin.end('go\n');
    for (const outcome of await Promise.all(outcomes)) expect(outcome).toEqual({ code: 0, stderr: '' });

    const lines = parseBrJsonl(await readIssues(cwd));
    const created = lines.filter((l) => l.id !== epic.id);
    expect(created).toHaveLength(200);
    expect(new Set(created.map((l) => l.id)).size).toBe(200);
    expect(new Set(created.map((l) => l.title)).size).toBe(200);
    const childIds = created
      .filter((l) => l.dependencies?.some((d) => d.type === 'parent-child'))
      .map((l) => l.id);
    expect(childIds.sort()).toEqual(Array.from({ length: 100 }, (_, i) => `${epic.id}.${i + 1}`).sort());
    expect(await fileExists(lockPath(cwd))).toBe(false);
  });
});

describe('embedded store: deleted under a process that uses it', () => {
  it('is written back as that process last read it, with its next change, and says so', async () => {
    const cwd = await tempWorkspace();
    const restored: string[] = [];
    const store = createEmbeddedStore({ cwd, onRestored: (path) => restored.push(path) });
    await store.init();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const child = await store.create({ title: 'child', parent: epic.id });
    await store.claim(child.id);
    // What an agent's `git clean -fdx` does to an ignored .beads/ mid-run.
    await rm(join(cwd, '.beads'), { recursive: true, force: true });

    await store.close(child.id, 'done');
    expect(restored).toEqual([issuesPath(cwd)]);
    const again = createEmbeddedStore({ cwd });
    expect((await again.show(child.id)).status).toBe('closed');
    expect((await again.show(epic.id)).title).toBe('Epic');
  });

  it.each([
    ['emptied in place', async (path: string) => writeFile(path, '')],
    [
      'swapped for a link to an empty file',
      async (path: string) => {
        await writeFile(`${path}.empty`, '');
        await rm(path);
        await symlink(`${path}.empty`, path);
      },
    ],
    [
      'cut to one of its lines',
      async (path: string) => {
        const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');
        await writeFile(`${path}.cut`, `${lines[0]}\n`);
        await rename(`${path}.cut`, path);
      },
    ],
  ])('%s: the beads it lost are written back, with its next change, and it says so', async (_, damage) => {
    const cwd = await tempWorkspace();
    const restored: [string, number | undefined][] = [];
    const store = createEmbeddedStore({ cwd, onRestored: (path, lost) => restored.push([path, lost]) });
    await store.init();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const child = await store.create({ title: 'child', parent: epic.id });
    await store.create({ title: 'sibling', parent: epic.id });
    await store.claim(child.id);
    // What an agent's `: > .beads/issues.jsonl` or `ln -sf empty .beads/issues.jsonl` does mid-run.
    await damage(issuesPath(cwd));

    await store.close(child.id, 'done');
    expect(restored).toHaveLength(1);
    expect(restored[0]?.[0]).toBe(issuesPath(cwd));
    expect(restored[0]?.[1]).toBeGreaterThanOrEqual(2);
    const again = createEmbeddedStore({ cwd });
    expect((await again.show(child.id)).status).toBe('closed');
    expect((await again.show(epic.id)).title).toBe('Epic');
    expect((await again.list({ all: true })).map((b) => b.title).sort()).toEqual([
      'Epic',
      'child',
      'sibling',
    ]);
    // A regular file again, not the link: what a link pointed at is not written through.
    expect((await lstat(issuesPath(cwd))).isFile()).toBe(true);
  });

  it('a store this process never read is not made up: no store, as before', async () => {
    const cwd = await tempWorkspace();
    await createEmbeddedStore({ cwd }).init();
    await rm(join(cwd, '.beads'), { recursive: true, force: true });
    const fresh = createEmbeddedStore({ cwd, onRestored: () => expect.fail('nothing to restore') });
    expect((await errorOf(fresh.list({ all: true }))).code).toBe('NOT_INITIALIZED');
  });
});
