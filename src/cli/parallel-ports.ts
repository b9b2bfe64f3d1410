// Where a parallel or queued run's attempts go: the worktree dispatcher on this machine, or the Redis
// queue's (once its Redis answers), and the run's tree as the branch their commits land on. Loaded only
// for such runs.
import type { QueueDispatcherOptions } from '../dispatch/queue/queue-dispatcher.js';
import type { AttemptDispatcher } from '../loop/attempt-dispatch.js';
import type { ExecutorRegistry, RunnerDeps } from '../loop/types.js';
import type { QueueOptions } from './queue-options.js';

/** The queue's dispatcher, once its Redis answers (a run never waits in silence on one that does not). */
async function queueDispatcher(options: QueueDispatcherOptions): Promise<AttemptDispatcher> {
  const [{ createQueueDispatcher }, { reachRedis }] = await Promise.all([
    import('../dispatch/queue/queue-dispatcher.js'),
    import('../dispatch/queue/bullmq-adapter.js'),
  ]);
  await reachRedis(options.redisUrl);
  return createQueueDispatcher(options);
}

/** The worktree dispatcher and the run's tree as the integration branch (loaded only for parallel runs). */
export async function parallelPorts(
  cwd: string,
  env: NodeJS.ProcessEnv,
  capacity: number,
  executors: ExecutorRegistry,
  queue: QueueOptions | undefined,
  commands: Readonly<Record<string, readonly string[]>>,
): Promise<Pick<RunnerDeps, 'dispatcher' | 'integration'>> {
  const [{ createWorktreeDispatcher }, { createGitIntegration }] = await Promise.all([
    import('../dispatch/worktree-dispatcher.js'),
    import('../dispatch/attempt-git.js'),
  ]);
  const dispatcher =
    queue === undefined
      ? createWorktreeDispatcher({ repo: cwd, env, capacity, executors })
      : await queueDispatcher({
          repo: cwd,
          env,
          capacity,
          commands,
          ...queue,
        });
  return { dispatcher, integration: createGitIntegration(cwd, env) };
}
