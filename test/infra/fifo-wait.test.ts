// A FIFO where git reads a file: one line of an agent's shell (`mkfifo src/.gitignore`) made every later
// git call of the runner wait for ever (seen: a loop hung in git status after its doer). Each call is
// stopped once it waits on one and the FIFO taken away (src/infra/git-fifo.ts): removed among the tree's
// git settings and in git's own folders, put back as last read for the files git reads on every call,
// the index rebuilt from HEAD; where nothing can take its place (the user's config) it is named in an
// error, exit 3.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createBrClient } from '../../src/beads/br/client.js';
import { systemClock } from '../../src/infra/clock.js';
import { fifoWaitOf } from '../../src/infra/fifo-wait.js';
import { createGit, type Git } from '../../src/infra/git.js';
import { createTempRepo } from '../support/git-repo.js';

const onLinux = process.platform === 'linux';
const mkfifo = (path: string) => execFileSync('mkfifo', [path]);

describe.runIf(onLinux)('a FIFO where git reads a file', () => {
  it('tells a process waiting to open one, and which, from one that is not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-fifo-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    mkfifo(join(dir, 'pipe'));
    const reader = spawn('cat', ['pipe'], { cwd: dir, stdio: 'ignore' });
    onTestFinished(() => void reader.kill('SIGKILL'));
    let wait;
    for (let i = 0; i < 100 && wait === undefined; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      wait = fifoWaitOf(reader.pid!);
    }
    expect(wait).toEqual({ path: join(dir, 'pipe') });
    expect(fifoWaitOf(process.pid)).toBeUndefined();
    expect(fifoWaitOf(2 ** 22 + 7)).toBeUndefined();
  });

  it('in the tree (.gitignore, .gitattributes, deep down): removed, and git answers', async () => {
    const repo = await createTempRepo({ 'src/a.txt': 'a\n', 'src/lib/b.txt': 'b\n' });
    await repo.write('src/new.txt', 'new\n');
    mkfifo(join(repo.dir, 'src', '.gitignore'));
    mkfifo(join(repo.dir, 'src', 'lib', '.gitattributes'));
    const status = await repo.git.statusPorcelain();
    expect(status.map((entry) => entry.path)).toEqual(['src/new.txt']);
    expect(existsSync(join(repo.dir, 'src', '.gitignore'))).toBe(false);
    // .gitattributes is read for the paths a command handles: a diff of the file beside it.
    await repo.write('src/lib/b.txt', 'b2\n');
    expect(await repo.git.changedSince('HEAD')).toEqual([
      { path: 'src/lib/b.txt', change: 'modified' },
      { path: 'src/new.txt', change: 'untracked' },
    ]);
    expect(existsSync(join(repo.dir, 'src', 'lib', '.gitattributes'))).toBe(false);
  });

  it('in place of a file git reads on every call (HEAD, its branch, the config, packed refs, excludes), once this process has read it: as it was, in a linked worktree too; never read: stopped and named', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const common = join(repo.dir, '.git');
    await mkdir(join(common, 'info'), { recursive: true });
    await writeFile(join(common, 'info', 'exclude'), 'build/\n');
    const worktree = join(await mkdtemp(join(tmpdir(), 'forge-fifo-head-')), 'wt');
    onTestFinished(() => rm(dirname(worktree), { recursive: true, force: true }));
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'side', worktree], { cwd: repo.dir, env: repo.env });
    for (const [dir, head, branch] of [
      [repo.dir, join(common, 'HEAD'), 'main'],
      [worktree, join(common, 'worktrees', 'wt', 'HEAD'), 'side'],
    ] as const) {
      const git = createGit({ cwd: dir, env: repo.env });
      const before = await git.statusWithHead();
      /** A FIFO in place of `path`: the next call answers as before, and the file is back as it was. */
      const putBack = async (path: string): Promise<void> => {
        const bytes = await readFile(path);
        await rm(path);
        mkfifo(path);
        expect(await git.statusWithHead()).toEqual(before);
        expect(lstatSync(path).isFile()).toBe(true);
        expect(await readFile(path)).toEqual(bytes);
      };
      await putBack(head);
      await putBack(join(common, 'refs', 'heads', branch));
      await putBack(join(common, 'config'));
      await putBack(join(common, 'info', 'exclude'));
      // This working tree's index: made again from HEAD.
      const index = join(dirname(head), 'index');
      await rm(index);
      mkfifo(index);
      expect(await git.statusWithHead()).toEqual(before);
      expect(lstatSync(index).isFile()).toBe(true);
      if (dir === worktree) {
        // Last: the branches' loose files go into packed-refs.
        execFileSync('git', ['pack-refs', '--all'], { cwd: dir, env: repo.env });
        await git.statusWithHead();
        await putBack(join(common, 'packed-refs'));
        // The branch's loose file is gone with it, and what it held is no longer kept: a FIFO there gets
        // nothing stale put back. It is removed, as any such file of git's, and git reads the packed branch.
        const loose = join(common, 'refs', 'heads', branch);
        mkfifo(loose);
        expect(await git.statusWithHead()).toEqual(before);
        expect(existsSync(loose)).toBe(false);
      }

      // A Git made after the FIFO, whose first call waits on it, puts back what this process last read.
      const text = await readFile(head, 'utf8');
      await rm(head);
      mkfifo(head);
      expect(await createGit({ cwd: dir, env: repo.env }).statusWithHead()).toEqual(before);
      expect(await readFile(head, 'utf8')).toBe(text);
    }
    // In a repository this process never read, there is nothing to put back: the call is stopped and
    // names it, as before.
    const other = await createTempRepo({ 'a.txt': 'a\n' });
    const head = join(other.dir, '.git', 'HEAD');
    const text = await readFile(head, 'utf8');
    await rm(head);
    mkfifo(head);
    await expect(createGit({ cwd: other.dir, env: other.env }).statusWithHead()).rejects.toThrow(
      `waited on ${head}, a FIFO`,
    );
    expect(lstatSync(head).isFIFO()).toBe(true);
    await rm(head);
    await writeFile(head, text);
  });

  it("in git's own folder: the index rebuilt from HEAD, any other file removed, one last found absent removed; HEAD or the config with nothing kept to put back, or the user's config with none: stopped within about a second, naming it, exit 3", async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const gitDir = join(repo.dir, '.git');
    // The index: staged work is unstaged, the files are as they were, and git sees them so.
    await repo.write('a.txt', 'a2\n');
    repo.run('add', 'a.txt');
    await repo.write('b.txt', 'b2\n');
    const index = join(gitDir, 'index');
    await rm(index);
    mkfifo(index);
    const changes = async (git: Git) =>
      (await git.statusPorcelain()).map((entry) => `${entry.index}${entry.worktree} ${entry.path}`);
    expect(await changes(repo.git)).toEqual([' M a.txt', ' M b.txt']);
    expect(lstatSync(index).isFile()).toBe(true);
    expect(await repo.read('a.txt')).toBe('a2\n');
    expect(repo.run('diff', '--cached', '--name-only')).toBe('');

    // Alternates where there were none, another branch's ref, HEAD's log: git reads each, makes none a
    // FIFO, and does without them.
    repo.run('branch', 'other');
    const alternates = join(gitDir, 'objects', 'info', 'alternates');
    const other = join(gitDir, 'refs', 'heads', 'other');
    const log = join(gitDir, 'logs', 'HEAD');
    await rm(other);
    await rm(log);
    for (const path of [alternates, other, log]) mkfifo(path);
    const removed = createGit({ cwd: repo.dir, env: repo.env });
    expect(await changes(removed)).toEqual([' M a.txt', ' M b.txt']);
    expect(existsSync(alternates)).toBe(false);
    expect([...((await removed.refTips?.()) ?? []).keys()]).toEqual(['refs/heads/main']);
    expect(existsSync(other)).toBe(false);
    // Many at once: taken away together once git waits on one, not one a call (a call takes away eight).
    const many = Array.from({ length: 12 }, (_, n) => join(gitDir, 'refs', 'heads', `b${n}`));
    for (const path of many) {
      repo.run('branch', basename(path));
      await rm(path);
      mkfifo(path);
    }
    expect([...((await removed.refTips?.()) ?? []).keys()]).toEqual(['refs/heads/main']);
    for (const path of many) expect(existsSync(path)).toBe(false);
    // HEAD's log, which a commit opens to append to.
    expect(await removed.commitPaths(['a.txt'], 'second')).toBe(repo.head());
    expect(lstatSync(log).isFile()).toBe(true);

    // Packed refs, and the user's own config, where this process last found none: nothing again.
    const packed = join(gitDir, 'packed-refs');
    const noConfig = join(repo.dir, 'no-config');
    const withoutConfig = createGit({ cwd: repo.dir, env: { ...repo.env, GIT_CONFIG_GLOBAL: noConfig } });
    const unpacked = await changes(withoutConfig);
    for (const path of [packed, noConfig]) {
      expect(existsSync(path)).toBe(false);
      mkfifo(path);
      expect(await changes(withoutConfig)).toEqual(unpacked);
      expect(existsSync(path)).toBe(false);
    }

    // HEAD and the config where this process kept nothing to put back (a repository never read; a
    // config too large to keep, in one it works in): without them git would read another repository, or
    // this one wrong. Stopped and named, and they stay for the user.
    for (const name of ['HEAD', 'config']) {
      const unkept = await createTempRepo();
      const path = join(unkept.dir, '.git', name);
      const git = createGit({ cwd: unkept.dir, env: unkept.env });
      if (name === 'config') {
        await writeFile(path, `${await readFile(path, 'utf8')}# ${'x'.repeat(70_000)}\n`);
        await git.statusPorcelain();
      }
      await rm(path);
      mkfifo(path);
      const error = await git.statusPorcelain().then(
        () => undefined,
        (e: unknown) => e as { message: string; hint?: string; exitCode?: number },
      );
      expect(error?.message).toContain(`waited on ${path}, a FIFO (named pipe) that nothing writes`);
      expect(error?.hint).toContain(`rm ${path}`);
      expect(error?.exitCode).toBe(3);
      expect(lstatSync(path).isFIFO()).toBe(true);
    }

    // The user's own config: as last read, where this process read it; else stopped and named.
    const config = join(repo.dir, 'global-config');
    await writeFile(config, '[user]\n\tname = Someone\n');
    const git = createGit({ cwd: repo.dir, env: { ...repo.env, GIT_CONFIG_GLOBAL: config } });
    const seen = await changes(git);
    await rm(config);
    mkfifo(config);
    expect(await changes(git)).toEqual(seen);
    expect(await readFile(config, 'utf8')).toBe('[user]\n\tname = Someone\n');
    const unread = join(repo.dir, 'other-config');
    mkfifo(unread);
    const unreadGit = createGit({ cwd: repo.dir, env: { ...repo.env, GIT_CONFIG_GLOBAL: unread } });
    await expect(unreadGit.statusPorcelain()).rejects.toThrow(`waited on ${unread}, a FIFO`);
    expect(lstatSync(unread).isFIFO()).toBe(true);
  });

  it('where br reads: the call is stopped and named the same way, not waited on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-fifo-br-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, '.beads'));
    const store = join(dir, '.beads', 'issues.jsonl');
    mkfifo(store);
    // A br that reads its store with a plain open, as any program does.
    const br = join(dir, 'br');
    await writeFile(br, `#!/bin/sh\nexec cat ${store}\n`);
    await chmod(br, 0o755);
    const client = createBrClient({
      cwd: dir,
      env: { PATH: process.env.PATH },
      actor: 'forge',
      brPath: br,
      clock: systemClock,
      timeoutMs: 60_000,
      lockTimeoutMs: 1000,
      retry: { attempts: 1, baseDelayMs: 10, maxDelayMs: 10 },
      version: '0.2.19',
    });
    await expect(client.run({ command: ['ready'] })).rejects.toThrow(
      `br ready waited on ${store}, a FIFO (named pipe) that nothing writes`,
    );
  });
});
