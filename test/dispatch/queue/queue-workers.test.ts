// The queue executor end to end: a real redis-server, a bare git repo as the shared remote, and two
// `forge-pack worker` processes with their own caches as stand-ins for two machines.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Bead } from '../../../src/beads/types.js';
import {
  connectionOf,
  type AttemptQueueClient,
  openAttemptQueueClient,
  reachRedis,
} from '../../../src/dispatch/queue/bullmq-adapter.js';
import { EnvironmentError, UsageError } from '../../../src/infra/errors.js';
import { queueNameOf } from '../../../src/dispatch/queue/job-schema.js';
import { createQueueDispatcher } from '../../../src/dispatch/queue/queue-dispatcher.js';
import {
  attemptBranchOf,
  attemptIdOf,
  type AttemptDispatcher,
  type AttemptJob,
} from '../../../src/loop/attempt-dispatch.js';
import { assertBuilt, BIN, runCli } from '../../support/cli.js';
import { createTempRepo, type TempRepo } from '../../support/git-repo.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';

const AGENT = fileURLToPath(new URL('./queue-agent.mjs', import.meta.url));

let redis: RedisServer;
let marks: string;
const children: ChildProcess[] = [];
const dispatchers: AttemptDispatcher[] = [];
/** The workers' cache directories (each holds clones of the repository), removed once they are gone. */
const caches: string[] = [];

beforeAll(async () => {
  await assertBuilt();
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.close();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  // Agents a SIGKILLed worker left behind.
  for (const file of await readdir(marks).catch(() => [])) {
    for (const line of (await readFile(join(marks, file), 'utf8')).split('\n')) {
      const pid = Number(line.split(' ')[0]);
      if (pid > 0) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    }
  }
  await rm(marks, { recursive: true, force: true });
  for (const cache of caches.splice(0)) await rm(cache, { recursive: true, force: true, maxRetries: 3 });
});

interface WorkerProcess {
  child: ChildProcess;
  cache: string;
  output: () => string;
  /** Resolves once the worker has printed its ready line. */
  ready: Promise<void>;
}

