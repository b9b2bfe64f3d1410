// The `worktree` dispatcher (`--parallel N`): each attempt runs in a git worktree of its own, on its
// attempt branch created at the job's base, through the same role executor as in the main tree; what it
// changed is committed on that branch and the commit handed back for the runner's merge queue.
import { join } from 'node:path';
import type { AttemptDispatcher, AttemptHooks, AttemptJob, AttemptResult } from '../loop/attempt-dispatch.js';
import type { ExecutorRegistry } from '../loop/types.js';
import { AttemptGit, worktreePathOf } from './attempt-git.js';
import { executeAttempt } from './execute-attempt.js';
import { makeDir } from '../infra/fs-ops.js';

export interface WorktreeDispatcherOptions {
  /** The run's cwd, inside the integration tree. */
  repo: string;
  env: NodeJS.ProcessEnv;
  /** How many attempts run at once (`--parallel N`). */
  capacity: number;
  executors: ExecutorRegistry;
}

export function createWorktreeDispatcher(options: WorktreeDispatcherOptions): AttemptDispatcher {
  const git = new AttemptGit(options.repo, options.env);
  /** Attempt ids under way or done, so the same id asked twice runs once. */
  const runs = new Map<string, Promise<AttemptResult>>();
  const branches = new Set<string>();

  async function runOnce(job: AttemptJob, hooks: AttemptHooks): Promise<AttemptResult> {
    const path = worktreePathOf(await git.epicDir(job.epicId), job.branch);
    branches.add(job.branch);
    await git.addWorktree(path, job.branch, job.base);
    try {
      const subdir = await git.subdir();
      const cwd = subdir === '' ? path : join(path, subdir);
      // Made when the base holds nothing there (the run's folder is untracked or empty in git).
      await makeDir(cwd);
      const result = await executeAttempt(options.executors, job, {
        cwd,
        signal: hooks.signal,
        transcriptPath: hooks.transcriptPath,
        transcriptRoot: hooks.transcriptRoot,
        onActivity: hooks.onActivity,
        onSpawn: hooks.onSpawn,
      });
      if (result.outcome !== 'ok') return { ...result, worker: 'local' };
      const made = await git.commitAttempt(
        path,
        `ralph-loop: ${job.bead.id} ${job.bead.title}`,
        { beadId: job.bead.id, attemptId: job.attemptId },
        job.sizeLimits === undefined ? undefined : { limits: job.sizeLimits, base: job.base },
      );
      return {
        ...result,
        commit: made.sha,
        worker: 'local',
        ...(made.tooLarge.length > 0 ? { tooLarge: made.tooLarge } : {}),
      };
    } finally {
      // The commit lives on the branch: the worktree is no longer needed, whatever happens next.
      await git.removeWorktree(path);
    }
  }

  return {
    kind: 'worktree',
    capacity: options.capacity,

    run(job, hooks) {
      const known = runs.get(job.attemptId);
      if (known !== undefined) return known;
      const started = runOnce(job, hooks);
      runs.set(job.attemptId, started);
      return started;
    },

    async recover(epicId) {
      const dir = await git.epicDir(epicId);
      const removed: string[] = [];
      for (const path of await git.worktreesUnder(dir)) {
        await git.removeWorktree(path);
        removed.push(path);
      }
      await git.removeWorktree(dir);
      const prefix = `forge/attempts/${epicId.replace(/[^A-Za-z0-9._-]/g, '_')}/`;
      for (const branch of await git.branchesUnder(prefix)) {
        await git.deleteBranch(branch);
        removed.push(branch);
      }
      return removed;
    },

    async close() {
      // Results are merged (cherry-picked) by then, or dropped: their branches have served.
      for (const branch of branches) await git.deleteBranch(branch);
      branches.clear();
    },
  };
}
