// Temp git repositories for tests: isolated from the user's git config, removed when the test ends.
import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { lstat, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';
import { createGit, type Git } from '../../src/infra/git.js';

export interface TempRepo {
  dir: string;
  env: NodeJS.ProcessEnv;
  git: Git;
  /** Runs git synchronously in the repo (test setup and assertions, not the code under test). */
  run(...args: string[]): string;
  write(path: string, content: string | Uint8Array): Promise<void>;
  read(path: string): Promise<string>;
  exists(path: string): Promise<boolean>;
  remove(path: string): Promise<void>;
  /** Stages everything and commits; returns the new HEAD. */
  commitAll(message: string): string;
  head(): string;
  log(): string[];
}

/** A repo on `main` with an initial commit of `files`, cleaned up with onTestFinished. */
export async function createTempRepo(
  files: Record<string, string> = { 'README.md': 'hello\n' },
): Promise<TempRepo> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-git-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    // Java's home too (it reads the account's, not HOME): Forge watches the package stores in both.
    JAVA_TOOL_OPTIONS: `-Duser.home=${dir}`,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    // Never find a repository above the temp dir (a test that deletes .git must not reach another one).
    GIT_CEILING_DIRECTORIES: dirname(dir),
  };
  const run = (...args: string[]): string =>
    execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  run('init', '-q', '-b', 'main');
  // What three `git config` calls would write (~230 repositories a run: ~700 git processes fewer).
  appendFileSync(
    join(dir, '.git', 'config'),
    '[user]\n\tname = Forge Test\n\temail = forge@example.test\n[commit]\n\tgpgSign = false\n',
  );

  const repo: TempRepo = {
    dir,
    env,
    git: createGit({ cwd: dir, env }),
    run,
    async write(path, content) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    },
    read: (path) => readFile(join(dir, path), 'utf8'),
    // Anything at the path, a folder or a dangling link too (a read would miss both).
    exists: (path) =>
      lstat(join(dir, path)).then(
        () => true,
        () => false,
      ),
    remove: (path) => rm(join(dir, path), { recursive: true, force: true }),
    commitAll(message) {
      run('add', '-A');
      run('commit', '-q', '--allow-empty', '-m', message);
      return repo.head();
    },
    head: () => run('rev-parse', 'HEAD').trim(),
    log: () =>
      run('log', '--format=%s')
        .split('\n')
        .filter((line) => line !== ''),
  };
  for (const [path, content] of Object.entries(files)) await repo.write(path, content);
  repo.commitAll('initial');
  return repo;
}