async function startWorker(
  repo: TempRepo,
  extra: string[] = [],
  reuse?: string,
  url = redis.url,
): Promise<WorkerProcess> {
  const cache = reuse ?? (await mkdtemp(join(tmpdir(), 'forge-worker-')));
  if (reuse === undefined) caches.push(cache);
  let output = '';
  // A killed worker's job waits out this lock before another takes it. A live worker renews its lock
  // every half of it: under the full suite's load, 1.5 s once let a survivor's renewal slip, and its
  // job counted a second stall ("job stalled more than allowable limit").
  const child = spawn(
    process.execPath,
    [BIN['forge-pack'], 'worker', '--redis', url, '--cache', cache, '--lock-ms', '3000', ...extra],
    {
      cwd: cache,
      env: {
        ...repo.env,
        HOME: cache,
        NO_COLOR: '1',
        QUEUE_AGENT_DIR: marks,
        // The agents' pids are read from inside: no PID namespace (see vitest.config.ts).
        FORGE_CONTAINMENT: 'off',
        GIT_AUTHOR_NAME: 'Worker',
        GIT_AUTHOR_EMAIL: 'worker@example.test',
        GIT_COMMITTER_NAME: 'Worker',
        GIT_COMMITTER_EMAIL: 'worker@example.test',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (data: Buffer) => {
      output += data.toString();
      if (output.includes(' on redis://')) resolve();
    });
    child.stderr?.on('data', (data: Buffer) => {
      output += data.toString();
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${String(code)}): ${output}`)));
  });
  ready.catch(() => undefined);
  return { child, cache, output: () => output, ready };
}

function bead(id: string): Bead {
  return {
    id,
    title: `write ${id}`,
    status: 'in_progress',
    priority: 2,
    issue_type: 'task',
    labels: [],
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  };
}

function job(base: string, beadId: string, runId = 'run1'): AttemptJob {
  return {
    attemptId: attemptIdOf(runId, beadId, 1),
    epicId: 'ep-q',
    bead: bead(beadId),
    role: 'agent',
    agentSpec: `${process.execPath} ${AGENT}`,
    agentFromLabel: false,
    attempt: 1,
    timeoutMs: 120_000,
    base,
    branch: attemptBranchOf('ep-q', beadId, 1),
  };
}

const hooks = (signal = new AbortController().signal) => ({ signal, transcriptPath: '/dev/null' });

/** The runner's repo with a bare remote as origin, and a queue dispatcher on it (run from `cwd` in it). */
async function setup(
  cwd = '',
  commands: Record<string, string[]> = {},
): Promise<{ repo: TempRepo; dispatcher: () => AttemptDispatcher }> {
  marks = await mkdtemp(join(tmpdir(), 'forge-marks-'));
  const repo = await createTempRepo({ 'README.md': 'hello\n' });
  const remote = join(repo.dir, '..', `${repo.dir.split('/').pop() ?? 'x'}-remote.git`);
  onTestFinished(() => rm(remote, { recursive: true, force: true }));
  repo.run('init', '-q', '--bare', remote);
  repo.run('remote', 'add', 'origin', remote);
  repo.run('push', '-q', 'origin', 'main');
  const dispatcher = (): AttemptDispatcher => {
    const made = createQueueDispatcher({
      repo: join(repo.dir, cwd),
      env: repo.env,
      redisUrl: redis.url,
      capacity: 2,
      commands,
    });
    dispatchers.push(made);
    return made;
  };
  return { repo, dispatcher };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const starts = async (beadId: string): Promise<string[]> =>
  (await readFile(join(marks, `${beadId}.starts`), 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the hand-over to the queue', () => {
  it('a repository with no remote is the set-up’s fault (environment), not the bead’s', async () => {
    marks = await mkdtemp(join(tmpdir(), 'forge-marks-'));
    const repo = await createTempRepo({ 'README.md': 'hello\n' });
    const queue = createQueueDispatcher({
      repo: repo.dir,
      env: repo.env,
      redisUrl: redis.url,
      capacity: 1,
      commands: {},
    });
    dispatchers.push(queue);
    const result = await queue.run(job(repo.head(), 'bd-q.1'), hooks());
    expect(result).toMatchObject({ outcome: 'error', environment: true });
    expect(result.message).toContain('could not hand the attempt to the queue');
  });

  it('a Redis that is not there is said at once (exit 3), by the runner’s probe and by a worker', async () => {
    marks = await mkdtemp(join(tmpdir(), 'forge-marks-'));
    await expect(reachRedis(redis.url)).resolves.toBeUndefined();
    // A port no Redis listens on: the probe fails fast rather than retrying forever.
    const nowhere = 'redis://127.0.0.1:1';
    await expect(reachRedis(nowhere)).rejects.toThrow(/Cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    await expect(reachRedis(nowhere)).rejects.toBeInstanceOf(EnvironmentError);
    const worker = await runCli('forge-pack', ['worker', '--redis', nowhere], {
      cwd: marks,
      timeoutMs: 30_000,
    });
    expect(worker.exitCode, worker.stderr).toBe(3);
    expect(worker.stderr).toContain('Cannot reach Redis');
    expect(worker.stderr).not.toContain('Unhandled error event');
  });

  it('with no worker up, the bead’s timeout still holds: the job is taken back and the attempt times out', async () => {
    const { repo, dispatcher } = await setup();
    const queue = dispatcher();
    const result = await queue.run({ ...job(repo.head(), 'bd-q.9'), timeoutMs: 1_500 }, hooks());
    expect(result).toMatchObject({ outcome: 'timeout', message: 'no worker took it within 2s' });
  });

  it('a Redis gone while an attempt waits stops the run at the attempt’s timeout (exit 3), naming Redis; the dispatcher closes', async () => {
    const own = await startRedis();
    onTestFinished(() => own.stop());
    const { repo } = await setup();
    const queue = createQueueDispatcher({
      repo: repo.dir,
      env: repo.env,
      redisUrl: own.url,
      capacity: 1,
      redisAnswerMs: 1_000,
    });
    const probe = openAttemptQueueClient(own.url);
    // Long enough that both jobs are queued and Redis is stopped before it runs out, on a loaded machine.
    const waiting = { ...job(repo.head(), 'bd-q.8'), timeoutMs: 5_000 };
    const running = queue.run(waiting, hooks());
    const stop = new AbortController();
    const stopped = queue.run({ ...job(repo.head(), 'bd-q.6'), timeoutMs: 600_000 }, hooks(stop.signal));
    await waitFor('both jobs in the queue', async () =>
      (await probe.unfinished([queueNameOf(waiting.agentSpec)])).length === 2 ? true : undefined,
    );
    await probe.close();
    await own.stop();
    const result = await running;
    expect(result).toMatchObject({ outcome: 'error', environment: true });
    expect(result.message).toContain(
      `Redis at ${own.url} did not answer within 1s when the attempt's 5s were up`,
    );
    // Stopped (Ctrl-C) while Redis is gone: the stop is not left waiting for Redis either.
    stop.abort();
    const ended = await stopped;
    expect(ended).toMatchObject({ outcome: 'error', environment: true });
    expect(ended.message).toContain('did not answer within 1s when the run stopped');
    // Handed a bead while Redis is still gone: the hand-over gives up the same way.
    const next = await queue.run({ ...job(repo.head(), 'bd-q.7'), timeoutMs: 60_000 }, hooks());
    expect(next).toMatchObject({ outcome: 'error', environment: true });
    expect(next.message).toContain('did not answer within 1s when handed the attempt');
    await queue.close();
  });

  it('a Redis call that fails, whatever it throws, ends the attempt the same way, saying what failed', async () => {
    const { repo } = await setup();
    const client: AttemptQueueClient = {
      add: async () => undefined,
      settled: () => new Promise<never>(() => undefined),
      // Not an Error: what is under test is that any rejection is said as the call's failure.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      removeWaiting: () => Promise.reject("READONLY You can't write against a read only replica."),
      cancel: async () => undefined,
      unfinished: async () => [],
      close: async () => undefined,
    };
    const queue = createQueueDispatcher({
      repo: repo.dir,
      env: repo.env,
      redisUrl: redis.url,
      capacity: 1,
      client,
    });
    const result = await queue.run({ ...job(repo.head(), 'bd-q.5'), timeoutMs: 1_000 }, hooks());
    expect(result).toMatchObject({ outcome: 'error', environment: true });
    expect(result.message).toContain(
      "failed when the attempt's 1s were up: READONLY You can't write against a read only replica.",
    );
    await queue.close();
  });

  it('a --redis that is not a redis URL is a usage error (exit 2)', async () => {
    marks = await mkdtemp(join(tmpdir(), 'forge-marks-'));
    for (const url of ['http://127.0.0.1:6379', 'not a url', 'redis://127.0.0.1:6379/x']) {
      expect(() => connectionOf(url), url).toThrow(UsageError);
    }
  });
});

