// The Git interface on real temp repositories: -z parsing, change listing, commits of exact paths.
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createGit, GitError } from '../../src/infra/git.js';
import { countedCommands } from '../support/counted-git.js';
import { forgeIndexEntry } from '../support/forge-index.js';
import { createTempRepo } from '../support/git-repo.js';

describe('git: reading state', () => {
  it('a tree whose .git went is no repository: its calls never climb to the repository around it', async () => {
    const repo = await createTempRepo();
    // A linked worktree inside the repository, as --worktree makes one under .forge/worktrees/.
    const path = join(repo.dir, '.forge', 'worktrees', 'e');
    await repo.git.worktreeAdd(path, { branch: 'ralph-loop/e' });
    const inTree = createGit({ cwd: path, env: repo.env });
    expect(await inTree.headState()).toEqual({ sha: repo.head(), branch: 'ralph-loop/e' });
    // Its .git deleted while the Git is in use (an agent's rm -rf, a cleanup script).
    await rm(join(path, '.git'));
    await expect(inTree.headState()).rejects.toThrow(/not a git repository/);
    await expect(inTree.attachHead('ralph-loop/e')).rejects.toThrow(/not a git repository/);
    expect(await repo.git.headState()).toEqual({ sha: repo.head(), branch: 'main' });
  });

  it('headSha and resolveCommit', async () => {
    const repo = await createTempRepo();
    expect(await repo.git.headSha()).toBe(repo.head());
    expect(await repo.git.resolveCommit('main')).toBe(repo.head());
    expect(await repo.git.resolveCommit('no-such-branch')).toBeUndefined();
    expect(await repo.git.resolveCommit('0'.repeat(40))).toBeUndefined();
  });

  it('headState: the commit and the branch in one call, a detached HEAD without one, an unborn HEAD an error', async () => {
    const repo = await createTempRepo();
    expect(await repo.git.headState()).toEqual({ sha: repo.head(), branch: 'main' });
    repo.run('checkout', '-q', '-b', 'feat/x');
    // A file named HEAD in the tree does not make the names ambiguous.
    await writeFile(join(repo.dir, 'HEAD'), 'not a ref\n');
    expect(await repo.git.headState()).toEqual({ sha: repo.head(), branch: 'feat/x' });
    repo.run('checkout', '-q', '--detach');
    expect(await repo.git.headState()).toEqual({ sha: repo.head(), branch: undefined });
    repo.run('checkout', '-q', '--orphan', 'fresh');
    await expect(repo.git.headState()).rejects.toBeInstanceOf(GitError);
  });

  it('statusWithHead: the status and where HEAD is in one call, as statusPorcelain and headState say', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n', 'old name.txt': 'o\n' });
    await repo.write('a.txt', 'changed\n');
    repo.run('mv', 'old name.txt', 'new name.txt');
    await repo.write('dir/u n.txt', 'new\n');
    const both = async () => ({
      head: await repo.git.headState(),
      entries: await repo.git.statusPorcelain(),
    });
    const { git, subcommands } = await countedCommands(repo.dir, repo.env);
    const found = await git.statusWithHead();
    expect(await subcommands()).toEqual(['rev-parse', 'status']); // the tree's top, asked once
    expect(found).toEqual(await both());
    expect(found.head).toEqual({ sha: repo.head(), branch: 'main' });
    expect(found.entries).toEqual([
      { index: ' ', worktree: 'M', path: 'a.txt' },
      { index: 'R', worktree: ' ', path: 'new name.txt', origPath: 'old name.txt' },
      { index: '?', worktree: '?', path: 'dir/u n.txt' },
    ]);
    // Detached, and a branch named as git prints a detached HEAD: each told apart.
    repo.run('checkout', '-q', '--detach');
    expect((await repo.git.statusWithHead()).head).toEqual({ sha: repo.head(), branch: undefined });
    repo.run('checkout', '-q', '-b', '(detached)');
    expect((await repo.git.statusWithHead()).head).toEqual({ sha: repo.head(), branch: '(detached)' });
    expect(await repo.git.statusWithHead()).toEqual(await both());
    // No commit yet: the status alone still answers; with HEAD, headState's error.
    repo.run('checkout', '-q', '--orphan', 'fresh');
    expect((await repo.git.statusPorcelain()).length).toBeGreaterThan(0);
    await expect(repo.git.statusWithHead()).rejects.toBeInstanceOf(GitError);
  });

  it('reads objects as they are: a replace ref (git replace) does not change what it sees', async () => {
    const repo = await createTempRepo({ 'metric/helpers.mjs': 'export const bonus = 0;\n' });
    const base = repo.head();
    // A copy of the base commit holding a change to the helper, put in its place.
    await repo.write('metric/helpers.mjs', 'export const bonus = 40;\n');
    repo.run('add', 'metric/helpers.mjs');
    const tree = repo.run('write-tree').trim();
    const forged = repo.run('commit-tree', tree, '-m', 'base').trim();
    repo.run('replace', base, forged);
    expect(repo.run('show', `${base}:metric/helpers.mjs`)).toBe('export const bonus = 40;\n');
    // The change is in the working tree and the index, against the real base.
    expect(await repo.git.changedSince(base)).toEqual([{ path: 'metric/helpers.mjs', change: 'modified' }]);
    const real = repo.run('--no-replace-objects', 'rev-parse', `${base}:metric/helpers.mjs`).trim();
    expect(await repo.git.listTree(base, ['metric/helpers.mjs'])).toEqual([
      expect.objectContaining({ path: 'metric/helpers.mjs', object: real }),
    ]);
  });

  it('reads commits as they are: a forged commit-graph does not change the tree it sees', async () => {
    const repo = await createTempRepo({ 'metric/helpers.mjs': 'export const bonus = 0;\n' });
    const base = repo.head();
    const baseTree = repo.run('rev-parse', `${base}^{tree}`).trim();
    await repo.write('metric/helpers.mjs', 'export const bonus = 40;\n');
    repo.run('add', 'metric/helpers.mjs');
    const tree = repo.run('write-tree').trim();
    // The graph made to say the base's tree is the one holding the change (git does not check it).
    repo.run('commit-graph', 'write', '--reachable');
    const path = join(repo.dir, '.git', 'objects', 'info', 'commit-graph');
    const graph = await readFile(path);
    Buffer.from(tree, 'hex').copy(graph, graph.indexOf(Buffer.from(baseTree, 'hex')));
    await chmod(path, 0o644);
    await writeFile(path, graph);
    expect(repo.run('diff', '--cached', '--name-only', base)).toBe('');
    expect(await repo.git.changedSince(base)).toEqual([{ path: 'metric/helpers.mjs', change: 'modified' }]);
  });

  it('reads and sets the index flags that hide a tracked file from status, both at once too', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n', 'b c.txt': 'b\n', 'd.txt': 'd\n' });
    repo.run('update-index', '--skip-worktree', 'a.txt');
    repo.run('update-index', '--assume-unchanged', 'b c.txt');
    repo.run('update-index', '--skip-worktree', 'd.txt');
    repo.run('update-index', '--assume-unchanged', 'd.txt');
    expect(await repo.git.indexFlags!()).toEqual(
      new Map([
        ['a.txt', { skipWorktree: true, assumeUnchanged: false }],
        ['b c.txt', { skipWorktree: false, assumeUnchanged: true }],
        ['d.txt', { skipWorktree: true, assumeUnchanged: true }],
      ]),
    );
    const none = { skipWorktree: false, assumeUnchanged: false };
    await repo.git.setIndexFlags!(
      new Map([
        ['a.txt', none],
        ['b c.txt', { skipWorktree: true, assumeUnchanged: false }],
        ['d.txt', none],
      ]),
    );
    expect(await repo.git.indexFlags!()).toEqual(
      new Map([['b c.txt', { skipWorktree: true, assumeUnchanged: false }]]),
    );
    await repo.write('a.txt', 'changed\n');
    expect(await repo.git.statusPorcelain()).toEqual([expect.objectContaining({ path: 'a.txt' })]);
  });

  it('exposes an index entry forged to vouch for content the file no longer holds, and nothing else', async () => {
    const repo = await createTempRepo({
      'weight.mjs': 'export const WEIGHT = 1;\n',
      'touched.txt': 't\n',
      'sparse.txt': 's\n',
      'staged.txt': 'a\n',
    });
    const base = repo.head();
    // The user's own: a file touched but unchanged, one hidden on purpose, staged work, an intent to add.
    const later = new Date(Date.now() + 5_000);
    await utimes(join(repo.dir, 'touched.txt'), later, later);
    repo.run('update-index', '--skip-worktree', 'sparse.txt');
    await repo.write('sparse.txt', 'not checked out here\n');
    await repo.write('staged.txt', 'b\n');
    repo.run('add', 'staged.txt');
    await repo.write('new.txt', 'n\n');
    repo.run('add', '-N', 'new.txt');
    await forgeIndexEntry(repo.dir, 'weight.mjs', 'export const WEIGHT = 10;\n');
    expect(await repo.git.changedSince(base)).not.toContainEqual(
      expect.objectContaining({ path: 'weight.mjs' }),
    );

    expect(await repo.git.exposeForgedEntries!()).toEqual(['weight.mjs']);
    expect(await repo.git.changedSince(base)).toContainEqual({ path: 'weight.mjs', change: 'modified' });
    expect(await repo.git.statusPorcelain()).toContainEqual({
      index: ' ',
      worktree: 'M',
      path: 'weight.mjs',
    });
    // The entry keeps its blob; the user's flag, staged work and intent to add are as they were.
    expect(repo.run('show', ':weight.mjs')).toBe('export const WEIGHT = 1;\n');
    expect(repo.run('ls-files', '-v', 'sparse.txt')).toBe('S sparse.txt\n');
    expect(repo.run('show', ':staged.txt')).toBe('b\n');
    expect(repo.run('diff', '--cached', '--name-only')).toBe('staged.txt\n');
    expect(await repo.git.exposeForgedEntries!()).toEqual([]);
  });

  it('exposeForgedEntries hashes every file whatever the repository says of refreshing the index', async () => {
    // Without its refresh, `git diff` takes every entry of the scratch index (no stat data) for changed.
    const repo = await createTempRepo({ 'a.txt': 'a\n', 'weight.mjs': 'export const WEIGHT = 1;\n' });
    repo.run('config', 'diff.autoRefreshIndex', 'false');
    const later = new Date(Date.now() + 5_000);
    await utimes(join(repo.dir, 'a.txt'), later, later);
    expect(await repo.git.exposeForgedEntries!()).toEqual([]);
    await forgeIndexEntry(repo.dir, 'weight.mjs', 'export const WEIGHT = 10;\n');
    expect(await repo.git.exposeForgedEntries!()).toEqual(['weight.mjs']);
  });

  it('exposeForgedEntries reads the index flags only when a change is hidden from the real index', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n', 'weight.mjs': 'export const WEIGHT = 1;\n' });
    const { git, subcommands } = await countedCommands(repo.dir, repo.env);
    // An honest edit: both indexes see it, so there is nothing to explain with flags.
    await repo.write('a.txt', 'edited\n');
    await git.headSha(); // where the tree's top is, asked once
    const asked = (await subcommands()).length;
    expect(await git.exposeForgedEntries!()).toEqual([]);
    expect((await subcommands()).slice(asked)).toEqual(['ls-files', 'update-index', 'diff', 'diff-files']);
    // A forged entry is hidden from the real index: the flags are read to tell it from the user's own.
    await forgeIndexEntry(repo.dir, 'weight.mjs', 'export const WEIGHT = 10;\n');
    expect(await git.exposeForgedEntries!()).toEqual(['weight.mjs']);
    expect((await subcommands()).slice(asked + 4)).toEqual([
      'ls-files',
      'update-index',
      'diff',
      'diff-files',
      'ls-files',
      'update-index',
    ]);
  });

  it('statusPorcelain parses spaces, newlines-free odd names, renames and untracked files', async () => {
    const repo = await createTempRepo({ 'old name.txt': 'a\n', 'keep.txt': 'k\n', 'gone.txt': 'g\n' });
    repo.run('mv', 'old name.txt', 'new name.txt');
    await repo.write('keep.txt', 'changed\n');
    await repo.remove('gone.txt');
    await repo.write('dir with space/ünïcode "q".txt', 'u\n');
    const status = await repo.git.statusPorcelain();
    expect(status).toEqual(
      expect.arrayContaining([
        { index: 'R', worktree: ' ', path: 'new name.txt', origPath: 'old name.txt' },
        { index: ' ', worktree: 'M', path: 'keep.txt' },
        { index: ' ', worktree: 'D', path: 'gone.txt' },
        { index: '?', worktree: '?', path: 'dir with space/ünïcode "q".txt' },
      ]),
    );
    expect(status).toHaveLength(4);
  });

  it('changedSince lists committed, staged, unstaged and untracked changes, but not ignored files', async () => {
    const repo = await createTempRepo({
      'a.txt': 'a\n',
      'b.txt': 'b\n',
      'c.txt': 'c\n',
      '.gitignore': '*.log\n',
    });
    const base = repo.head();
    await repo.write('a.txt', 'committed\n');
    repo.commitAll('doer 1');
    await repo.write('b.txt', 'staged\n');
    repo.run('add', 'b.txt');
    await repo.remove('c.txt');
    await repo.write('new file.txt', 'untracked\n');
    await repo.write('debug.log', 'ignored\n');
    expect(await repo.git.changedSince(base)).toEqual([
      { path: 'a.txt', change: 'modified' },
      { path: 'b.txt', change: 'modified' },
      { path: 'c.txt', change: 'deleted' },
      { path: 'new file.txt', change: 'untracked' },
    ]);
  });

  it('changedSince shows a rename as a deletion and an addition', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'x\n' });
    const base = repo.head();
    repo.run('mv', 'src/a.ts', 'src/b.ts');
    repo.commitAll('rename');
    expect(await repo.git.changedSince(base)).toEqual([
      { path: 'src/a.ts', change: 'deleted' },
      { path: 'src/b.ts', change: 'added' },
    ]);
  });

  it('pathsInCommit treats names literally', async () => {
    const repo = await createTempRepo({ 'src/*.ts': 'star\n', 'src/a.ts': 'a\n' });
    const found = await repo.git.pathsInCommit(repo.head(), ['src/*.ts', 'src/missing.ts']);
    expect([...found]).toEqual(['src/*.ts']);
  });

  it('isMergeOrRebaseInProgress sees a conflicted merge', async () => {
    const repo = await createTempRepo({ 'f.txt': 'base\n' });
    expect(await repo.git.isMergeOrRebaseInProgress()).toBe(false);
    repo.run('checkout', '-q', '-b', 'other');
    await repo.write('f.txt', 'other\n');
    repo.commitAll('other');
    repo.run('checkout', '-q', 'main');
    await repo.write('f.txt', 'main\n');
    repo.commitAll('main');
    expect(() => repo.run('merge', '-q', 'other')).toThrow();
    expect(await repo.git.isMergeOrRebaseInProgress()).toBe(true);
  });

  it('isMergeOrRebaseInProgress in a linked worktree sees its own merge, not the main tree’s', async () => {
    const repo = await createTempRepo({ 'f.txt': 'base\n' });
    repo.run('checkout', '-q', '-b', 'other');
    await repo.write('f.txt', 'other\n');
    repo.commitAll('other');
    repo.run('checkout', '-q', 'main');
    const base = await mkdtemp(join(tmpdir(), 'forge-merge-'));
    onTestFinished(() => rm(base, { recursive: true, force: true }));
    const path = join(base, 'linked');
    await repo.git.worktreeAdd(path, { branch: 'side' });
    await writeFile(join(path, 'f.txt'), 'side\n');
    const linked = createGit({ cwd: path, env: repo.env });
    await linked.commitPaths(['f.txt'], 'side');
    expect(await linked.isMergeOrRebaseInProgress()).toBe(false);
    expect(() => repo.run('-C', path, 'merge', '-q', 'other')).toThrow();
    expect(await linked.isMergeOrRebaseInProgress()).toBe(true);
    expect(await repo.git.isMergeOrRebaseInProgress()).toBe(false);
  });

  it('topLevel, gitDir and commonDir: from a subdirectory and from a linked worktree, absolute', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n' });
    const top = repo.run('rev-parse', '--show-toplevel').trim();
    const inSrc = createGit({ cwd: join(repo.dir, 'src'), env: repo.env });
    expect([await inSrc.topLevel(), await inSrc.gitDir(), await inSrc.commonDir()]).toEqual([
      top,
      join(top, '.git'),
      join(top, '.git'),
    ]);
    const base = await mkdtemp(join(tmpdir(), 'forge-layout-'));
    onTestFinished(() => rm(base, { recursive: true, force: true }));
    await repo.git.worktreeAdd(join(base, 'linked'), { branch: 'side' });
    const linked = createGit({ cwd: join(base, 'linked', 'src'), env: repo.env });
    expect(await linked.topLevel()).toBe(await realpath(join(base, 'linked')));
    expect(await linked.gitDir()).toBe(join(top, '.git', 'worktrees', 'linked'));
    expect(await linked.commonDir()).toBe(join(top, '.git'));
  });

  it('created for a subdirectory, it still speaks in paths from the top of the working tree', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n', 'docs/x.md': 'x\n' });
    const base = repo.head();
    await repo.write('src/a.ts', 'changed\n');
    await repo.write('docs/new.md', 'new\n');
    const git = createGit({ cwd: join(repo.dir, 'src'), env: repo.env });
    expect(await git.changedSince(base)).toEqual([
      { path: 'docs/new.md', change: 'untracked' },
      { path: 'src/a.ts', change: 'modified' },
    ]);
    expect((await git.statusPorcelain()).map((e) => e.path).sort()).toEqual(['docs/new.md', 'src/a.ts']);
    expect(await git.commitPaths(['docs/new.md'], 'add docs')).toBe(repo.head());
    await git.removePaths(['docs/new.md']);
    expect(await repo.exists('docs/new.md')).toBe(false);
  });

  it('outside a repository every call is a GitError', async () => {
    const repo = await createTempRepo();
    await repo.remove('.git');
    await expect(repo.git.statusPorcelain()).rejects.toThrow(/git rev-parse failed .*not a git repository/);
  });

  it('a failing command is a GitError with git’s message', async () => {
    const repo = await createTempRepo();
    await expect(repo.git.changedSince('not-a-commit')).rejects.toThrow(GitError);
    await expect(repo.git.changedSince('not-a-commit')).rejects.toThrow(/git diff failed in .*not-a-commit/);
  });

  it('a git whose output has no end is stopped, and the GitError says why', async () => {
    const repo = await createTempRepo();
    // Stands in for a git gone wrong: it prints for ever, whatever it is asked.
    await repo.write('endless-git', '#!/bin/sh\nexec yes\n');
    await chmod(join(repo.dir, 'endless-git'), 0o755);
    const git = createGit({ cwd: repo.dir, env: repo.env, gitBinary: join(repo.dir, 'endless-git') });
    await expect(git.statusPorcelain()).rejects.toThrow(
      /^git rev-parse failed in .*: its stdout passed \d+ MiB, more than the [\d,]+ characters kept of it/,
    );
  });

  it('a missing git binary is a GitError', async () => {
    const repo = await createTempRepo();
    const git = createGit({ cwd: repo.dir, env: repo.env, gitBinary: 'forge-no-such-git' });
    await expect(git.headSha()).rejects.toThrow(/could not run git/);
  });
});

