// A plain epic's --auto-commit leaves out of its commits what a bead left past the size limits
// (`runner.max_file_bytes`, `runner.max_change_bytes`): serial, the file stays in the user's tree,
// uncommitted; in parallel, it never leaves the attempt's worktree. Either way the run warns.
import { execFileSync } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRunnerGit } from '../../src/cli/runner-git.js';
import { createGitIntegration } from '../../src/dispatch/attempt-git.js';
import { createWorktreeDispatcher } from '../../src/dispatch/worktree-dispatcher.js';
import {
  DEFAULT_MAX_CHANGE_BYTES,
  DEFAULT_MAX_CHANGE_FILES,
  DEFAULT_MAX_FILE_BYTES,
  type SizeLimits,
} from '../../src/infra/size-limits.js';
import type { ExecutionRequest, Executor, LoopEvent } from '../../src/loop/types.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';
import { createHarness } from '../loop/harness.js';

/** An agent that writes `small.txt` and makes `big.bin` (or `name`) of `size` (sparse: instant at any size). */
function bigFileAgent(size: string, also?: (request: ExecutionRequest) => void, name = 'big.bin'): Executor {
  return {
    kind: 'fake',
    writesCode: true,
    async execute(request) {
      execFileSync('sh', ['-c', 'printf "small\\n" > small.txt'], { cwd: request.cwd });
      execFileSync('mkdir', ['-p', dirname(name)], { cwd: request.cwd });
      execFileSync('truncate', ['-s', size, name], { cwd: request.cwd });
      also?.(request);
      return { outcome: 'ok', message: 'done', agent: 'fake' };
    },
  };
}

const warnings = (events: LoopEvent[]) =>
  events.flatMap((event) => (event.type === 'warning' ? [event.message] : []));

const committedPaths = (repo: TempRepo) =>
  repo.run('ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n');

async function run(
  repo: TempRepo,
  executor: Executor,
  sizeLimits: SizeLimits,
  parallel: boolean,
): Promise<LoopEvent[]> {
  const h = createHarness();
  const { epicId } = await h.epic(['weights']);
  const executors = { resolve: () => executor };
  const summary = await h.run(
    { epicId, cwd: repo.dir, autoCommit: true, sizeLimits },
    {
      executors,
      git: await createRunnerGit({ cwd: repo.dir, env: repo.env }),
      ...(parallel
        ? {
            dispatcher: createWorktreeDispatcher({ repo: repo.dir, env: repo.env, capacity: 2, executors }),
            integration: createGitIntegration(repo.dir, repo.env),
          }
        : {}),
    },
  );
  expect(summary).toMatchObject({ reason: 'done', beadsClosed: 1 });
  return h.events;
}

const DEFAULTS = {
  file: DEFAULT_MAX_FILE_BYTES,
  total: DEFAULT_MAX_CHANGE_BYTES,
  files: DEFAULT_MAX_CHANGE_FILES,
};

