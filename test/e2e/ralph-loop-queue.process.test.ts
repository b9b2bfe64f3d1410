// ralph-loop --executor queue as a user runs it: a real redis-server, a bare repo as the shared
// remote, two `forge-pack worker` processes with their own caches (two machines), and the fake agent
// writing one file per bead; the result must match a serial run of the same epic.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, BIN, startCli, waitFor } from '../support/cli.js';
import { openAttemptQueueClient } from '../../src/dispatch/queue/bullmq-adapter.js';
import { queueNameOf } from '../../src/dispatch/queue/job-schema.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { makeRepo, type Action, type Repo } from '../support/runner-repo.js';

let redis: RedisServer;
beforeAll(async () => {
  await assertBuilt();
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

const git = async (repo: Repo, ...args: string[]) =>
  (await execa('git', args, { cwd: repo.dir, env: repo.env })).stdout;

/** Four beads, the third waiting for the first; each writes `<id>.txt`. */
async function epicOf(repo: Repo): Promise<{ epic: string; ids: string[] }> {
  const made = await repo.epic(['one', 'two', 'three', 'four']);
  const [first, , third] = made.ids;
  expect((await repo.beads(['dep', 'add', third ?? '', first ?? ''])).exitCode).toBe(0);
  const plan: Record<string, Action[][]> = {};
  for (const id of made.ids)
    plan[id] = [[{ sleepMs: 600 }, { write: { path: `${id}.txt`, content: `${id}\n` } }]];
  await repo.script(plan);
  return made;
}

async function startWorker(repo: Repo): Promise<{ child: ChildProcess; cache: string }> {
  const cache = await mkdtemp(join(tmpdir(), 'forge-qworker-'));
  onTestFinished(() => rm(cache, { recursive: true, force: true }));
  const child = spawn(
    process.execPath,
    [BIN['forge-pack'], 'worker', '--redis', redis.url, '--cache', cache],
    {
      cwd: cache,
      // The fake agents' pids are read from inside: no PID namespace (see vitest.config.ts).
      env: { ...repo.env, NO_COLOR: '1', FORGE_CONTAINMENT: 'off' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (data: Buffer) => {
      if (data.toString().includes(' on redis://')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited ${String(code)}`)));
  });
  return { child, cache };
}

const statuses = async (repo: Repo, ids: string[]) =>
  Promise.all(ids.map(async (id) => (await repo.show(id)).status));
const contents = async (repo: Repo, ids: string[]) =>
  Promise.all(ids.map((id) => readFile(join(repo.dir, `${id}.txt`), 'utf8')));

describe('ralph-loop --executor queue process', () => {
  it('runs an epic on two workers with the same bead states and tree as a serial run', async () => {
    const serial = await makeRepo('embedded');
    const serialEpic = await epicOf(serial);
    const alone = await serial.ralph([serialEpic.epic, '--agent', serial.agent, '--auto-commit']);
    expect(alone.exitCode, alone.stderr).toBe(0);

    const repo = await makeRepo('embedded');
    const remote = `${repo.dir}-remote.git`;
    onTestFinished(() => rm(remote, { recursive: true, force: true }));
    await execa('git', ['init', '-q', '--bare', remote], { env: repo.env });
    await git(repo, 'remote', 'add', 'origin', remote);
    const { epic, ids } = await epicOf(repo);
    const workers = [await startWorker(repo), await startWorker(repo)];
    const run = await repo.ralphProcess(
      [epic, '--agent', repo.agent, '--executor', 'queue', '--redis', redis.url, '--parallel', '2'],
      120_000,
    );
    expect(run.exitCode, run.stderr).toBe(0);

    expect(await statuses(repo, ids)).toEqual(await statuses(serial, serialEpic.ids));
    expect(await statuses(repo, ids)).toEqual(['closed', 'closed', 'closed', 'closed']);
    expect(await contents(repo, ids)).toEqual(ids.map((id) => `${id}\n`));
    const tracked = async (r: Repo) =>
      (await git(r, 'ls-files', '--', '.', ':!.beads', ':!.forge'))
        .split('\n')
        .map((path) => path.replace(/^bd-[a-z0-9]+/, 'bd'));
    expect(await tracked(repo)).toEqual(await tracked(serial));
    // Each bead landed once; the agents ran on the workers (both of them), never in the runner's tree.
    const landed = (await git(repo, 'log', '--format=%(trailers:key=Forge-Bead,valueonly)'))
      .split('\n')
      .filter((line) => line !== '');
    expect(landed.sort()).toEqual([...ids].sort());
    const cwds = (await repo.calls()).map((call) => call.cwd);
    expect(cwds).toHaveLength(4);
    for (const cwd of cwds) expect(workers.some((w) => cwd.startsWith(w.cache))).toBe(true);
    for (const worker of workers) expect(cwds.some((cwd) => cwd.startsWith(worker.cache))).toBe(true);
    expect(await git(repo, 'status', '--porcelain', '--', '.', ':!.beads', ':!.forge')).toBe('');
    expect(await git(repo, 'branch', '--list', 'forge/*')).toBe('');
  }, 180_000);

  it('after kill -9 of the runner with attempts on the workers, a rerun lands each bead once', async () => {
    const repo = await makeRepo('embedded');
    const remote = `${repo.dir}-remote.git`;
    onTestFinished(() => rm(remote, { recursive: true, force: true }));
    await execa('git', ['init', '-q', '--bare', remote], { env: repo.env });
    await git(repo, 'remote', 'add', 'origin', remote);
    const { epic, ids } = await repo.epic(['a', 'b', 'c', 'd']);
    // The first two beads (the ones picked first) would never end their first attempt: only a cancel
    // stops them. Everything else is quick.
    const plan: Record<string, Action[][]> = {};
    for (const [index, id] of ids.entries()) {
      const write: Action = { write: { path: `${id}.txt`, content: `${id}\n` } };
      plan[id] = index < 2 ? [[{ sleepMs: 600_000 }, write], [write]] : [[write]];
    }
    await repo.script(plan);
    await startWorker(repo);
    await startWorker(repo);
    const args = [
      epic,
      '--agent',
      repo.agent,
      '--executor',
      'queue',
      '--redis',
      redis.url,
      '--parallel',
      '2',
    ];
    const first = startCli('ralph-loop', ['--store', 'embedded', ...args], { cwd: repo.dir, env: repo.env });
    try {
      await waitFor(
        async () => ((await repo.calls()).length >= 2 ? true : undefined),
        60_000,
        'two attempts started on the workers',
      );
    } finally {
      first.kill('SIGKILL');
      await first.catch(() => undefined);
    }
    const slow = (await repo.calls()).map((call) => call.pid);
    const rerun = await repo.ralphProcess(args, 120_000);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(rerun.stderr + rerun.stdout).toMatch(/cancelled/);
    // The dead run's agents were stopped on the workers, not left to finish into a branch.
    const alive = slow.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
    expect(await statuses(repo, ids)).toEqual(['closed', 'closed', 'closed', 'closed']);
    expect(await contents(repo, ids)).toEqual(ids.map((id) => `${id}\n`));
    const landed = (await git(repo, 'log', '--format=%(trailers:key=Forge-Bead,valueonly)'))
      .split('\n')
      .filter((line) => line !== '');
    expect(landed.sort()).toEqual([...ids].sort());
    expect(await git(repo, 'status', '--porcelain', '--', '.', ':!.beads', ':!.forge')).toBe('');
  }, 180_000);

  it('a Redis gone while a bead waits: the run stops at the bead’s timeout and its grace (exit 3), naming Redis, the bead open', async () => {
    const own = await startRedis();
    onTestFinished(() => own.stop());
    const repo = await makeRepo('embedded');
    const remote = `${repo.dir}-remote.git`;
    onTestFinished(() => rm(remote, { recursive: true, force: true }));
    await execa('git', ['init', '-q', '--bare', remote], { env: repo.env });
    await git(repo, 'remote', 'add', 'origin', remote);
    const { epic, ids } = await repo.epic(['waits']);
    // No worker: the attempt waits in the queue, and Redis goes away under it (before the timeout, which
    // leaves a loaded machine time to queue it and stop Redis).
    const args = [epic, '--agent', repo.agent, '--executor', 'queue', '--redis', own.url, '--timeout', '5'];
    const run = startCli('ralph-loop', ['--store', 'embedded', ...args], { cwd: repo.dir, env: repo.env });
    const probe = openAttemptQueueClient(own.url);
    try {
      await waitFor(
        async () => ((await probe.unfinished([queueNameOf(repo.agent)])).length > 0 ? true : undefined),
        60_000,
        'the attempt in the queue',
      );
    } finally {
      await probe.close();
    }
    await own.stop();
    // Its wait ends 30 s past the timeout, and the process too: no connection is left retrying.
    const ended = await run;
    expect(ended.exitCode, ended.stderr).toBe(3);
    expect(ended.stderr).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer within 30s/);
    expect(await statuses(repo, ids)).toEqual(['open']);
  }, 150_000);

  it('refuses --executor queue without --redis, and an unknown executor', async () => {
    const repo = await makeRepo('embedded');
    const { epic } = await repo.epic(['one']);
    const none = await repo.ralph([epic, '--agent', repo.agent, '--executor', 'queue']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('--executor queue needs --redis');
    const odd = await repo.ralph([epic, '--agent', repo.agent, '--executor', 'cloud']);
    expect(odd.exitCode).toBe(2);
    expect(odd.stderr).toContain('--executor must be local or queue');
    expect(await repo.calls()).toEqual([]);
  });
});
