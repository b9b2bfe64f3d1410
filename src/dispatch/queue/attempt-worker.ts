// One queued attempt on a worker machine: a mirror of the job's remote in the worker's cache
// (created once, then fetched), a worktree at the job's base, the role's executor with the worker's own
// environment, the change committed and pushed to the attempt branch, the worktree removed after.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createGitCommand } from '../../infra/git-command.js';
import { fileStat, makeDir, openRangeReader } from '../../infra/fs-ops.js';
import { runProcess } from '../../infra/process.js';
import type { OverLimit } from '../../infra/size-limits.js';
import type { ExecutionResult, ExecutorRegistry } from '../../loop/types.js';
import { AttemptGit } from '../attempt-git.js';
import { executeAttempt } from '../execute-attempt.js';
import type { TakenJob } from './bullmq-adapter.js';
import { queueJobSchema, TRANSCRIPT_BACK_BYTES, type QueueJob, type QueueResult } from './job-schema.js';

export interface AttemptWorkerDeps {
  /** Mirrors, worktrees and transcripts live here. */
  cacheDir: string;
  /** The worker's own environment: its credentials, its git identity. */
  env: NodeJS.ProcessEnv;
  /** The role executors for one job: the user's named agent it carries (`agentCommand`) among them. */
  executors: (job: QueueJob) => ExecutorRegistry;
  /** `host:pid`, reported with every result. */
  worker: string;
  onSpawn?: (attemptId: string, pid: number) => void;
}

const safe = (text: string): string => text.replace(/[^A-Za-z0-9._-]/g, '_');

export function createAttemptProcessor(deps: AttemptWorkerDeps): (job: TakenJob) => Promise<QueueResult> {
  /** One fetch at a time per mirror: git locks its refs, and two fetches would race for them. */
  const mirrorQueues = new Map<string, Promise<unknown>>();
  const serial = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const next = (mirrorQueues.get(key) ?? Promise.resolve()).then(work, work);
    mirrorQueues.set(
      key,
      next.catch(() => undefined),
    );
    return next;
  };

  async function mirrorOf(job: QueueJob): Promise<string> {
    const dir = join(
      deps.cacheDir,
      'remotes',
      `${createHash('sha256').update(job.remote).digest('hex').slice(0, 16)}`,
    );
    return serial(dir, async () => {
      if ((await fileStat(join(dir, '.git', 'HEAD'))) === undefined) {
        // Not bare: git's worktree commands want a repository with a top, though this one's stays empty.
        await makeDir(dir);
        const init = await runProcess(
          { file: 'git', args: ['init', '--quiet', '--', dir] },
          { cwd: deps.cacheDir, env: deps.env },
        );
        if (init.exitCode !== 0) throw new Error(`git init ${dir} failed: ${init.stderr.trim()}`);
      }
      const git = createGitCommand({ cwd: dir, env: deps.env });
      await git.git(['fetch', '--quiet', '--no-tags', '--', job.remote, `+${job.baseRef}:${job.baseRef}`]);
      return dir;
    });
  }

  async function run(job: QueueJob, taken: TakenJob): Promise<WorkerResult> {
    const mirror = await mirrorOf(job);
    const attemptGit = new AttemptGit(mirror, deps.env);
    const path = join(deps.cacheDir, 'worktrees', safe(job.attemptId));
    await makeDir(join(deps.cacheDir, 'transcripts'));
    await attemptGit.addWorktree(path, job.branch, job.base);
    try {
      // The runner's place in its tree; made when the base holds nothing there (an untracked folder).
      const cwd = job.subdir === '' ? path : join(path, ...job.subdir.split('/'));
      await makeDir(cwd);
      const result = await executeAttempt(deps.executors(job), job, {
        cwd,
        signal: taken.signal,
        transcriptPath: transcriptOf(job),
        transcriptRoot: deps.cacheDir,
        onSpawn: (pid) => deps.onSpawn?.(job.attemptId, pid),
      });
      if (result.outcome !== 'ok') return result;
      const made = await attemptGit.commitAttempt(
        path,
        `ralph-loop: ${job.bead.id} ${job.bead.title}`,
        { beadId: job.bead.id, attemptId: job.attemptId },
        job.sizeLimits === undefined ? undefined : { limits: job.sizeLimits, base: job.base },
      );
      const tooLarge = made.tooLarge.length > 0 ? { tooLarge: made.tooLarge } : {};
      if (made.sha === undefined) return { ...result, ...tooLarge };
      const git = createGitCommand({ cwd: mirror, env: deps.env });
      await git.git(['push', '--quiet', '--force', '--', job.remote, `${made.sha}:refs/heads/${job.branch}`]);
      return { ...result, commit: made.sha, ...tooLarge };
    } finally {
      await attemptGit.removeWorktree(path);
      await attemptGit.deleteBranch(job.branch);
    }
  }

  const transcriptOf = (job: QueueJob): string =>
    join(deps.cacheDir, 'transcripts', `${safe(job.attemptId)}.jsonl`);

  return async (taken) => {
    const parsed = queueJobSchema.safeParse(taken.data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        outcome: 'error',
        fatal: true,
        message: `the job is not a valid attempt (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`,
        worker: deps.worker,
      };
    }
    if (taken.signal.aborted)
      return { outcome: 'aborted', message: 'cancelled before it started', worker: deps.worker };
    try {
      const wire = toWireResult(await run(parsed.data, taken), deps.worker);
      const transcript = await transcriptBack(transcriptOf(parsed.data));
      return transcript === undefined ? wire : { ...wire, transcript };
    } catch (error) {
      return {
        outcome: 'error',
        message: `the worker could not run the attempt: ${messageOf(error)}`,
        worker: deps.worker,
      };
    }
  };
}

