// What crosses the queue is checked both ways: a job carries an attempt and its remote, nothing else;
// a worker's answer that does not fit becomes an 'error' result saying what was wrong.
import { describe, expect, it } from 'vitest';
import { agentLimits } from '../../../src/cli/worker-command.js';
import {
  baseRefOf,
  fromWorkerResult,
  queueJobSchema,
  queueNameOf,
  toQueueJob,
} from '../../../src/dispatch/queue/job-schema.js';
import type { AttemptJob } from '../../../src/loop/attempt-dispatch.js';

const attempt: AttemptJob = {
  attemptId: 'r1.bd-a.1',
  epicId: 'ep',
  bead: {
    id: 'bd-a',
    title: 'a',
    status: 'in_progress',
    priority: 2,
    issue_type: 'task',
    labels: ['role:doer'],
    created_at: 'x',
    updated_at: 'x',
  },
  role: 'doer',
  agentSpec: 'claude',
  agentFromLabel: false,
  attempt: 1,
  timeoutMs: 1000,
  base: 'a'.repeat(40),
  branch: 'forge/attempts/ep/bd-a-1',
};

describe('queue job and result schemas', () => {
  it('a job is the attempt plus its remote and base ref, and nothing more', () => {
    // An extra field (an env someone added by mistake) does not travel: the schema strips it.
    const withEnv: AttemptJob & { env: Record<string, string> } = { ...attempt, env: { SECRET: 'x' } };
    const job = toQueueJob(withEnv, '/srv/repo.git');
    expect(job).toEqual({
      ...attempt,
      remote: '/srv/repo.git',
      baseRef: 'refs/forge/bases/r1.bd-a.1',
      subdir: '',
    });
    expect(JSON.stringify(job)).not.toContain('SECRET');
    expect(baseRefOf('r/1 x')).toBe('refs/forge/bases/r_1_x');
  });

  it("carries the runner's size limits there and the files past them back", () => {
    const job = toQueueJob({ ...attempt, sizeLimits: { file: 100, total: 0, files: 7 } }, '/srv/repo.git');
    expect(queueJobSchema.parse(job).sizeLimits).toEqual({ file: 100, total: 0, files: 7 });
    // A runner from before the limit on files sends none: the worker holds to none.
    const older = { ...job, sizeLimits: { file: 100, total: 0 } };
    expect(queueJobSchema.parse(older).sizeLimits).toEqual({ file: 100, total: 0, files: 0 });
    const back = { outcome: 'ok', message: 'done', worker: 'h:1' };
    const tooLarge = [
      { path: 'w.bin', size: 200, limit: 'file' },
      { path: 'gen/a', size: 8, limit: 'files' },
    ];
    expect(fromWorkerResult({ ...back, tooLarge }).tooLarge).toEqual(tooLarge);
    expect(
      fromWorkerResult({ ...back, tooLarge: [{ path: 'w.bin', size: -1, limit: 'file' }] }),
    ).toMatchObject({
      outcome: 'error',
    });
  });

  it('refuses a job whose base is not a commit id', () => {
    expect(() => toQueueJob({ ...attempt, base: 'main' }, '/srv/repo.git')).toThrow(/full commit id/);
  });

  it('carries where in the tree the runner runs, never a path out of the tree', () => {
    expect(toQueueJob(attempt, '/srv/repo.git', 'packages/api').subdir).toBe('packages/api');
    for (const out of ['/etc', '..', 'a/../..', '../x', 'a\\..\\..'])
      expect(() => toQueueJob(attempt, '/srv/repo.git', out), out).toThrow(/inside the tree/);
    // A named agent's argv travels with the job; a label still only names it.
    expect(toQueueJob(attempt, '/srv/repo.git', '', ['my-agent', '--fast']).agentCommand).toEqual([
      'my-agent',
      '--fast',
    ]);
    // A job from an older runner, without the field, runs at the top.
    const { subdir: _subdir, ...old } = toQueueJob(attempt, '/srv/repo.git');
    expect(queueJobSchema.parse(old).subdir).toBe('');
  });

  it('a valid worker result passes through; garbage is an error outcome naming the field', () => {
    const good = { outcome: 'ok', message: 'done', commit: 'b'.repeat(40), worker: 'box:12', costUsd: 0.5 };
    expect(fromWorkerResult(good)).toEqual(good);
    expect(fromWorkerResult({ ...good, outcome: 'splendid' })).toEqual({
      outcome: 'error',
      message: expect.stringMatching(/^the worker's result is not a valid attempt result \(outcome: /),
    });
    expect(fromWorkerResult({ ...good, worker: 'no pid' }).message).toMatch(/worker: host:pid/);
    expect(fromWorkerResult({ ...good, commit: 'rm -rf /' }).outcome).toBe('error');
    expect(fromWorkerResult('garbage').message).toMatch(/\(\(result\): /);
  });

  it('one queue per agent kind; a worker limit per kind', () => {
    expect(queueNameOf('claude-opus')).toBe('forge-attempts-claude');
    expect(queueNameOf('node agent.mjs')).toBe('forge-attempts-command');
    const limits = agentLimits('claude=2,codex=0', 1);
    expect(limits.get('claude')).toBe(2);
    expect(limits.get('codex')).toBe(0);
    expect(limits.get('gemini')).toBe(1);
    expect(() => agentLimits('robot=1', 1)).toThrow(/unknown agent kind "robot"/);
    expect(() => agentLimits('claude=lots', 1)).toThrow(/not kind=limit/);
  });
});
