// The worktree dispatcher on real temp repositories: each attempt in its own worktree at its base,
// its changes (not Forge's files) committed on its branch, worktrees gone after, leftovers recovered.
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Bead } from '../../src/beads/types.js';
import { commandPath } from '../support/command-path.js';
import { createWorktreeDispatcher } from '../../src/dispatch/worktree-dispatcher.js';
import { attemptBranchOf, attemptIdOf, type AttemptJob } from '../../src/loop/attempt-dispatch.js';
import type { ExecutionRequest, ExecutionResult, Executor } from '../../src/loop/types.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';

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

/** An executor that writes `<bead>.txt` (and a Forge file) in its cwd, remembering the cwds it saw. */
function writingExecutor(seen: string[], outcome: ExecutionResult['outcome'] = 'ok'): Executor {
  return {
    kind: 'agent',
    writesCode: true,
    async execute(request: ExecutionRequest): Promise<ExecutionResult> {
      seen.push(request.cwd);
      await writeFile(join(request.cwd, `${request.bead.id}.txt`), `done by ${request.bead.id}\n`);
      await mkdir(join(request.cwd, '.forge'), { recursive: true });
      await writeFile(join(request.cwd, '.forge', 'noise.json'), '{}\n');
      return { outcome, message: outcome === 'ok' ? 'done' : 'broke' };
    },
  };
}

function job(repo: TempRepo, beadId: string, attempt = 1): AttemptJob {
  return {
    attemptId: attemptIdOf('run1', beadId, attempt),
    epicId: 'ep-1',
    bead: bead(beadId),
    role: 'agent',
    agentSpec: 'command:x',
    agentFromLabel: false,
    attempt,
    timeoutMs: 60_000,
    base: repo.head(),
    branch: attemptBranchOf('ep-1', beadId, attempt),
  };
}

/**
 * A `git` first on PATH that logs when each `worktree` command starts and ends (and holds it a while,
 * so overlaps show), then runs the real git; `failAdds` of the first adds fail as a lost race would.
 */
async function loggingGit(
  repo: TempRepo,
  failAdds = 0,
): Promise<{ env: NodeJS.ProcessEnv; log: () => Promise<string[]> }> {
  const real = commandPath('git');
  // Outside the working tree: Forge never runs a git a PATH entry inside the tree holds.
  const bin = await mkdtemp(join(tmpdir(), 'forge-git-shim-'));
  onTestFinished(() => rm(bin, { recursive: true, force: true }));
  const log = join(bin, 'log');
  const fails = join(bin, 'fails');
  await writeFile(fails, 'x'.repeat(failAdds));
  await writeFile(
    join(bin, 'git'),
    [
      '#!/bin/sh',
      'case " $* " in *" worktree "*) ;; *) exec ' + real + ' "$@" ;; esac',
      `echo "start $$ $*" >> ${log}`,
      'sleep 0.05',
      // Forge puts its own -c settings first: the subcommand is found by its words, not its place.
      `if case " $* " in *" worktree add "*) true ;; *) false ;; esac && [ -s ${fails} ]; then`,
      `  tail -c +2 ${fails} > ${fails}.next; mv ${fails}.next ${fails}`,
      `  echo "end $$" >> ${log}; echo "fatal: could not create directory of '.git/worktrees'" >&2; exit 128`,
      'fi',
      `${real} "$@"; code=$?`,
      `echo "end $$" >> ${log}`,
      'exit $code',
      '',
    ].join('\n'),
  );
  await chmod(join(bin, 'git'), 0o755);
  return {
    env: { ...repo.env, PATH: `${bin}:${repo.env.PATH ?? ''}` },
    log: async () => (await readFile(log, 'utf8')).split('\n').filter((line) => line !== ''),
  };
}

/** A dispatcher on `repo` whose attempts write their bead's file (see writingExecutor). */
const writingDispatcher = (repo: string, env: NodeJS.ProcessEnv, capacity: number) =>
  createWorktreeDispatcher({ repo, env, capacity, executors: { resolve: () => writingExecutor([]) } });

