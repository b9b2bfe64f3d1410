// How the br adapter copes when br fails: error envelopes, lock contention, usage errors, garbage, a missing br.
import { copyFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BrError, createBrStore, probeBr, rememberingProbe } from '../../src/beads/br/index.js';
import { BeadStoreError } from '../../src/infra/errors.js';
import { makeBrFixture, recordingClock } from '../support/fake-br/br-store-fixture.js';
import { createFakeBrWorkspace } from '../support/fake-br/fake-br-env.js';

async function failure(promise: Promise<unknown>): Promise<BrError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BrError);
  return error as BrError;
}

describe('br error reports', () => {
  it.each([
    ['0.2.19', 'stdout'],
    ['0.1.30', 'stderr'],
  ])(
    'reads the error envelope br %s prints on %s, with its code, message, hint and argv',
    async (version) => {
      const { store } = await makeBrFixture({ version });
      const error = await failure(store.show('bd-nope'));
      expect(error).toBeInstanceOf(BeadStoreError);
      expect(error.code).toBe('ISSUE_NOT_FOUND');
      expect(error.message).toBe('br show failed: Issue not found: bd-nope');
      expect(error.hint).toBe("Run 'br list' to see available issues.");
      expect(error.brExitCode).toBe(3);
      expect(error.argv.slice(-2)).toEqual(['show', 'bd-nope']);
    },
  );

  it.each(['stdout', 'stderr'] as const)('reads an injected envelope on %s', async (stream) => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([
      {
        command: 'list',
        action: 'error',
        code: 'CONFIG_ERROR',
        message: 'bad config.yaml',
        hint: 'fix it',
        stream,
        exitCode: 7,
      },
    ]);
    const error = await failure(store.list());
    expect(error).toMatchObject({
      code: 'CONFIG_ERROR',
      brMessage: 'bad config.yaml',
      hint: 'fix it',
      brExitCode: 7,
    });
  });

  it("reads bd's string error shape", async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([
      {
        command: 'list',
        action: 'error',
        bd: true,
        message: 'no database',
        hint: 'run bd init',
        exitCode: 1,
      },
    ]);
    const error = await failure(store.list());
    expect(error.message).toContain('no database');
    expect(error.hint).toBe('run bd init');
  });

  it('reads JSON after INFO log lines on stdout and stderr', async () => {
    const { store, workspace } = await makeBrFixture();
    const bead = await store.create({ title: 'x' });
    await workspace.setFaults([
      {
        command: 'show',
        action: 'logs',
        stdout: '2026-01-21T21:46:54Z  INFO beads_rust::sync: auto-import skipped\n[INFO] {cache} warm\n',
        stderr: '2026-01-21T21:46:54Z  INFO opening db\n',
      },
    ]);
    expect((await store.show(bead.id)).title).toBe('x');
  });

  it('reports NOTHING_TO_DO (two JSON documents on stdout in 0.2.19) as a failed close, with br reason', async () => {
    const { store, workspace } = await makeBrFixture();
    const bead = await store.create({ title: 'x' });
    await store.close(bead.id, 'done');
    expect(await store.close(bead.id, 'again')).toEqual({ ok: false, reason: 'already closed' });
    const last = (await workspace.calls()).at(-1)!;
    expect(last.command).toBe('close');
  });

  it('does not report a blocked bead closed', async () => {
    const { store } = await makeBrFixture({ version: '0.1.30' });
    const blocker = await store.create({ title: 'blocker' });
    const blocked = await store.create({ title: 'blocked', dependsOn: [blocker.id] });
    expect(await store.close(blocked.id, 'done')).toEqual({ ok: false, reason: `blocked by: ${blocker.id}` });
  });
});

