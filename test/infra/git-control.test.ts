// Which files decide what git runs: every config level, hooks/ and info/, for a worktree too.
import { describe, expect, it } from 'vitest';
import { gitControlPaths } from '../../src/infra/git-control.js';

describe('gitControlPaths', () => {
  it('covers the repository’s config, hooks and info, the user’s and the system’s config', () => {
    const paths = gitControlPaths('/r/.git', '/r/.git', { HOME: '/home/u' });
    expect(paths.dirs).toEqual(['/r/.git/hooks', '/r/.git/info', '/r/.git/refs/replace']);
    expect(paths.files).toEqual([
      '/r/.git/config',
      '/r/.git/config.worktree',
      '/home/u/.gitconfig',
      '/home/u/.config/git/config',
      '/home/u/.config/git/attributes',
      '/home/u/.config/git/ignore',
      '/etc/gitconfig',
    ]);
  });

  it('adds a linked worktree’s own directory, and follows XDG_CONFIG_HOME and GIT_CONFIG_GLOBAL/SYSTEM', () => {
    const paths = gitControlPaths('/r/.git/worktrees/w', '/r/.git', {
      HOME: '/home/u',
      XDG_CONFIG_HOME: '/xdg',
      GIT_CONFIG_GLOBAL: '/elsewhere/global',
      GIT_CONFIG_SYSTEM: '/elsewhere/system',
    });
    expect(paths.dirs).toContain('/r/.git/worktrees/w/info');
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

  it('without a HOME, still the repository’s and the system’s', () => {
    const paths = gitControlPaths('/r/.git', '/r/.git', {});
    expect(paths.files).toEqual(['/r/.git/config', '/r/.git/config.worktree', '/etc/gitconfig']);
  });
});