const hooks = () => ({ signal: new AbortController().signal, transcriptPath: '/dev/null' });

describe('worktree dispatcher', () => {
  it('runs each attempt in its own worktree at the base and commits its change on the attempt branch', async () => {
    const repo = await createTempRepo({ 'README.md': 'hello\n' });
    const seen: string[] = [];
    const dispatcher = createWorktreeDispatcher({
      repo: repo.dir,
      env: repo.env,
      capacity: 2,
      executors: { resolve: () => writingExecutor(seen) },
    });
    const [a, b] = await Promise.all([
      dispatcher.run(job(repo, 'bd-a'), hooks()),
      dispatcher.run(job(repo, 'bd-b'), hooks()),
    ]);
    expect(a.outcome).toBe('ok');
    expect(a.worker).toBe('local');
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
    for (const cwd of seen)
      expect(cwd.startsWith(join(repo.dir, '.git', 'forge', 'worktrees', 'ep-1'))).toBe(true);

    // Each commit sits on its branch, on the base, holding its bead's file and nothing of Forge's.
    for (const [result, id] of [
      [a, 'bd-a'],
      [b, 'bd-b'],
    ] as const) {
      expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
      const commit = result.commit ?? '';
      expect(repo.run('rev-parse', attemptBranchOf('ep-1', id, 1)).trim()).toBe(commit);
      expect(repo.run('rev-parse', `${commit}^`).trim()).toBe(repo.head());
      expect(repo.run('diff-tree', '--no-commit-id', '--name-only', '-r', commit).trim()).toBe(`${id}.txt`);
      const message = repo.run('log', '-1', '--format=%B', commit);
      expect(message).toContain(`Forge-Bead: ${id}\n`);
      expect(message).toContain(`Forge-Attempt: run1.${id}.1\n`);
    }
    // The main tree is untouched, and no worktree is left behind.
    expect(repo.run('status', '--porcelain')).toBe('');
    expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(await readdir(join(repo.dir, '.git', 'forge', 'worktrees', 'ep-1'))).toEqual([]);

    await dispatcher.close();
    expect(repo.run('branch', '--list', 'forge/*').trim()).toBe('');
  });

  it('a failed attempt commits nothing; the same attempt id asked twice runs once', async () => {
    const repo = await createTempRepo();
    const seen: string[] = [];
    const dispatcher = createWorktreeDispatcher({
      repo: repo.dir,
      env: repo.env,
      capacity: 1,
      executors: { resolve: () => writingExecutor(seen, 'error') },
    });
    const one = job(repo, 'bd-x');
    const [first, second] = await Promise.all([dispatcher.run(one, hooks()), dispatcher.run(one, hooks())]);
    expect(first.outcome).toBe('error');
    expect(first.commit).toBeUndefined();
    expect(second).toBe(first);
    expect(seen).toHaveLength(1);
  });

  it('an executor that throws is a failed result, and its worktree is still removed', async () => {
    const repo = await createTempRepo();
    const dispatcher = createWorktreeDispatcher({
      repo: repo.dir,
      env: repo.env,
      capacity: 1,
      executors: {
        resolve: () => ({
          kind: 'agent',
          writesCode: true,
          execute: () => Promise.reject(new Error('agent binary missing')),
        }),
      },
    });
    const result = await dispatcher.run(job(repo, 'bd-t'), hooks());
    expect(result).toMatchObject({ outcome: 'error', message: 'agent binary missing' });
    expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  });

  it('recover removes the worktrees and attempt branches a dead run left, of its epic only', async () => {
    const repo = await createTempRepo();
    const left = join(repo.dir, '.git', 'forge', 'worktrees', 'ep-1', 'bd-a-1');
    repo.run('worktree', 'add', '-q', '-b', attemptBranchOf('ep-1', 'bd-a', 1), left);
    repo.run('branch', attemptBranchOf('ep-1', 'bd-b', 2));
    repo.run('branch', attemptBranchOf('ep-2', 'bd-c', 1));
    const dispatcher = writingDispatcher(repo.dir, repo.env, 2);
    const removed = await dispatcher.recover('ep-1');
    expect(removed).toEqual(
      expect.arrayContaining([left, attemptBranchOf('ep-1', 'bd-a', 1), attemptBranchOf('ep-1', 'bd-b', 2)]),
    );
    expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(repo.run('branch', '--list', 'forge/*', '--format=%(refname:short)').trim()).toBe(
      attemptBranchOf('ep-2', 'bd-c', 1),
    );
  });

  it("never runs two worktree commands of one repository at once, across dispatchers: git's race on .git/worktrees", async () => {
    // git's `worktree remove` drops `.git/worktrees` when it looks empty, just as an add is about to
    // make its entry there; the add then fails and the attempt with it, by timing alone.
    const repo = await createTempRepo();
    const shim = await loggingGit(repo);
    const dispatchers = [0, 1].map(() => writingDispatcher(repo.dir, shim.env, 3));
    const ids = ['bd-a', 'bd-b', 'bd-c', 'bd-d', 'bd-e', 'bd-f'];
    const results = await Promise.all(
      ids.map((id, index) => dispatchers[index % 2]!.run(job(repo, id), hooks())),
    );
    expect(results.map((r) => r.outcome)).toEqual(ids.map(() => 'ok'));
    const lines = await shim.log();
    // Each start is followed by its own end: one worktree command at a time.
    for (let index = 0; index < lines.length; index += 2) {
      const pid = lines[index]!.split(' ')[1];
      expect(lines[index + 1], lines.join('\n')).toBe(`end ${pid}`);
    }
    expect(lines.filter((line) => line.includes(' worktree add '))).toHaveLength(ids.length);
  });

  it('a worktree add that loses a race to another process is tried again', async () => {
    const repo = await createTempRepo();
    const shim = await loggingGit(repo, 2);
    const dispatcher = writingDispatcher(repo.dir, shim.env, 1);
    const result = await dispatcher.run(job(repo, 'bd-r'), hooks());
    expect(result.outcome).toBe('ok');
    expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
    expect((await shim.log()).filter((line) => line.includes(' worktree add '))).toHaveLength(3);
  });

  it('a worktree whose folder a crash deleted is replaced, and recover forgets one', async () => {
    const repo = await createTempRepo();
    const epicDir = join(repo.dir, '.git', 'forge', 'worktrees', 'ep-1');
    // The same attempt's worktree, registered but its folder gone; and another attempt's.
    const same = join(epicDir, 'bd-a-1');
    const other = join(epicDir, 'bd-b-1');
    repo.run('worktree', 'add', '-q', '-b', attemptBranchOf('ep-1', 'bd-a', 1), same);
    repo.run('worktree', 'add', '-q', '-b', attemptBranchOf('ep-1', 'bd-b', 1), other);
    await rm(same, { recursive: true });
    await rm(other, { recursive: true });
    const dispatcher = writingDispatcher(repo.dir, repo.env, 1);
    const result = await dispatcher.run(job(repo, 'bd-a'), hooks());
    expect(result.outcome).toBe('ok');
    expect(repo.run('worktree', 'list', '--porcelain')).toContain(other);
    await dispatcher.recover('ep-1');
    expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  });

  it('runs the attempt where the run runs in its tree, a folder the base does not hold included', async () => {
    const repo = await createTempRepo();
    // The run starts in a folder git does not track: the attempt's worktree makes it.
    await mkdir(join(repo.dir, 'fresh'));
    const seen: string[] = [];
    const dispatcher = createWorktreeDispatcher({
      repo: join(repo.dir, 'fresh'),
      env: repo.env,
      capacity: 1,
      executors: { resolve: () => writingExecutor(seen) },
    });
    const result = await dispatcher.run(job(repo, 'bd-f'), hooks());
    expect(result.outcome, result.message).toBe('ok');
    expect(seen[0]?.endsWith(join('bd-f-1', 'fresh'))).toBe(true);
    expect(repo.run('show', '--name-only', '--format=', result.commit ?? '').trim()).toBe('fresh/bd-f.txt');
  });
});
