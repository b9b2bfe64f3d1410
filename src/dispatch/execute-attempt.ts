// One attempt job run by the role's own executor, wherever the attempt's tree is (a local worktree,
// a worker's mirror): the job's fields become the request, and a throw becomes an error result.
import type { AttemptJob } from '../loop/attempt-dispatch.js';
import type { ExecutionRequest, ExecutionResult, ExecutorRegistry } from '../loop/types.js';

/** What the place running the attempt adds to the job: its tree, its signal, its transcript. */
export type AttemptPlace = Pick<
  ExecutionRequest,
  'cwd' | 'signal' | 'transcriptPath' | 'transcriptRoot' | 'onActivity' | 'onSpawn'
>;

export async function executeAttempt(
  executors: ExecutorRegistry,
  job: AttemptJob,
  place: AttemptPlace,
): Promise<ExecutionResult> {
  return executors
    .resolve(job.role)
    .execute({
      bead: job.bead,
      epicId: job.epicId,
      role: job.role,
      agentSpec: job.agentSpec,
      agentFromLabel: job.agentFromLabel,
      attempt: job.attempt,
      feedback: job.feedback,
      timeoutMs: job.timeoutMs,
      budgetUsd: job.budgetUsd,
      ...place,
    })
    .catch((error: unknown): ExecutionResult => ({
      outcome: 'error',
      message: error instanceof Error ? error.message : String(error),
    }));
}
