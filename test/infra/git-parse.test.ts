// git's machine output, parsed without a repository: one table per parser, odd names included.
import { describe, expect, it } from 'vitest';
import {
  comparePaths,
  indexInfoEntry,
  indexInfoOfStaged,
  indexInfoRemoval,
  nulTerminated,
  parseHeadState,
  parseLsTree,
  parseNameStatus,
  parseStatusV2,
  parseWorktreeList,
  splitLines,
  splitNul,
  stagedEntryPath,
  treePathspecs,
} from '../../src/infra/git-parse.js';

describe('parseHeadState', () => {
  const sha = 'a'.repeat(40);
  it('reads the commit and the branch, a detached HEAD, a ref outside refs/heads and a SHA-256 commit', () => {
    expect(parseHeadState(`${sha}\nrefs/heads/feat/x\n`)).toEqual({ sha, branch: 'feat/x' });
    expect(parseHeadState(`${sha}\nHEAD\n`)).toEqual({ sha, branch: undefined });
    expect(parseHeadState(`${sha}\nrefs/remotes/origin/main\n`)).toEqual({
      sha,
      branch: 'refs/remotes/origin/main',
    });
    expect(parseHeadState(`${'b'.repeat(64)}\nrefs/heads/main\n`)).toEqual({
      sha: 'b'.repeat(64),
      branch: 'main',
    });
  });

  it('refuses an answer without a commit or a name', () => {
    expect(() => parseHeadState('HEAD^{commit}\n')).toThrow(/rev-parse answered/);
    expect(() => parseHeadState(`${sha}\n`)).toThrow(/rev-parse answered/);
  });
});