describe('claim races', () => {
  it('reports a bead claimed by another actor as lost (br exit 4)', async () => {
    const { store, workspace, clock } = await makeBrFixture();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const bead = await store.create({ title: 'x', parent: epic.id });
    await store.ready(epic.id);
    const rival = createBrStore({ cwd: workspace.root, env: workspace.env, clock, actor: 'rival' });
    expect((await rival.claim(bead.id)).ok).toBe(true);
    const claim = await store.claim(bead.id);
    expect(claim).toEqual({
      ok: false,
      reason: expect.stringContaining("already assigned to 'rival'") as string,
    });
  });

  it('reports a same-actor claim br lets through with a warning (0.2.19) as lost', async () => {
    const { store, workspace, clock } = await makeBrFixture();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const bead = await store.create({ title: 'x', parent: epic.id });
    await store.ready(epic.id);
    const twin = createBrStore({ cwd: workspace.root, env: workspace.env, clock });
    expect((await twin.claim(bead.id)).ok).toBe(true);
    expect((await store.claim(bead.id)).ok).toBe(false);
  });

  it('refuses to claim a blocked bead', async () => {
    const { store } = await makeBrFixture();
    const blocker = await store.create({ title: 'blocker' });
    const blocked = await store.create({ title: 'blocked', dependsOn: [blocker.id] });
    expect(await store.claim(blocked.id)).toEqual({
      ok: false,
      reason: expect.stringContaining(`cannot claim blocked issue: ${blocker.id}`) as string,
    });
  });
});

describe('lock contention', () => {
  it.each(['locked', 'busy'] as const)('retries %s with backoff, then succeeds', async (action) => {
    const { store, workspace, clock } = await makeBrFixture();
    await workspace.setFaults([{ command: 'create', action, times: 2 }]);
    const bead = await store.create({ title: 'after the lock' });
    expect((await store.show(bead.id)).title).toBe('after the lock');
    expect((await workspace.calls()).filter((c) => c.command === 'create')).toHaveLength(3);
    expect(clock.sleeps).toEqual([250, 500]);
  });

  it('gives up after a bounded number of attempts with a clear error', async () => {
    const { store, workspace, clock } = await makeBrFixture();
    await workspace.setFaults([{ command: 'create', action: 'locked' }]);
    const error = await failure(store.create({ title: 'never' }));
    expect(error.code).toBe('DATABASE_LOCKED');
    expect(error.message).toMatch(/^br create failed: Database is locked: .* \(gave up after 5 attempts\)$/);
    expect((await workspace.calls()).filter((c) => c.command === 'create')).toHaveLength(5);
    expect(clock.sleeps).toEqual([250, 500, 1000, 2000]);
  });

  it('does not retry other errors', async () => {
    const { store, workspace } = await makeBrFixture();
    await failure(store.show('bd-nope'));
    expect((await workspace.calls()).filter((c) => c.command === 'show')).toHaveLength(1);
  });
});

