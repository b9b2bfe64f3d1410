// The one file that knows BullMQ: queues of attempts (one per agent kind), waiting for an attempt's
// result, the cancel signal per attempt (a key a late worker checks, and a pub/sub message a busy one
// hears), and the worker side that takes jobs. Everything else speaks in attempt ids and plain data.
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { EnvironmentError, UsageError } from '../../infra/errors.js';

/** Where cancel messages are published; the message is the attempt id. */
const CANCEL_CHANNEL = 'forge:cancel';
const cancelKey = (attemptId: string): string => `forge:cancel:${attemptId}`;
/** Finished jobs are kept a day: a runner asking again for the same attempt id gets the same result. */
const KEEP_SECONDS = 24 * 3600;

/** ioredis options from a `redis://[user:pass@]host:port[/db]` or `rediss://` URL; anything else is refused. */
export function connectionOf(url: string): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--redis "${url}" is not a URL (expected redis://host:6379)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new UsageError(`--redis "${url}": expected a redis:// or rediss:// URL`);
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) throw new UsageError(`--redis "${url}": the database must be a number`);
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(db === '' ? {} : { db: Number(db) }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ's workers block on Redis; a command must wait for a reconnect rather than fail.
    maxRetriesPerRequest: null,
  };
}

/** How long a first connection to Redis may take before the queue is called unreachable. */
const REACH_TIMEOUT_MS = 5_000;

/**
 * Connects once and pings, or throws an EnvironmentError saying why: BullMQ's clients retry forever
 * (maxRetriesPerRequest: null), so a Redis that is not there made a runner wait in silence with its
 * first Ctrl-C unheard, and a worker print a stack a second (seen). Asked before either starts.
 */