describe('parseStatusV2', () => {
  const sha = 'a'.repeat(40);
  const blob = 'b'.repeat(40);
  const modes = '100644 100644 100644';
  const head = `# branch.oid ${sha}\0# branch.head main\0`;
  it.each([
    { name: 'nothing', stdout: head, entries: [] },
    {
      name: 'a modified file, its unchanged side a space as in v1',
      stdout: `${head}1 .M N... ${modes} ${blob} ${blob} a.txt\0`,
      entries: [{ index: ' ', worktree: 'M', path: 'a.txt' }],
    },
    {
      name: 'a rename takes its source from the next field; untracked and ignored as ?? and !!',
      stdout: `${head}2 R. N... ${modes} ${blob} ${blob} R100 new name.txt\0old name.txt\0? x\0! build/\0`,
      entries: [
        { index: 'R', worktree: ' ', path: 'new name.txt', origPath: 'old name.txt' },
        { index: '?', worktree: '?', path: 'x' },
        { index: '!', worktree: '!', path: 'build/' },
      ],
    },
    {
      name: 'an unmerged file',
      stdout: `${head}u UU N... 100644 100644 100644 100644 ${blob} ${blob} ${blob} f\0`,
      entries: [{ index: 'U', worktree: 'U', path: 'f' }],
    },
    {
      name: 'spaces, quotes, arrows, unicode and a name that looks like an entry stay literal',
      stdout: `${head}? dir with space/ünï "q" -> x.txt\0? M  b\x001 A. N... ${modes} ${blob} ${blob} 1 .M x\0`,
      entries: [
        { index: '?', worktree: '?', path: 'dir with space/ünï "q" -> x.txt' },
        { index: '?', worktree: '?', path: 'M  b' },
        { index: 'A', worktree: ' ', path: '1 .M x' },
      ],
    },
  ])('$name', ({ stdout, entries }) => {
    expect(parseStatusV2(stdout)).toEqual({ head: { sha, branch: 'main' }, entries });
  });

  it('reads HEAD from the header: a branch with a slash, detached, no commit yet, a SHA-256 commit', () => {
    expect(parseStatusV2(`# branch.oid ${sha}\0# branch.head feat/x\0`).head).toEqual({
      sha,
      branch: 'feat/x',
    });
    expect(parseStatusV2(`# branch.oid ${sha}\0# branch.head (detached)\0`).head).toEqual({
      sha,
      branch: undefined,
    });
    expect(parseStatusV2('# branch.oid (initial)\0# branch.head main\0').head).toEqual({
      sha: undefined,
      branch: 'main',
    });
    const long = 'c'.repeat(64);
    expect(parseStatusV2(`# branch.oid ${long}\0# branch.head main\0`).head.sha).toBe(long);
  });

  it('refuses a commit that is no hash and an entry short of its fields', () => {
    expect(() => parseStatusV2('# branch.oid HEAD\0')).toThrow(/for HEAD's commit/);
    expect(() => parseStatusV2(`${head}1 .M N... x\0`)).toThrow(/an entry it should not/);
  });
});

describe('parseNameStatus', () => {
  it.each([
    { stdout: '', changes: [] },
    { stdout: 'A\0new\0', changes: [['new', 'added']] },
    { stdout: 'D\0gone\0', changes: [['gone', 'deleted']] },
    { stdout: 'T\0link\0', changes: [['link', 'type-changed']] },
    {
      stdout: 'M\0a\0M\0D\0',
      changes: [
        ['a', 'modified'],
        ['D', 'modified'],
      ],
    },
    { stdout: 'U\0conflict\0', changes: [['conflict', 'modified']] },
    // A trailing letter without its path (cut output) is not a change.
    { stdout: 'A\0x\0D', changes: [['x', 'added']] },
  ])('$stdout', ({ stdout, changes }) => {
    expect([...parseNameStatus(stdout)]).toEqual(changes);
  });
});

describe('parseLsTree', () => {
  it.each([
    { stdout: '', entries: [] },
    {
      stdout: [
        '100644 blob e69de29\ta b.txt',
        '120000 blob 1f2e3d4\tlink',
        '160000 commit abc1234\tsub',
        '',
      ].join('\0'),
      entries: [
        { mode: '100644', type: 'blob', object: 'e69de29', path: 'a b.txt' },
        { mode: '120000', type: 'blob', object: '1f2e3d4', path: 'link' },
        { mode: '160000', type: 'commit', object: 'abc1234', path: 'sub' },
      ],
    },
    {
      stdout: '100755 blob 0123abc\tdir/with\ttab\0',
      entries: [{ mode: '100755', type: 'blob', object: '0123abc', path: 'dir/with\ttab' }],
    },
  ])('$stdout', ({ stdout, entries }) => {
    expect(parseLsTree(stdout)).toEqual(entries);
  });
});

describe('parseWorktreeList', () => {
  it.each([
    { name: 'none', stdout: '', entries: [] },
    {
      name: 'main on a branch and a detached one',
      stdout:
        'worktree /r\0HEAD aaa\0branch refs/heads/main\0\0worktree /r/.forge/w x\0HEAD bbb\0detached\0\0',
      entries: [
        { path: '/r', head: 'aaa', branch: 'refs/heads/main', bare: false, detached: false },
        { path: '/r/.forge/w x', head: 'bbb', branch: null, bare: false, detached: true },
      ],
    },
    {
      name: 'a bare repository, a last record without its empty field, and unknown keys',
      stdout: 'worktree /bare.git\0bare\0\0worktree /w\0HEAD ccc\0locked why\0prunable',
      entries: [
        { path: '/bare.git', head: null, branch: null, bare: true, detached: false },
        { path: '/w', head: 'ccc', branch: null, bare: false, detached: false },
      ],
    },
    {
      name: 'fields before any worktree line are ignored',
      stdout: 'HEAD zzz\0\0worktree /w\0HEAD ddd\0\0',
      entries: [{ path: '/w', head: 'ddd', branch: null, bare: false, detached: false }],
    },
  ])('$name', ({ stdout, entries }) => {
    expect(parseWorktreeList(stdout)).toEqual(entries);
  });
});

describe('treePathspecs', () => {
  it.each([
    { paths: [], specs: undefined },
    { paths: ['.'], specs: undefined },
    { paths: ['src/', ''], specs: undefined },
    { paths: ['./src/', 'a//b/./c', 'docs'], specs: ['src', 'a/b/c', 'docs'] },
  ])('$paths', ({ paths, specs }) => {
    expect(treePathspecs(paths)).toEqual(specs);
  });
});

describe('index-info and stdin builders', () => {
  it.each([
    { entry: '100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\tsp ace.txt', path: 'sp ace.txt' },
    { entry: '100755 0123456789012345678901234567890123456789 0\tbin/run\tx', path: 'bin/run\tx' },
  ])('an ls-files -s entry: path $path, and as index-info without its stage', ({ entry, path }) => {
    expect(stagedEntryPath(entry)).toBe(path);
    const [mode, object] = entry.split(' ');
    expect(indexInfoOfStaged(entry)).toBe(`${mode} ${object}\t${path}\0`);
  });

  it('a removal has mode 0 and an all-zero object as long as the repository’s ids', () => {
    expect(indexInfoRemoval('a b', 4)).toBe('0 0000\ta b\0');
    expect(indexInfoEntry('100644', 'abc', 'x/y')).toBe('100644 abc\tx/y\0');
  });

  it('NUL-terminated and -separated text round-trips, empty fields dropped', () => {
    expect(nulTerminated(['a', 'b c'])).toBe('a\0b c\0');
    expect(nulTerminated([])).toBe('');
    expect(splitNul('a\0\0b c\0')).toEqual(['a', 'b c']);
    expect(splitLines('x\n\ny\n')).toEqual(['x', 'y']);
  });

  it('paths sort in byte order, as git sorts them', () => {
    expect(['b', 'a', 'B', 'a/b', 'a-b', 'é'].sort(comparePaths)).toEqual(['B', 'a', 'a-b', 'a/b', 'b', 'é']);
  });
});