describe('git: writing', () => {
  it('commitPaths commits exactly the given paths and leaves other staged work staged', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n', 'notes.md': 'n\n' });
    await repo.write('src/a.ts', 'a2\n');
    await repo.write('src/new.ts', 'new\n');
    await repo.write('notes.md', 'user staged\n');
    repo.run('add', 'notes.md');
    const sha = await repo.git.commitPaths(['src/a.ts', 'src/new.ts'], 'autoresearch iter 1: x');
    expect(sha).toBe(repo.head());
    expect(repo.run('show', '--name-only', '--format=%s', 'HEAD').trim().split('\n')).toEqual([
      'autoresearch iter 1: x',
      '',
      'src/a.ts',
      'src/new.ts',
    ]);
    expect(repo.run('diff', '--cached', '--name-only').trim()).toBe('notes.md');
  });

  it('commitPaths records deletions and returns undefined when nothing changed', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n' });
    expect(await repo.git.commitPaths(['src/a.ts'], 'nothing')).toBeUndefined();
    expect(await repo.git.commitPaths([], 'nothing')).toBeUndefined();
    await repo.remove('src/a.ts');
    expect(await repo.git.commitPaths(['src/a.ts', 'src/never-existed.ts'], 'delete')).toBe(repo.head());
    expect(repo.run('ls-files').trim()).toBe('');
  });

  it('removePaths drops files from index and disk and prunes directories it emptied', async () => {
    const repo = await createTempRepo({ 'src/keep.ts': 'k\n', 'src/deep/er/x.ts': 'x\n' });
    await repo.write('src/deep/er/untracked.ts', 'u\n');
    await repo.git.removePaths(['src/deep/er/x.ts', 'src/deep/er/untracked.ts']);
    expect(await repo.exists('src/deep')).toBe(false);
    expect(await repo.exists('src/keep.ts')).toBe(true);
    expect(repo.run('ls-files').trim()).toBe('src/keep.ts');
  });

  it('saveFiles and writeSavedFiles round-trip bytes exactly, modes and absence included', async () => {
    const repo = await createTempRepo();
    const binary = Uint8Array.from([0, 255, 10, 13, 128, 1, 2]);
    await repo.write('bin.dat', binary);
    await repo.write('run.sh', '#!/bin/sh\n');
    await writeFile(join(repo.dir, 'run.sh'), '#!/bin/sh\necho hi\n');
    await chmod(join(repo.dir, 'run.sh'), 0o755);
    const saved = await repo.git.saveFiles(['bin.dat', 'run.sh', 'absent.txt']);
    expect(saved.get('absent.txt')?.blob).toBeNull();
    expect(saved.get('run.sh')?.mode).toBe('100755');

    await repo.write('bin.dat', 'clobbered');
    await repo.remove('run.sh');
    await repo.write('absent.txt', 'now present');
    await repo.git.writeSavedFiles(saved);
    expect(new Uint8Array(await readFile(join(repo.dir, 'bin.dat')))).toEqual(binary);
    expect(await repo.read('run.sh')).toBe('#!/bin/sh\necho hi\n');
    expect((await stat(join(repo.dir, 'run.sh'))).mode & 0o111).not.toBe(0);
    expect(await repo.exists('absent.txt')).toBe(false);
  });

  it('worktreeAdd and worktreeList', async () => {
    const repo = await createTempRepo();
    const path = join(repo.dir, '..', `${repo.dir.split('/').at(-1) ?? 'x'}-wt`);
    await repo.git.worktreeAdd(path, { branch: 'loop/bd-1', base: 'main' });
    try {
      const list = await repo.git.worktreeList();
      expect(list).toHaveLength(2);
      expect(list[1]).toMatchObject({
        branch: 'refs/heads/loop/bd-1',
        head: repo.head(),
        bare: false,
        detached: false,
      });
      expect(await readFile(join(path, 'README.md'), 'utf8')).toBe('hello\n');
    } finally {
      repo.run('worktree', 'remove', '--force', path);
    }
  });
});