export async function reachRedis(url: string): Promise<void> {
  const probe = new Redis({
    ...connectionOf(url),
    lazyConnect: true,
    connectTimeout: REACH_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let last: Error | undefined;
  probe.on('error', (error: Error) => (last = error));
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    const why = (last ?? (error as Error)).message;
    throw new EnvironmentError(`Cannot reach Redis at ${url}: ${why}`, {
      hint: 'Start Redis there (redis-server --port 6379) or pass the --redis URL of one that runs.',
    });
  } finally {
    probe.disconnect();
  }
}

export type Settled = { state: 'completed'; value: unknown } | { state: 'failed'; reason: string };

export interface QueuedAttempt {
  queue: string;
  attemptId: string;
  epicId: string;
  state: 'waiting' | 'active';
}

/** The runner's side: hand attempts out, wait for them, cancel them. */
export interface AttemptQueueClient {
  /** Adds the job once: a second add with the same attempt id is the same job (BullMQ's jobId). */
  add(queue: string, attemptId: string, data: unknown): Promise<void>;
  /** Resolves when the job completes or fails for good (after its one stalled retry). */
  settled(queue: string, attemptId: string): Promise<Settled>;
  /** Removes a job still waiting; false when a worker already has it. */
  removeWaiting(queue: string, attemptId: string): Promise<boolean>;
  /** Tells whichever worker runs (or will take) the attempt to stop it. */
  cancel(attemptId: string): Promise<void>;
  /** Jobs of `queues` not yet finished, with the epic their data names. */
  unfinished(queues: readonly string[]): Promise<QueuedAttempt[]>;
  close(): Promise<void>;
}

export function openAttemptQueueClient(url: string): AttemptQueueClient {
  const connection = connectionOf(url);
  const queues = new Map<string, Queue>();
  let control: Redis | undefined;
  const events = new Map<string, { queueEvents: QueueEvents; ready: Promise<QueueEvents> }>();
  const queueOf = (name: string): Queue => {
    let queue = queues.get(name);
    if (queue === undefined) {
      queue = new Queue(name, { connection });
      queues.set(name, queue);
    }
    return queue;
  };
  const eventsOf = (name: string): Promise<QueueEvents> => {
    let opened = events.get(name);
    if (opened === undefined) {
      const queueEvents = new QueueEvents(name, { connection });
      opened = { queueEvents, ready: queueEvents.waitUntilReady().then(() => queueEvents) };
      events.set(name, opened);
    }
    return opened.ready;
  };

  return {
    async add(queue, attemptId, data) {
      await eventsOf(queue);
      await queueOf(queue).add('attempt', data, {
        jobId: attemptId,
        attempts: 1,
        removeOnComplete: { age: KEEP_SECONDS },
        removeOnFail: { age: KEEP_SECONDS },
      });
    },

    async settled(queue, attemptId) {
      const queueEvents = await eventsOf(queue);
      const job = await queueOf(queue).getJob(attemptId);
      if (job === undefined) return { state: 'failed', reason: `attempt ${attemptId} is not in the queue` };
      try {
        return { state: 'completed', value: await job.waitUntilFinished(queueEvents) };
      } catch (error) {
        return { state: 'failed', reason: error instanceof Error ? error.message : String(error) };
      }
    },

    async removeWaiting(queue, attemptId) {
      const job = await queueOf(queue).getJob(attemptId);
      if (job === undefined) return true;
      const state = await job.getState();
      if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized') return false;
      await job.remove().catch(() => undefined);
      return true;
    },

    async cancel(attemptId) {
      control ??= new Redis(connection);
      const client = control;
      await client.set(cancelKey(attemptId), '1', 'EX', KEEP_SECONDS);
      await client.publish(CANCEL_CHANNEL, attemptId);
    },

    async unfinished(names) {
      const found: QueuedAttempt[] = [];
      for (const name of names) {
        const queue = queueOf(name);
        for (const [state, types] of [
          ['waiting', ['waiting', 'delayed', 'prioritized', 'paused']],
          ['active', ['active']],
        ] as const) {
          for (const job of await queue.getJobs([...types])) {
            const epicId = epicOf(job);
            if (job.id !== undefined && epicId !== undefined)
              found.push({ queue: name, attemptId: job.id, epicId, state });
          }
        }
      }
      return found;
    },

    async close() {
      const opened = { events: [...events.values()], queues: [...queues.values()], control };
      control = undefined;
      events.clear();
      queues.clear();
      // A close waits for Redis to take its quits, and for ever when it has gone (a call it holds, or
      // a QueueEvents that never got ready): past a grace the connections are dropped instead.
      // Each connection is dropped then, one that never got ready too: its retries alone would keep
      // the runner's process alive after the run had ended.
      const graceful = (async () => {
        for (const { queueEvents } of opened.events) await queueEvents.close();
        for (const queue of opened.queues) await queue.close();
        await opened.control?.quit().catch(() => undefined);
      })();
      if (await settledBy(graceful, Date.now() + REDIS_CLOSE_GRACE_MS)) return;
      const bases = [...opened.events.map(({ queueEvents }) => queueEvents), ...opened.queues];
      await settledBy(Promise.all(bases.map((base) => base.disconnect())), Date.now() + 1000);
      opened.control?.disconnect();
    },
  };
}

function epicOf(job: Job): string | undefined {
  const data: unknown = job.data;
  if (typeof data !== 'object' || data === null || !('epicId' in data)) return undefined;
  return typeof data.epicId === 'string' ? data.epicId : undefined;
}

/** What a worker's processor is given for one job. */
export interface TakenJob {
  attemptId: string;
  data: unknown;
  /** Aborts when the runner cancels the attempt or the worker is stopping. */
  signal: AbortSignal;
}

export interface AttemptWorkerOptions {
  /** Queue name → how many of its jobs run at once on this worker. */
  queues: ReadonlyMap<string, number>;
  /** How long a job's lock lasts without renewal (BullMQ renews it at half): a dead worker's job is free after it. */
  lockDurationMs: number;
  process(job: TakenJob): Promise<unknown>;
  onError?: (error: Error) => void;
}

export interface AttemptWorkers {
  /**
   * Takes nothing new, aborts the jobs under way, waits for their processors to return, disconnects.
   * True when Redis did not answer in time and the connections were dropped: their retries may still
   * hold the process, which then has to end itself.
   */
  close(): Promise<boolean>;
}

/** How long a worker's stop waits on Redis before it drops the connections. */
const REDIS_CLOSE_GRACE_MS = 5000;

/** True when `work` settled by `deadline` (epoch ms); false when that came first (the work goes on). */
function settledBy(work: Promise<unknown>, deadline: number): Promise<boolean> {
  work.catch(() => undefined);
  return Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) =>
      setTimeout(() => resolve(false), Math.max(0, deadline - Date.now())).unref(),
    ),
  ]);
}