describe('queue dispatcher and forge-pack workers', () => {
  it('runs independent beads on two workers and a dependent one on their merged result; the tree matches a serial run', async () => {
    const { repo, dispatcher } = await setup();
    const workers = [await startWorker(repo), await startWorker(repo)];
    await Promise.all(workers.map((w) => w.ready));
    const queue = dispatcher();
    const base = repo.head();

    const [a, b] = await Promise.all([
      queue.run(job(base, 'bd-a'), hooks()),
      queue.run(job(base, 'bd-b'), hooks()),
    ]);
    expect([a.outcome, b.outcome], `${a.message} / ${b.message}`).toEqual(['ok', 'ok']);
    // Both machines worked: each took one (the agent takes a moment, each worker runs one at a time).
    expect(new Set([a.worker, b.worker]).size).toBe(2);
    for (const result of [a, b]) expect(result.worker).toMatch(/^[^:]+:\d+$/);
    // The attempt branches came back to the runner's repo, on the base, with the bead's file.
    for (const [result, id] of [
      [a, 'bd-a'],
      [b, 'bd-b'],
    ] as const) {
      const branch = attemptBranchOf('ep-q', id, 1);
      expect(repo.run('rev-parse', branch).trim()).toBe(result.commit);
      expect(repo.run('rev-parse', `${branch}^`).trim()).toBe(base);
      expect(repo.run('show', '--name-only', '--format=', branch).trim()).toBe(`${id}.txt`);
      expect(repo.run('log', '-1', '--format=%B', branch)).toContain(
        `Forge-Attempt: ${attemptIdOf('run1', id, 1)}`,
      );
    }
    // The runner merges them (as its merge queue would), then the dependent bead starts from that.
    repo.run('cherry-pick', '--allow-empty', a.commit ?? '', b.commit ?? '');
    const c = await queue.run(job(repo.head(), 'bd-c'), hooks());
    expect(c.outcome, c.message).toBe('ok');
    repo.run('cherry-pick', c.commit ?? '');
    expect(repo.run('ls-tree', '--name-only', 'HEAD').trim().split('\n')).toEqual([
      'README.md',
      'bd-a.txt',
      'bd-b.txt',
      'bd-c.txt',
    ]);
    // Asked again for the same attempt: the same answer, no second run.
    expect(await queue.run(job(base, 'bd-a'), hooks())).toBe(a);
    // Each worker kept one mirror of the remote and no worktree.
    for (const worker of workers) {
      expect(await readdir(join(worker.cache, 'remotes'))).toHaveLength(1);
      expect(await readdir(join(worker.cache, 'worktrees')).catch(() => [])).toEqual([]);
      expect(worker.output()).toMatch(/took run1\.bd-[abc]\.1/);
      expect(worker.output()).toMatch(/finished run1\.bd-[abc]\.1: ok [0-9a-f]{12}/);
    }
  }, 60_000);

  it('starts the agent where the runner runs in its tree, as a local attempt would', async () => {
    const { repo, dispatcher } = await setup('packages/api');
    await repo.write('packages/api/package.json', '{}\n');
    repo.commitAll('a package');
    const worker = await startWorker(repo);
    await worker.ready;
    const result = await dispatcher().run(job(repo.head(), 'bd-sub'), hooks());
    expect(result.outcome, result.message).toBe('ok');
    // The agent wrote its file in its cwd: the package folder, not the top of the tree.
    expect(repo.run('show', '--name-only', '--format=', result.commit ?? '').trim()).toBe(
      'packages/api/bd-sub.txt',
    );
  }, 60_000);

  it("keeps the runner's size limits: a file past them stays out of the worker's commit and is named back", async () => {
    const { repo, dispatcher } = await setup();
    const worker = await startWorker(repo);
    await worker.ready;
    // The agent writes `done by bd-size\n` (16 bytes) to bd-size.txt: past a 10-byte limit.
    const result = await dispatcher().run(
      { ...job(repo.head(), 'bd-size'), sizeLimits: { file: 10, total: 0, files: 0 } },
      hooks(),
    );
    expect(result.outcome, result.message).toBe('ok');
    expect(result.commit).toBeUndefined();
    expect(result.tooLarge).toEqual([{ path: 'bd-size.txt', size: 16, limit: 'file' }]);
  }, 60_000);

  it("runs the user's named agent (agent_commands) that a bead's label names, with the runner's argv", async () => {
    // The worker has no .forge/config.json of this project: the job brings the argv for the name.
    const { repo, dispatcher } = await setup('', { 'house-agent': [process.execPath, AGENT] });
    const worker = await startWorker(repo);
    await worker.ready;
    const result = await dispatcher().run(
      { ...job(repo.head(), 'bd-named'), agentSpec: 'house-agent', agentFromLabel: true },
      hooks(),
    );
    expect(result.outcome, result.message).toBe('ok');
    expect(repo.run('show', '--name-only', '--format=', result.commit ?? '').trim()).toBe('bd-named.txt');
  }, 60_000);

  it('a failed attempt’s transcript comes back to the runner’s own logs/<bead>.log, saying whose it is', async () => {
    const { repo, dispatcher } = await setup();
    const worker = await startWorker(repo);
    await worker.ready;
    const logs = await mkdtemp(join(tmpdir(), 'forge-logs-'));
    onTestFinished(() => rm(logs, { recursive: true, force: true }));
    const transcriptPath = join(logs, 'logs', 'bd-fail.log');
    const result = await dispatcher().run(job(repo.head(), 'bd-fail'), {
      signal: new AbortController().signal,
      transcriptPath,
      transcriptRoot: logs,
    });
    expect(result.outcome).toBe('error');
    expect(result).not.toHaveProperty('transcript');
    const [header, ...rest] = (await readFile(transcriptPath, 'utf8')).split('\n');
    expect(JSON.parse(header!)).toEqual({
      forge: 'worker_transcript',
      worker: `${result.worker?.split(':')[0]}:${worker.child.pid}`,
      path: join(
        worker.cache,
        'transcripts',
        `${job(repo.head(), 'bd-fail').attemptId.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`,
      ),
    });
    expect(rest.join('\n')).toContain('bd-fail: the build broke on line 12');
  }, 60_000);

  it('hands the attempt of a worker killed mid-bead (kill -9) to the other worker, once', async () => {
    const { repo, dispatcher } = await setup();
    const workers = [await startWorker(repo), await startWorker(repo)];
    await Promise.all(workers.map((w) => w.ready));
    const queue = dispatcher();
    const pending = queue.run(job(repo.head(), 'bd-slow'), hooks());

    const first = await waitFor('the first start', async () => (await starts('bd-slow'))[0]);
    const victim = workers.find((w) => first.includes(w.cache));
    const survivor = workers.find((w) => w !== victim);
    if (victim === undefined || survivor === undefined) throw new Error(`no worker ran ${first}`);
    victim.child.kill('SIGKILL');

    const result = await pending;
    expect(result.outcome, result.message).toBe('ok');
    expect(result.worker).toBe(`${result.worker?.split(':')[0]}:${survivor.child.pid}`);
    const runs = await starts('bd-slow');
    expect(runs).toHaveLength(2);
    expect(runs[1]).toContain(survivor.cache);
    expect(repo.run('show', '--name-only', '--format=', result.commit ?? '').trim()).toBe('bd-slow.txt');
  }, 60_000);

  it('a worker started again on the cache of one killed mid-bead ends the agent that one left running', async () => {
    const { repo, dispatcher } = await setup();
    const victim = await startWorker(repo);
    await victim.ready;
    const queue = dispatcher();
    const pending = queue.run(job(repo.head(), 'bd-slow-orphan'), hooks());
    const first = await waitFor('the agent start', async () => (await starts('bd-slow-orphan'))[0]);
    const orphan = Number(first.split(' ')[0]);
    victim.child.kill('SIGKILL');
    await new Promise((resolve) => victim.child.once('exit', resolve));
    // Nothing else ends it: its worker is gone.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(alive(orphan)).toBe(true);

    const again = await startWorker(repo, [], victim.cache);
    await again.ready;
    expect(again.output()).toMatch(
      new RegExp(`ended what the worker [^ ]+:${victim.child.pid}, which is gone`),
    );
    await waitFor('the orphaned agent to die', async () => (alive(orphan) ? undefined : true));
    // The attempt itself is taken over as before, by the worker now there, and finishes.
    const result = await pending;
    expect(result.outcome, result.message).toBe('ok');
    expect(await starts('bd-slow-orphan')).toHaveLength(2);
  }, 60_000);

  it('stop reaches the worker: the agent of a cancelled attempt is killed and the attempt is aborted', async () => {
    const { repo, dispatcher } = await setup();
    const worker = await startWorker(repo);
    await worker.ready;
    const queue = dispatcher();
    const stop = new AbortController();
    const pending = queue.run(job(repo.head(), 'bd-slow-stop'), hooks(stop.signal));
    const first = await waitFor('the agent start', async () => (await starts('bd-slow-stop'))[0]);
    const agentPid = Number(first.split(' ')[0]);
    expect(alive(agentPid)).toBe(true);
    stop.abort();
    const result = await pending;
    expect(result.outcome, result.message).toBe('aborted');
    expect(result.commit).toBeUndefined();
    await waitFor('the agent to die', async () => (alive(agentPid) ? undefined : true));
    expect(worker.child.exitCode).toBeNull();
  }, 60_000);

  it("a rerun's recover removes the dead runner's queued attempts and cancels its running ones; none of them runs again", async () => {
    const { repo, dispatcher } = await setup();
    const base = repo.head();
    // The first runner hands out two attempts while only one worker (one at a time) is up, then dies.
    const worker = await startWorker(repo);
    await worker.ready;
    const dead = dispatcher();
    void dead.run(job(base, 'bd-slow-old', 'run-old'), hooks());
    await waitFor('the running attempt', async () => (await starts('bd-slow-old'))[0]);
    void dead.run(job(base, 'bd-slow-queued', 'run-old'), hooks());
    const probe = openAttemptQueueClient(redis.url);
    try {
      await waitFor('both jobs in the queue', async () =>
        (await probe.unfinished([queueNameOf(job(base, 'x').agentSpec)])).length === 2 ? true : undefined,
      );
    } finally {
      await probe.close();
    }

    const rerun = dispatcher();
    const removed = await rerun.recover('ep-q');
    expect(removed.sort()).toEqual([
      'queued attempt run-old.bd-slow-queued.1 (removed)',
      'running attempt run-old.bd-slow-old.1 (cancelled)',
    ]);
    const agentPid = Number((await starts('bd-slow-old'))[0]?.split(' ')[0]);
    await waitFor('the old agent to die', async () => (alive(agentPid) ? undefined : true));
    // The rerun's own attempt runs; the removed one never starts, the cancelled one never restarts.
    const fresh = await rerun.run(job(base, 'bd-new', 'run-new'), hooks());
    expect(fresh.outcome, fresh.message).toBe('ok');
    expect(await starts('bd-slow-queued')).toEqual([]);
    expect(await starts('bd-slow-old')).toHaveLength(1);
    expect(await rerun.recover('ep-q')).toEqual([]);
  }, 60_000);

  it('SIGTERM after its Redis went away: the worker still exits, saying so, not waiting for Redis to come back', async () => {
    const { repo } = await setup();
    const own = await startRedis();
    const worker = await startWorker(repo, [], undefined, own.url);
    await worker.ready;
    await own.stop();
    const exited = new Promise<string>((resolve) =>
      worker.child.once('exit', (code, signal) => resolve(`${String(code)} ${String(signal)}`)),
    );
    worker.child.kill('SIGTERM');
    // Before, it waited on the disconnect for ever (seen: the bench's queue figure left two workers
    // and the bench itself running for an hour after it had printed its results).
    expect(await exited, worker.output()).toBe('0 null');
    expect(worker.output()).toContain('stopped (Redis did not answer; its connections were dropped)');
    // Said by the worker's own error lines, not as a stack per connection and retry.
    expect(worker.output()).not.toContain('Unhandled error event');
  }, 60_000);

  it('a second SIGTERM while it stops ends its agent and the worker at once (exit 130)', async () => {
    // A Redis of its own: the attempt the worker leaves behind is no later test's to take.
    const own = await startRedis();
    onTestFinished(() => own.stop());
    const { repo } = await setup();
    const worker = await startWorker(repo, [], undefined, own.url);
    await worker.ready;
    const queue = createQueueDispatcher({ repo: repo.dir, env: repo.env, redisUrl: own.url, capacity: 1 });
    dispatchers.push(queue);
    void queue.run(job(repo.head(), 'bd-slow-stubborn'), hooks());
    const first = await waitFor('the agent start', async () => (await starts('bd-slow-stubborn'))[0]);
    const agentPid = Number(first.split(' ')[0]);
    const exited = new Promise<string>((resolve) =>
      worker.child.once('exit', (code, signal) => resolve(`${String(code)} ${String(signal)}`)),
    );
    worker.child.kill('SIGTERM');
    await waitFor('the stop', async () => (worker.output().includes('stopping:') ? true : undefined));
    // Its agent ignores SIGTERM, so the stop waits on it; a second signal does not.
    expect(alive(agentPid)).toBe(true);
    worker.child.kill('SIGTERM');
    expect(await exited, worker.output()).toBe('130 null');
    await waitFor('the agent killed', async () => (alive(agentPid) ? undefined : true));
  }, 60_000);

  it('SIGTERM: the worker takes nothing new, kills its agent and exits', async () => {
    const { repo, dispatcher } = await setup();
    const worker = await startWorker(repo);
    await worker.ready;
    const queue = dispatcher();
    const pending = queue.run(job(repo.head(), 'bd-slow-term'), hooks());
    const first = await waitFor('the agent start', async () => (await starts('bd-slow-term'))[0]);
    const agentPid = Number(first.split(' ')[0]);
    const exited = new Promise<number | null>((resolve) => worker.child.once('exit', resolve));
    worker.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(alive(agentPid)).toBe(false);
    expect(worker.output()).toContain('stopped');
    const result = await pending;
    expect(result.outcome).not.toBe('ok');
  }, 60_000);
});