describe('git: trees, the index and HEAD (judge isolation)', () => {
  it('listTree lists files, modes, symlinks and literal paths of a commit', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n', 'src/*.ts': 'star\n', 'docs/x.md': 'x\n' });
    await writeFile(join(repo.dir, 'run.sh'), '#!/bin/sh\n');
    await chmod(join(repo.dir, 'run.sh'), 0o755);
    await symlink('/etc/hostname', join(repo.dir, 'src', 'link'));
    const head = repo.commitAll('more');
    const entries = await repo.git.listTree(head, ['src/*.ts', 'run.sh', 'src/link', 'missing']);
    expect(entries.map((e) => [e.path, e.mode, e.type])).toEqual([
      ['run.sh', '100755', 'blob'],
      ['src/*.ts', '100644', 'blob'],
      ['src/link', '120000', 'blob'],
    ]);
    expect((await repo.git.listTree(head, [''])).map((e) => e.path)).toEqual([
      'docs/x.md',
      'run.sh',
      'src/*.ts',
      'src/a.ts',
      'src/link',
    ]);
    expect((await repo.git.listTree(head, ['./docs/'])).map((e) => e.path)).toEqual(['docs/x.md']);
  });

  it('listTree takes more paths than one command line holds (a doer that made 100,000 files)', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n', 'gen/b.txt': 'b\n', 'gen/c.txt': 'c\n' });
    const head = repo.head();
    // 20,000 paths of 120 bytes, 2.4 MB of arguments: over Linux's limit (E2BIG) when passed at once.
    const many = Array.from({ length: 20_000 }, (_, k) => `gen/${String(k).padStart(116, '0')}`);
    const listed = await repo.git.listTree(head, [...many, 'gen/c.txt', 'gen/', 'a.txt']);
    // Each entry once, in path order, though found by more than one piece.
    expect(listed.map((e) => e.path)).toEqual(['a.txt', 'gen/b.txt', 'gen/c.txt']);
  });

  it('exportFiles writes a commit’s bytes and modes elsewhere, leaving index and tree alone', async () => {
    const repo = await createTempRepo();
    const binary = Uint8Array.from([0, 255, 10, 13, 128]);
    await repo.write('deep/bin.dat', binary);
    await writeFile(join(repo.dir, 'run.sh'), '#!/bin/sh\n');
    await chmod(join(repo.dir, 'run.sh'), 0o755);
    const head = repo.commitAll('files');
    await repo.write('deep/bin.dat', 'uncommitted');
    const status = repo.run('status', '--porcelain');
    const out = await mkdtemp(join(tmpdir(), 'forge-export-'));
    onTestFinished(() => rm(out, { recursive: true, force: true }));
    await repo.git.exportFiles(await repo.git.listTree(head, ['deep', 'run.sh']), out);
    expect(new Uint8Array(await readFile(join(out, 'deep', 'bin.dat')))).toEqual(binary);
    expect((await stat(join(out, 'run.sh'))).mode & 0o111).not.toBe(0);
    expect(await readdir(out)).toEqual(['deep', 'run.sh']);
    expect(repo.run('status', '--porcelain')).toBe(status);
  });

  it('writeIndexTree and readIndexTree put back what was staged', async () => {
    const repo = await createTempRepo({ 'a.md': 'a\n' });
    await repo.write('a.md', 'staged\n');
    repo.run('add', 'a.md');
    const tree = await repo.git.writeIndexTree();
    const status = repo.run('status', '--porcelain');
    repo.run('reset', '-q');
    await repo.write('new.md', 'n\n');
    repo.run('add', 'new.md');
    await repo.git.readIndexTree(tree);
    await repo.remove('new.md');
    expect(repo.run('status', '--porcelain')).toBe(status);
  });

  it('detachHead moves HEAD off its branch and leaves the branch where it was', async () => {
    const repo = await createTempRepo();
    const first = repo.head();
    const second = repo.commitAll('second');
    await repo.git.detachHead(first);
    expect(repo.head()).toBe(first);
    expect(repo.run('rev-parse', 'main').trim()).toBe(second);
    expect(() => repo.run('symbolic-ref', '-q', 'HEAD')).toThrow();
  });
});

describe('git: what Forge’s own git calls run', () => {
  it('runs no hook and no fsmonitor command from the repository or the user’s config', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const base = await mkdtemp(join(tmpdir(), 'forge-git-marks-'));
    onTestFinished(() => rm(base, { recursive: true, force: true }));
    const marks = join(base, 'marks');
    await mkdir(marks);
    const tattler = async (path: string, name: string, exit: number) => {
      await writeFile(path, `#!/bin/sh\necho "$*" >> '${join(marks, name)}'\nexit ${exit}\n`);
      await chmod(path, 0o755);
    };
    const hooks = join(repo.dir, '.git', 'hooks');
    for (const hook of ['post-index-change', 'reference-transaction', 'post-checkout', 'post-commit']) {
      await tattler(join(hooks, hook), hook, 0);
    }
    await tattler(join(base, 'fsmonitor.sh'), 'fsmonitor', 1);
    repo.run('config', 'core.fsmonitor', join(base, 'fsmonitor.sh'));
    // git itself runs them: the repository is armed.
    repo.run('status', '--porcelain');
    repo.run('update-index', '--refresh');
    expect(await readdir(marks)).toEqual(expect.arrayContaining(['fsmonitor', 'post-index-change']));
    await rm(marks, { recursive: true, force: true });
    await mkdir(marks);

    await repo.write('a.txt', 'changed\n');
    await repo.write('b.txt', 'new\n');
    await repo.git.statusPorcelain();
    await repo.git.changedSince(repo.head());
    const sha = await repo.git.commitPaths(['a.txt', 'b.txt'], 'forge commits');
    expect(sha).toBeDefined();
    await repo.git.checkoutPathsFrom(repo.head(), ['a.txt']);
    await repo.git.resetSoft(`${sha!}~1`);
    await repo.git.worktreeAdd(join(base, 'worktree'), { branch: 'side' });
    expect(await readdir(marks), 'hooks or fsmonitor Forge’s git calls ran').toEqual([]);
  });
});

describe('git: which git Forge runs', () => {
  it('never one a PATH entry inside the working tree holds (direnv’s node_modules/.bin), nor a relative one', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const marks = join(repo.dir, '..', `${repo.dir.split('/').pop() ?? 'repo'}-fake-git-ran`);
    onTestFinished(() => rm(marks, { force: true }));
    // An agent's `git`: says the tree is clean and HEAD is anything it likes.
    const fake = `#!/bin/sh\necho "$*" >> '${marks}'\necho 0000000000000000000000000000000000000000\n`;
    for (const dir of ['node_modules/.bin', 'bin']) {
      await repo.write(`${dir}/git`, fake);
      await chmod(join(repo.dir, dir, 'git'), 0o755);
    }
    const env = {
      ...repo.env,
      PATH: [join(repo.dir, 'node_modules', '.bin'), 'bin', repo.env.PATH ?? ''].join(':'),
    };
    const git = createGit({ cwd: join(repo.dir, 'node_modules'), env });
    expect(await git.headSha()).toBe(repo.head());
    await repo.write('a.txt', 'changed\n');
    expect(await git.statusPorcelain()).toEqual(
      expect.arrayContaining([{ index: ' ', worktree: 'M', path: 'a.txt' }]),
    );
    expect(await readFile(marks, 'utf8').catch(() => ''), 'the fake git ran').toBe('');
  });
});