describe('--auto-commit and the size limits', () => {
  it('serial: a 3 GB file is left in the tree, uncommitted, and the rest committed', async () => {
    const repo = await createTempRepo();
    // In a folder of its own: git's status names the folder alone, unless asked for every file.
    const events = await run(repo, bigFileAgent('3G', undefined, 'models/big.bin'), DEFAULTS, false);
    expect(committedPaths(repo)).toEqual(['README.md', 'small.txt']);
    expect((await stat(join(repo.dir, 'models/big.bin'))).size).toBe(3 * 2 ** 30);
    expect(repo.run('status', '--porcelain')).toBe('?? models/\n');
    expect(warnings(events)).toEqual([
      expect.stringMatching(
        /^models\/big\.bin \(3 GiB, over 100 MiB a file\): bd-\S+ left it past the commit size limits .*: not committed, left as it is; commit, ignore or remove it yourself\.$/,
      ),
    ]);
  });

  it('serial: no limit (0) commits it', async () => {
    const repo = await createTempRepo();
    const events = await run(repo, bigFileAgent('2K'), { file: 0, total: 0, files: 0 }, false);
    expect(committedPaths(repo)).toEqual(['README.md', 'big.bin', 'small.txt']);
    expect(warnings(events)).toEqual([]);
  });

  it('parallel: the file stays out of the attempt commit, a tracked one grown as the base had it', async () => {
    const repo = await createTempRepo({ 'README.md': 'hello\n', 'data.bin': 'base\n' });
    const grow = (request: ExecutionRequest) => {
      execFileSync('truncate', ['-s', '3K', 'data.bin'], { cwd: request.cwd });
      // Committed by the agent itself: what the attempt changed is measured from its base.
      execFileSync('git', ['add', 'data.bin'], { cwd: request.cwd, env: repo.env });
      execFileSync('git', ['commit', '-q', '-m', 'agent'], { cwd: request.cwd, env: repo.env });
    };
    const events = await run(repo, bigFileAgent('2K', grow), { file: 1024, total: 0, files: 0 }, true);
    expect(committedPaths(repo)).toEqual(['README.md', 'data.bin', 'small.txt']);
    expect(repo.run('show', 'HEAD:data.bin')).toBe('base\n');
    expect(await repo.exists('big.bin')).toBe(false);
    expect(warnings(events)).toEqual([
      expect.stringMatching(
        /^big\.bin \(2 KiB, over 1 KiB a file\), data\.bin \(3 KiB, over 1 KiB a file\): bd-\S+ left them past .*: not committed, gone with the attempt's worktree\.$/,
      ),
    ]);
  });
});

/** An agent that writes `count` small files under `gen/` and removes README.md. */
function manyFilesAgent(count: number): Executor {
  return {
    kind: 'fake',
    writesCode: true,
    async execute(request) {
      execFileSync('mkdir', ['-p', 'gen'], { cwd: request.cwd });
      const names = Array.from({ length: count }, (_, k) => `gen/f${String(k).padStart(3, '0')}.txt`);
      execFileSync('touch', names, { cwd: request.cwd });
      execFileSync('rm', ['README.md'], { cwd: request.cwd });
      return { outcome: 'ok', message: 'done', agent: 'fake' };
    },
  };
}

describe('--auto-commit and the limit on files', () => {
  const limit = { ...DEFAULTS, files: 20 };

  it('serial: a change of more files than the limit is left whole in the tree, none of it committed', async () => {
    const repo = await createTempRepo();
    const head = repo.head();
    const events = await run(repo, manyFilesAgent(20), limit, false);
    expect(repo.head()).toBe(head);
    expect(await repo.exists('gen/f019.txt')).toBe(true);
    expect(await repo.exists('README.md')).toBe(false);
    expect(warnings(events)).toEqual([
      expect.stringMatching(
        /^21 changed files \(README\.md, gen\/f000\.txt, gen\/f001\.txt, gen\/f002\.txt, gen\/f003\.txt, 16 more\), over 20 files a change: bd-\S+ left them past the commit size limits \(runner\.max_change_files in \.forge\/config\.json\): not committed, left as they are; commit, ignore or remove them yourself\.$/,
      ),
    ]);
  });

  it('serial: a change of as many files as the limit is committed', async () => {
    const repo = await createTempRepo();
    const events = await run(repo, manyFilesAgent(19), limit, false);
    expect(committedPaths(repo)).toHaveLength(19);
    expect(committedPaths(repo)).not.toContain('README.md');
    expect(warnings(events)).toEqual([]);
  });

  it('parallel: none of the attempt is committed, its deletion included', async () => {
    const repo = await createTempRepo();
    const head = repo.head();
    const events = await run(repo, manyFilesAgent(20), limit, true);
    expect(repo.head()).toBe(head);
    expect(committedPaths(repo)).toEqual(['README.md']);
    expect(await repo.exists('gen')).toBe(false);
    expect(warnings(events)).toEqual([
      expect.stringMatching(
        /^21 changed files \(.*\), over 20 files a change: .*gone with the attempt's worktree\.$/,
      ),
    ]);
  });
});