describe('broken br', () => {
  it('says br is missing and what to do about it', async () => {
    const workspace = await createFakeBrWorkspace({ withoutBr: true });
    try {
      const store = createBrStore({ cwd: workspace.root, env: workspace.env, clock: recordingClock() });
      const error = await failure(store.init());
      expect(error.code).toBe('BR_NOT_FOUND');
      expect(error.message).toContain('not found on the PATH');
      expect(error.hint).toContain('--store embedded');
      expect(await probeBr({ env: workspace.env, cwd: workspace.root })).toBeUndefined();
    } finally {
      await workspace.cleanup();
    }
  });

  it('finds br on the PATH it is given and reads its version', async () => {
    const workspace = await createFakeBrWorkspace({ version: '0.1.30' });
    try {
      const probe = await probeBr({ env: workspace.env, cwd: workspace.root });
      expect(probe).toEqual({ path: join(workspace.env.PATH!.split(':')[0]!, 'br'), version: '0.1.30' });
    } finally {
      await workspace.cleanup();
    }
  });

  it('asks one br its version once per command, and again when the file at its path is another', async () => {
    const workspace = await createFakeBrWorkspace({ version: '0.2.19' });
    try {
      const versionCalls = async () =>
        (await workspace.calls()).filter((c) => c.command === 'version').length;
      const remembering = rememberingProbe();
      const probe = () => remembering({ env: workspace.env, cwd: workspace.root });
      const first = await probe();
      expect(await probe()).toEqual(first);
      expect(await versionCalls()).toBe(1);
      // br replaced at the same path (an upgrade): a new file, asked again.
      const path = first!.path;
      await copyFile(path, `${path}.new`);
      await rename(`${path}.new`, path);
      expect(await probe()).toEqual(first);
      expect(await versionCalls()).toBe(2);
      // Each command has its own memory (probeBr alone remembers nothing).
      await probeBr({ env: workspace.env, cwd: workspace.root });
      expect(await versionCalls()).toBe(3);
    } finally {
      await workspace.cleanup();
    }
  });

  it('reports a clap usage error (exit 2, plain text) with its first line', async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([
      {
        command: 'list',
        action: 'usage',
        stderr: "error: unexpected argument '--limit' found\n\nUsage: br list\n",
      },
    ]);
    const error = await failure(store.list());
    expect(error.code).toBe('BR_USAGE');
    expect(error.message).toBe(
      `br list was rejected by br as a usage error: error: unexpected argument '--limit' found`,
    );
  });

  it('does not mistake a plain-text failure with exit 2 for a usage error', async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([
      { command: 'list', action: 'raw', stderr: 'Error: database disk image is malformed\n', exitCode: 2 },
    ]);
    const error = await failure(store.list());
    expect(error.code).toBe('BR_FAILED');
    expect(error.message).toBe('br list exited with code 2: Error: database disk image is malformed');
  });

  it('falls back to the oldest protocol when `br version --json` is not understood', async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([{ command: 'version', action: 'usage' }]);
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const child = await store.create({ title: 'child', parent: epic.id });
    expect((await store.ready(epic.id)).map((b) => b.id)).toEqual([child.id]);
    const ready = (await workspace.calls()).find((c) => c.command === 'ready')!;
    expect(ready.argv.slice(4)).toEqual(['ready', '--limit', '0']);
  });

  it('quotes garbage output rather than failing on a JSON parse error', async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([{ command: 'list', action: 'garbage' }]);
    const error = await failure(store.list());
    expect(error.code).toBe('BR_BAD_OUTPUT');
    expect(error.message).toContain('"<html><body>502 Bad Gateway</body></html>"');
  });

  it('quotes the output of a br that fails without an envelope', async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([
      { command: 'list', action: 'raw', stderr: 'thread main panicked at src/x.rs\n', exitCode: 101 },
    ]);
    const error = await failure(store.list());
    expect(error).toMatchObject({ code: 'BR_FAILED', brExitCode: 101 });
    expect(error.message).toBe('br list exited with code 101: thread main panicked at src/x.rs');
  });

  it('names the field when br prints JSON of the wrong shape', async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([{ command: 'list', action: 'raw', stdout: '[{"id": 7}]\n' }]);
    const error = await failure(store.list());
    expect(error.code).toBe('BR_BAD_OUTPUT');
    expect(error.message).toContain('JSON of an unexpected shape ([0].id:');
  });

  it('stops a br that hangs', async () => {
    const { store, workspace } = await makeBrFixture({ store: { timeoutMs: 1500 } });
    await workspace.setFaults([{ command: 'list', action: 'hang' }]);
    const error = await failure(store.list());
    expect(error.code).toBe('BR_TIMEOUT');
  });

  it('stops a br whose output has no end, and says why', async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([{ command: 'list', action: 'flood' }]);
    const error = await failure(store.list());
    expect(error.code).toBe('BR_OUTPUT');
    expect(error.message).toMatch(
      /^br list failed: its stdout passed \d+ MiB, more than the [\d,]+ characters kept of it/,
    );
  });

  it('fails a flush whose report lists errors', async () => {
    const { store, workspace } = await makeBrFixture();
    await workspace.setFaults([
      { command: 'sync', action: 'raw', stdout: '{"exported": 3, "errors": ["bd-1: bad utf-8"]}\n' },
    ]);
    const error = await failure(store.flush());
    expect(error.code).toBe('SYNC_FAILED');
    expect(error.brMessage).toContain('bd-1: bad utf-8');
  });

  it('treats "already initialised" as success and other init failures as errors', async () => {
    const { store, workspace } = await makeBrFixture();
    await expect(store.init()).resolves.toBeUndefined();
    await workspace.setFaults([
      { command: 'init', action: 'error', code: 'CONFIG_ERROR', message: 'bad prefix', exitCode: 7 },
    ]);
    expect((await failure(store.init())).code).toBe('CONFIG_ERROR');
  });
});
