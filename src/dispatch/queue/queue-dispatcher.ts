// The `queue` dispatcher (`--executor queue`): an attempt becomes a job on a BullMQ queue (one per
// agent kind) that `forge-pack worker` processes on any machine. The runner pushes the base commit to
// the shared remote first; the worker pushes its commit to the attempt branch; the runner fetches that
// branch back, so its merge queue sees the same local branch a worktree attempt leaves.
import { closeSync, writeSync } from 'node:fs';
import { agentAdapters } from '../../agents/registry.js';
import { createGitCommand } from '../../infra/git-command.js';
import { timerDelay } from '../../infra/clock.js';
import { openOwnLogSync } from '../../infra/own-log.js';
import { AttemptGit } from '../attempt-git.js';
import type {
  AttemptDispatcher,
  AttemptHooks,
  AttemptJob,
  AttemptResult,
} from '../../loop/attempt-dispatch.js';
import { openAttemptQueueClient, type AttemptQueueClient } from './bullmq-adapter.js';
import {
  fromWorkerResult,
  queueNameForKind,
  queueNameOf,
  toQueueJob,
  type QueueResult,
} from './job-schema.js';

export interface QueueDispatcherOptions {
  /** The run's cwd, inside the integration tree. */
  repo: string;
  env: NodeJS.ProcessEnv;
  redisUrl: string;
  /** The git remote workers fetch from and push to; default: the repo's `origin`. */
  remote?: string | undefined;
  /** How many attempts the runner keeps handed out at once. */
  capacity: number;
  /** For tests: a client on another transport. */
  client?: AttemptQueueClient;
  /**
   * The user's named agents (`.forge/config.json` `agent_commands`): a job naming one carries its argv,
   * since a worker on another machine has not got this project's config.
   */
  commands?: Readonly<Record<string, readonly string[]>>;
  /** How long Redis may be silent on a call that hands over or ends an attempt (default 30 s). */
  redisAnswerMs?: number;
}

/** How long past its timeout a taken attempt's worker has to answer before the attempt is cancelled. */
const TAKEN_GRACE_MS = 60_000;
/** How long Redis has to answer the hand-over, or a call that ends an attempt, before the run stops. */
const REDIS_ANSWER_MS = 30_000;