/** The end of the transcript at `path`, cut at a line start when cut; undefined when there is none. */
async function transcriptBack(path: string): Promise<QueueResult['transcript']> {
  const reader = await openRangeReader(path).catch(() => undefined);
  if (reader === undefined) return undefined;
  try {
    const size = await reader.size();
    const from = Math.max(0, size - TRANSCRIPT_BACK_BYTES);
    let bytes = await reader.read(from, size);
    let omitted = from;
    if (from > 0) {
      // From the first whole line on: neither half a line nor half a character.
      const start = bytes.indexOf(0x0a) + 1;
      bytes = bytes.subarray(start);
      omitted += start;
    }
    // No more characters than bytes (a byte that is not UTF-8 decodes to one U+FFFD): within the bound.
    return { text: bytes.toString('utf8'), path, omitted };
  } finally {
    await reader.close().catch(() => undefined);
  }
}

/** What an attempt on this worker comes to: its result, the commit, and what the commit left out. */
type WorkerResult = ExecutionResult & { commit?: string; tooLarge?: OverLimit[] };

/** The fields a result carries back (nothing the runner fills in itself, no undefined values). */
function toWireResult(result: WorkerResult, worker: string): QueueResult {
  const wire: QueueResult = { outcome: result.outcome, message: result.message, worker };
  const copy = <K extends keyof QueueResult>(key: K, value: QueueResult[K] | undefined): void => {
    if (value !== undefined) wire[key] = value;
  };
  copy('agent', result.agent);
  copy('model', result.model);
  copy('scripted', result.scripted);
  copy('exitCode', result.exitCode);
  copy('inputTokens', result.inputTokens);
  copy('outputTokens', result.outputTokens);
  copy('costUsd', result.costUsd);
  copy('resetAt', result.resetAt);
  copy('finalText', result.finalText);
  copy('writeAttempts', result.writeAttempts);
  copy('fatal', result.fatal);
  copy('environment', result.environment);
  copy('detail', result.detail);
  copy('commit', result.commit);
  copy('tooLarge', result.tooLarge);
  return wire;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
