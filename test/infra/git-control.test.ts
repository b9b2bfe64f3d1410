// Which files decide what git runs: every config level, hooks/ and info/'s, for a worktree too; and
// the markers of a git operation under way.
import { describe, expect, it } from 'vitest';
import { gitControlPaths } from '../../src/infra/git-control.js';

// What git leaves in a working tree's git dir while an operation waits on a person.
const OPERATION_FILES = [
  'MERGE_HEAD',
  'MERGE_MSG',
  'MERGE_MODE',
  'MERGE_RR',
  'AUTO_MERGE',
  'CHERRY_PICK_HEAD',
  'REVERT_HEAD',
  'REBASE_HEAD',
  'BISECT_LOG',
  'BISECT_START',
  'BISECT_TERMS',
  'BISECT_NAMES',
  'BISECT_EXPECTED_REV',
  'BISECT_ANCESTORS_OK',
  'BISECT_RUN',
  'BISECT_HEAD',
  'BISECT_FIRST_PARENT',
];
const OPERATION_DIRS = ['rebase-merge', 'rebase-apply', 'sequencer', 'refs/bisect'];

describe('gitControlPaths', () => {
  it('covers the repository’s config, hooks and info, the user’s and the system’s config', () => {
    const paths = gitControlPaths('/r/.git', '/r/.git', { HOME: '/home/u' });
    expect(paths.dirs).toEqual([
      '/r/.git/hooks',
      '/r/.git/refs/replace',
      ...OPERATION_DIRS.map((name) => `/r/.git/${name}`),
    ]);
    expect(paths.files).toEqual([
      '/r/.git/config',
      '/r/.git/config.worktree',
      '/home/u/.gitconfig',
      '/home/u/.config/git/config',
      '/home/u/.config/git/attributes',
      '/home/u/.config/git/ignore',
      '/etc/gitconfig',
      '/r/.git/info/attributes',
      '/r/.git/info/exclude',
      '/r/.git/info/grafts',
      '/r/.git/info/sparse-checkout',
      '/r/.git/objects/info/alternates',
      '/r/.git/objects/info/http-alternates',
      '/r/.git/commondir',
      '/r/.git/shallow',
      ...OPERATION_FILES.map((name) => `/r/.git/${name}`),
    ]);
    // Not info/refs, which every repack rewrites for dumb-HTTP clients and nothing else reads.
    expect(paths.files).not.toContain('/r/.git/info/refs');
  });

  it('covers the markers of a merge, rebase, cherry-pick, revert or bisect under way, in the worktree’s own git dir', () => {
    const paths = gitControlPaths('/r/.git/worktrees/w', '/r/.git', {});
    expect(paths.markers).toEqual(
      [...OPERATION_FILES, ...OPERATION_DIRS].map((name) => `/r/.git/worktrees/w/${name}`),
    );
    expect(paths.files).toEqual(
      expect.arrayContaining(OPERATION_FILES.map((name) => `/r/.git/worktrees/w/${name}`)),
    );
    expect(paths.dirs).toEqual(
      expect.arrayContaining(OPERATION_DIRS.map((name) => `/r/.git/worktrees/w/${name}`)),
    );
    expect(paths.markers.filter((path) => !path.startsWith('/r/.git/worktrees/w/'))).toEqual([]);
  });

  it('adds a linked worktree’s own directory, and follows XDG_CONFIG_HOME and GIT_CONFIG_GLOBAL/SYSTEM', () => {
    const paths = gitControlPaths('/r/.git/worktrees/w', '/r/.git', {
      HOME: '/home/u',
      XDG_CONFIG_HOME: '/xdg',
      GIT_CONFIG_GLOBAL: '/elsewhere/global',
      GIT_CONFIG_SYSTEM: '/elsewhere/system',
    });
    expect(paths.files).toContain('/r/.git/worktrees/w/info/sparse-checkout');
    expect(paths.files).toEqual(
      expect.arrayContaining([
        '/r/.git/worktrees/w/commondir',
        '/r/.git/worktrees/w/gitdir',
        '/r/.git/shallow',
      ]),
    );
    expect(paths.files).toEqual(
      expect.arrayContaining([
        '/r/.git/worktrees/w/config.worktree',
        '/xdg/git/config',
        '/elsewhere/global',
        '/elsewhere/system',
      ]),
    );
    expect(paths.files).not.toContain('/home/u/.config/git/config');
  });

  it('takes GIT_CONFIG_GLOBAL=/dev/null for no config, never a file to put back', () => {
    // Put back as a file, the machine's /dev/null was removed (seen in a test run).
    const paths = gitControlPaths('/r/.git', '/r/.git', { GIT_CONFIG_GLOBAL: '/dev/null' });
    expect(paths.files.filter((path) => path.startsWith('/dev/'))).toEqual([]);
  });

  it('without a HOME, still the repository’s and the system’s', () => {
    const paths = gitControlPaths('/r/.git', '/r/.git', {});
    expect(paths.files).toEqual([
      '/r/.git/config',
      '/r/.git/config.worktree',
      '/etc/gitconfig',
      ...['attributes', 'exclude', 'grafts', 'sparse-checkout'].map((name) => `/r/.git/info/${name}`),
      '/r/.git/objects/info/alternates',
      '/r/.git/objects/info/http-alternates',
      '/r/.git/commondir',
      '/r/.git/shallow',
      ...OPERATION_FILES.map((name) => `/r/.git/${name}`),
    ]);
  });
});