export async function startAttemptWorkers(
  url: string,
  options: AttemptWorkerOptions,
): Promise<AttemptWorkers> {
  const connection = connectionOf(url);
  const running = new Map<string, AbortController>();
  /** The processors under way: a stop waits for them, whatever Redis does. */
  const inFlight = new Set<Promise<unknown>>();
  const client = new Redis(connection);
  const subscriber = new Redis(connection);
  // A Redis that went away is said once a retry by the workers' own error events; without a listener,
  // ioredis printed a stack for each of these two connections at every retry.
  for (const connected of [client, subscriber]) connected.on('error', () => undefined);
  await subscriber.subscribe(CANCEL_CHANNEL);
  subscriber.on('message', (_channel: string, attemptId: string) => {
    running.get(attemptId)?.abort(new Error('the runner cancelled the attempt'));
  });

  const workers = [...options.queues].map(
    ([name, concurrency]) =>
      new Worker(
        name,
        async (job: Job) => {
          const attemptId = job.id ?? '';
          const controller = new AbortController();
          running.set(attemptId, controller);
          try {
            if ((await client.exists(cancelKey(attemptId))) === 1)
              controller.abort(new Error('the runner cancelled the attempt'));
            const processing = options.process({ attemptId, data: job.data, signal: controller.signal });
            inFlight.add(processing);
            return await processing.finally(() => inFlight.delete(processing));
          } finally {
            running.delete(attemptId);
          }
        },
        {
          connection,
          concurrency,
          lockDuration: options.lockDurationMs,
          stalledInterval: options.lockDurationMs,
          // A job whose worker died goes back to the queue once; a second death fails it for the runner.
          maxStalledCount: 1,
        },
      ),
  );
  for (const worker of workers) worker.on('error', (error) => options.onError?.(error));
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));

  let closing: Promise<boolean> | undefined;
  return {
    close() {
      closing ??= (async () => {
        // Pause first so nothing new is taken while the running ones are stopped (a pause that waits
        // on a Redis that has gone is waited for no longer than the grace).
        const deadline = Date.now() + REDIS_CLOSE_GRACE_MS;
        await settledBy(
          Promise.all(workers.map((worker) => worker.pause(true).catch(() => undefined))),
          deadline,
        );
        for (const controller of running.values()) controller.abort(new Error('the worker is stopping'));
        await Promise.allSettled([...inFlight]);
        // The grace counts from here too: the processors' own time is theirs, not Redis's.
        const redisDeadline = Math.max(deadline, Date.now() + REDIS_CLOSE_GRACE_MS / 2);
        // What is left needs Redis (the jobs' last words, the quits), and waits for it to come back
        // when it has gone: past a grace, the connections are dropped instead (seen: a worker told to
        // stop after its Redis went away waited for ever).
        const graceful = (async () => {
          await Promise.all(workers.map((worker) => worker.close()));
          await subscriber.quit().catch(() => undefined);
          await client.quit().catch(() => undefined);
        })();
        if (await settledBy(graceful, redisDeadline)) return false;
        {
          await settledBy(Promise.all(workers.map((worker) => worker.close(true))), Date.now() + 1000);
          // Their connections too, or their retries keep the process alive once the command is done.
          await settledBy(Promise.all(workers.map((worker) => worker.disconnect())), Date.now() + 1000);
          subscriber.disconnect();
          client.disconnect();
        }
        return true;
      })();
      return closing;
    },
  };
}
