// `ralph-loop --executor queue`: the flags that send attempts to forge-pack workers through Redis.
import { AppError, ExitCode } from '../infra/errors.js';
import type { RunFlags } from './run-flags.js';

export interface QueueOptions {
  redisUrl: string;
  /** The git remote workers fetch from and push to; default: origin's URL. */
  remote?: string | undefined;
}

/** `--executor queue --redis <url> [--remote <url>]`, checked; undefined for local runs. */
export function queueOptions(flags: RunFlags): QueueOptions | undefined {
  const executor = flags.executor ?? 'local';
  if (executor !== 'local' && executor !== 'queue')
    throw new AppError(`--executor must be local or queue, not "${executor}".`, { exitCode: ExitCode.usage });
  if (executor === 'local') {
    if (flags.redis !== undefined || flags.remote !== undefined)
      throw new AppError('--redis and --remote go with --executor queue.', { exitCode: ExitCode.usage });
    return undefined;
  }
  if (flags.redis === undefined)
    throw new AppError('--executor queue needs --redis <url>, the Redis your forge-pack workers use.', {
      exitCode: ExitCode.usage,
      hint: 'Start workers with forge-pack worker --redis redis://host:6379, then pass the same URL here.',
    });
  return { redisUrl: flags.redis, remote: flags.remote };
}
