// Linked worktrees and the branches made for them: the calls `--parallel` and population candidates
// make to set up an attempt's tree beside the user's and take it down again.
import { resolve } from 'node:path';
import type { GitCommand } from './git-command.js';
import { parseWorktreeList } from './git-parse.js';
import type { Git } from './git-port.js';

type Run = GitCommand['git'];

/** Git's methods over linked worktrees, for `createGit`; paths resolve against `cwd`. */
export function worktreeMethods(
  git: Run,
  cwd: string,
): Pick<Git, 'worktreeAdd' | 'worktreeList' | 'worktreeRemove' | 'deleteBranch'> {
  return {
    async worktreeAdd(path, opts = {}) {
      const args = ['worktree', 'add', '--quiet'];
      if (opts.branch !== undefined) args.push('-b', opts.branch);
      args.push('--', resolve(cwd, path));
      if (opts.base !== undefined) args.push(opts.base);
      await git(args);
    },

    async worktreeList() {
      const { stdout } = await git(['worktree', 'list', '--porcelain', '-z']);
      return parseWorktreeList(stdout);
    },

    async worktreeRemove(path) {
      await git(['worktree', 'remove', '--force', '--force', '--', resolve(cwd, path)], { ok: [0, 128] });
      await git(['worktree', 'prune']);
    },

    async deleteBranch(name) {
      await git(['branch', '-D', '--', name], { ok: [0, 1] });
    },
  };
}