export function createQueueDispatcher(options: QueueDispatcherOptions): AttemptDispatcher {
  const git = createGitCommand({ cwd: options.repo, env: options.env });
  const client = options.client ?? openAttemptQueueClient(options.redisUrl);
  const runs = new Map<string, Promise<AttemptResult>>();
  const branches = new Set<string>();
  let remote: Promise<string> | undefined;
  const remoteUrl = (): Promise<string> =>
    (remote ??=
      options.remote !== undefined
        ? Promise.resolve(options.remote)
        : git.git(['remote', 'get-url', 'origin'], { ok: [0, 2] }).then((r) => {
            const url = r.stdout.trim();
            if (r.exitCode !== 0 || url === '')
              throw new Error(
                '--executor queue needs a git remote workers can reach: add "origin" or pass --remote <url>',
              );
            return url;
          }));

  /** Where the run's cwd sits in its tree, so the worker starts its agent in the same place. */
  let prefix: Promise<string> | undefined;
  const subdir = (): Promise<string> => (prefix ??= new AttemptGit(options.repo, options.env).subdir());

  async function runOnce(job: AttemptJob, hooks: AttemptHooks): Promise<AttemptResult> {
    const { signal } = hooks;
    const url = await remoteUrl();
    const named = options.commands ?? {};
    const command = Object.hasOwn(named, job.agentSpec.trim()) ? named[job.agentSpec.trim()] : undefined;
    const data = toQueueJob(job, url, await subdir(), command);
    // The base must be where the worker can fetch it, whatever branch it is on (or none).
    await git.git(['push', '--quiet', '--force', '--', url, `${job.base}:${data.baseRef}`]);
    const queue = queueNameOf(job.agentSpec);

    // A Redis that has gone leaves each call waiting for it to come back (BullMQ's clients retry for
    // ever): the hand-over, and the calls that end an attempt (its timeout, a stop), wait no longer
    // than the grace. Past it the attempt ends as `silent`, an environment error that stops the run
    // (seen: a run whose Redis went away waited past the bead's timeout, for good).
    const grace = options.redisAnswerMs ?? REDIS_ANSWER_MS;
    const timers = new Set<NodeJS.Timeout>();
    let sayGone: (why: string) => void = () => undefined;
    const silent = new Promise<AttemptResult>((resolve) => {
      sayGone = (why) =>
        resolve({
          outcome: 'error',
          environment: true,
          message: `Redis at ${options.redisUrl} ${why}: the attempt ${job.attemptId} is left to the queue (start Redis again, then run again: the rerun takes it back)`,
        });
    });
    /** The call's answer, or undefined when Redis failed it or was silent for the grace (said by `silent`). */
    const answer = async <T>(call: Promise<T>, when: string): Promise<{ value: T } | undefined> => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), grace);
        timers.add(timer);
      });
      const answered = await Promise.race([
        call.then(
          (value) => ({ value }),
          (error: unknown) => ({ failed: error instanceof Error ? error.message : String(error) }),
        ),
        late,
      ]);
      if (timer !== undefined) {
        clearTimeout(timer);
        timers.delete(timer);
      }
      if (answered !== undefined && 'value' in answered) return answered;
      sayGone(
        answered === undefined
          ? `did not answer within ${Math.round(grace / 1000)}s ${when}`
          : `failed ${when}: ${answered.failed}`,
      );
      return undefined;
    };

    if ((await answer(client.add(queue, job.attemptId, data), 'when handed the attempt')) === undefined)
      return silent;

    let onAbort: (() => void) | undefined;
    const removed = new Promise<AttemptResult>((resolve) => {
      onAbort = () => {
        void (async () => {
          // Not taken yet: gone from the queue. Taken: the worker kills its agent and reports 'aborted'.
          const waiting = await answer(client.removeWaiting(queue, job.attemptId), 'when the run stopped');
          if (waiting?.value === true)
            resolve({ outcome: 'aborted', message: 'stopped before a worker took it' });
          else if (waiting !== undefined) await answer(client.cancel(job.attemptId), 'when the run stopped');
        })();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    // The bead's timeout (already cut to the wall clock) holds here too: a job no worker takes in time
    // is taken back, and one a worker took gets a grace past it to answer (its worker enforces the
    // timeout on its agent) before it is cancelled. With no worker up, a run ignored both (seen).
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<AttemptResult>((resolve) => {
      const seconds = Math.round(job.timeoutMs / 1000);
      timer = setTimeout(() => {
        void (async () => {
          const waiting = await answer(
            client.removeWaiting(queue, job.attemptId),
            `when the attempt's ${seconds}s were up`,
          );
          if (waiting === undefined) return;
          if (waiting.value) {
            resolve({ outcome: 'timeout', message: `no worker took it within ${seconds}s` });
            return;
          }
          timer = setTimeout(() => {
            void answer(client.cancel(job.attemptId), 'when its worker did not answer').finally(() =>
              resolve({
                outcome: 'timeout',
                message: `its worker did not answer within ${seconds}s and ${TAKEN_GRACE_MS / 1000}s more`,
              }),
            );
          }, TAKEN_GRACE_MS);
        })();
      }, timerDelay(job.timeoutMs));
    });
    try {
      const settled = await Promise.race([client.settled(queue, job.attemptId), removed, timedOut, silent]);
      if ('outcome' in settled) return settled;
      const answered: AttemptResult & { transcript?: QueueResult['transcript'] } =
        settled.state === 'completed'
          ? fromWorkerResult(settled.value)
          : { outcome: 'error', message: `the queue gave up on the attempt: ${settled.reason}` };
      const { transcript, ...result } = answered;
      if (transcript !== undefined) keepTranscript(hooks, transcript, result.worker);
      if (result.outcome !== 'ok' || result.commit === undefined) return result;
      return { ...result, ...(await fetchAttempt(url, job.branch, result.commit)) };
    } finally {
      clearTimeout(timer);
      for (const pending of timers) clearTimeout(pending);
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
      await git.git(['push', '--quiet', '--', url, `:${data.baseRef}`], { ok: [0, 1] });
    }
  }

  /** Brings the worker's branch here, as the local attempt branch; a commit that is not there is an error. */
  async function fetchAttempt(url: string, branch: string, commit: string): Promise<Partial<AttemptResult>> {
    branches.add(branch);
    const fetched = await git.git(
      ['fetch', '--quiet', '--', url, `+refs/heads/${branch}:refs/heads/${branch}`],
      {
        ok: [0, 1, 128],
      },
    );
    const head = await git.git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], {
      ok: [0, 1],
    });
    if (fetched.exitCode === 0 && head.stdout.trim() === commit) return {};
    return {
      outcome: 'error',
      message: `the worker reported commit ${commit.slice(0, 12)} on ${branch}, but the remote's branch does not hold it`,
      commit: undefined,
    };
  }

  return {
    kind: 'queue',
    capacity: options.capacity,

    run(job, hooks) {
      const known = runs.get(job.attemptId);
      if (known !== undefined) return known;
      // Handing over is the set-up's part (a remote, Redis, a push): its failure is no fault of the
      // bead's, which is left open and unlabelled while the run stops to have it fixed.
      const started = runOnce(job, hooks).catch((error: unknown): AttemptResult => ({
        outcome: 'error',
        environment: true,
        message: `could not hand the attempt to the queue: ${error instanceof Error ? error.message : String(error)}`,
      }));
      runs.set(job.attemptId, started);
      return started;
    },

    async recover(epicId) {
      // One runner per epic: any unfinished job of the epic belongs to a runner that is gone.
      const queues = Object.keys(agentAdapters).map(queueNameForKind);
      const named: string[] = [];
      for (const found of await client.unfinished(queues)) {
        if (found.epicId !== epicId) continue;
        if (found.state === 'waiting' && (await client.removeWaiting(found.queue, found.attemptId))) {
          named.push(`queued attempt ${found.attemptId} (removed)`);
        } else {
          await client.cancel(found.attemptId);
          named.push(`running attempt ${found.attemptId} (cancelled)`);
        }
      }
      return named;
    },

    async close() {
      for (const branch of branches) await git.git(['branch', '--quiet', '-D', '--', branch], { ok: [0, 1] });
      branches.clear();
      await client.close();
    },
  };
}

/**
 * The worker's transcript, appended to the runner's own for the bead (`ralph-loop logs <epic> <bead>`),
 * after a line saying whose it is and where the whole of it stays. Best-effort: a transcript that
 * cannot be written costs the attempt nothing.
 */
function keepTranscript(
  hooks: AttemptHooks,
  transcript: NonNullable<QueueResult['transcript']>,
  worker: string | undefined,
): void {
  const header = {
    forge: 'worker_transcript',
    worker: worker ?? 'unknown',
    path: transcript.path,
    ...(transcript.omitted > 0 ? { omitted_bytes: transcript.omitted } : {}),
  };
  let fd: number | undefined;
  try {
    fd = openOwnLogSync(hooks.transcriptPath, hooks.transcriptRoot);
    writeSync(
      fd,
      `${JSON.stringify(header)}\n${transcript.text}${transcript.text.endsWith('\n') ? '' : '\n'}`,
    );
  } catch {
    // The result stands without it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
