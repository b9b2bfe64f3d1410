// Git for attempts run off the main tree: a worktree per attempt inside .git (never in `git status`),
// the attempt's changes committed on its branch with trailers naming the bead, and clean-up after.
import { join, relative, resolve, sep } from 'node:path';
import { createGitCommand, type GitCommand } from '../infra/git-command.js';
import { EnvironmentError } from '../infra/errors.js';
import { isForgeStatePath } from '../infra/forge-state.js';
import { mapConcurrent } from '../infra/concurrent.js';
import { removePath } from '../infra/fs-ops.js';
import { parseNameStatus, splitNul } from '../infra/git-parse.js';
import { runSerialised } from '../infra/serial-queue.js';
import {
  overFileCount,
  overLimits,
  regularFileSizes,
  type OverLimit,
  type SizeLimits,
} from '../infra/size-limits.js';
import type { Integration } from '../loop/integration.js';

/** The trailer lines that tie a commit to its bead and attempt (the duplicate check reads them). */
export const BEAD_TRAILER = 'Forge-Bead';
export const ATTEMPT_TRAILER = 'Forge-Attempt';

const safe = (text: string): string => text.replace(/[^A-Za-z0-9._-]/g, '_');

/** How often a worktree add is tried before its failure stands. */
const ADD_TRIES = 3;

export class AttemptGit {
  private readonly command: GitCommand;
  private common: Promise<string> | undefined;

  constructor(
    private readonly repo: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.command = createGitCommand({ cwd: repo, env });
  }

  /** The directory under the common git dir that holds `epicId`'s attempt worktrees. */
  async epicDir(epicId: string): Promise<string> {
    return join(await this.commonDir(), 'forge', 'worktrees', safe(epicId));
  }

  private commonDir(): Promise<string> {
    this.common ??= this.command
      .git(['rev-parse', '--path-format=absolute', '--git-common-dir'])
      .then((r) => r.stdout.trim());
    return this.common;
  }

  /** Where the run's cwd sits inside the tree ('' at its top), so an attempt runs in the same spot. */
  async subdir(): Promise<string> {
    const path = relative(await this.command.root(), resolve(this.repo));
    return path.split(sep).join('/');
  }

  /** A fresh worktree at `path` on `branch`, (re)created at `base`; a leftover one is replaced. */
  async addWorktree(path: string, branch: string, base: string): Promise<void> {
    await this.oneAtATime(async () => {
      await this.removeUnqueued(path);
      const argv = ['worktree', 'add', '--quiet', '--force', '-B', branch, '--', path, base];
      // Another process's worktree command (a second runner, a worker on the same mirror) can race
      // this one on `.git/worktrees`; that loss is brief, so the add is tried again before it fails.
      for (let tries = 1; ; tries += 1) {
        const added = await this.command.git(argv, { ok: tries < ADD_TRIES ? [0, 128] : [0] });
        if (added.exitCode === 0) return;
        await this.removeUnqueued(path);
        await new Promise((resolve) => setTimeout(resolve, 50 * tries));
      }
    });
  }

  /** Removes the worktree at `path` (and git's record of it); nothing there is fine. */
  removeWorktree(path: string): Promise<void> {
    return this.oneAtATime(() => this.removeUnqueued(path));
  }

  private async removeUnqueued(path: string): Promise<void> {
    // `worktree remove` also forgets a worktree whose folder is gone. Never `worktree prune`: it drops
    // every entry that looks unfinished, another attempt's half-made worktree among them.
    const removed = await this.command.git(['worktree', 'remove', '--force', '--force', '--', path], {
      ok: [0, 128],
    });
    // Not a worktree git knows (already gone, or a folder a crash left before git recorded it).
    if (removed.exitCode !== 0) await removePath(path, { recursive: true });
  }

  /**
   * Runs `work` after every other worktree change of this repository in this process. git's worktree
   * commands are not safe beside each other: a remove drops `.git/worktrees` when it looks empty, just
   * as an add is about to make its entry there, and the add fails.
   */
  private async oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    return runSerialised(`worktrees:${await this.commonDir()}`, work);
  }

  /**
   * Commits everything the attempt changed in `worktree` (Forge's own files and what passes `limits`
   * left out) on its branch, with the bead and attempt as trailers; `sha` undefined when it changed
   * nothing. Files past the limits go before git reads them: the worktree is the attempt's alone.
   */
  async commitAttempt(
    worktree: string,
    message: string,
    trailers: { beadId: string; attemptId: string },
    /** The limits, and the commit the attempt started from (what it changed is measured against it). */
    sizes?: { limits: SizeLimits; base: string },
  ): Promise<{ sha: string | undefined; tooLarge: OverLimit[] }> {
    const at = createGitCommand({ cwd: worktree, env: this.env });
    const tooLarge = sizes === undefined ? [] : await dropOverLimits(at, worktree, sizes.limits, sizes.base);
    const sha = await this.commitAll(at, message, trailers);
    return { sha, tooLarge };
  }

  private async commitAll(
    at: GitCommand,
    message: string,
    trailers: { beadId: string; attemptId: string },
  ): Promise<string | undefined> {
    await at.git(['add', '--all', '--', '.']);
    // Forge's own state never goes into an attempt's commit, at the top or in the folder the run is in.
    const added = (await at.git(['diff', '--cached', '--name-only', '-z'])).stdout.split('\0');
    const forge = added.filter((path) => path !== '' && isForgeStatePath(path));
    if (forge.length > 0) {
      await at.git(['reset', '--quiet', '--pathspec-from-file=-', '--pathspec-file-nul'], {
        input: forge.join('\0'),
        ok: [0, 1],
      });
    }
    const staged = await at.git(['diff', '--cached', '--quiet'], { ok: [0, 1] });
    if (staged.exitCode === 0) return undefined;
    const body = `${message}\n\n${BEAD_TRAILER}: ${trailers.beadId}\n${ATTEMPT_TRAILER}: ${trailers.attemptId}\n`;
    await at.git(['commit', '--quiet', '--no-verify', '--file=-'], { input: body });
    return (await at.git(['rev-parse', '--verify', 'HEAD^{commit}'])).stdout.trim();
  }

  /** Local branches under `prefix` (a `forge/attempts/<epic>/` namespace). */
  async branchesUnder(prefix: string): Promise<string[]> {
    const { stdout } = await this.command.git([
      'for-each-ref',
      '--format=%(refname:short)',
      `refs/heads/${prefix}`,
    ]);
    return stdout.split('\n').filter((line) => line !== '');
  }

  async deleteBranch(branch: string): Promise<void> {
    await this.command.git(['branch', '--quiet', '-D', '--', branch], { ok: [0, 1] });
  }

  /** Worktrees git knows of that live under `dir`. */
  async worktreesUnder(dir: string): Promise<string[]> {
    const { stdout } = await this.command.git(['worktree', 'list', '--porcelain']);
    return stdout
      .split('\n')
      .filter((line) => line.startsWith('worktree '))
      .map((line) => line.slice('worktree '.length))
      .filter((path) => path === dir || path.startsWith(`${dir}${sep}`));
  }
}

/** The worktree path of one attempt branch, under the epic's directory. */
export function worktreePathOf(epicDir: string, branch: string): string {
  return join(epicDir, safe(branch.split('/').pop() ?? branch));
}

/** The run's own tree as the integration branch of a parallel run: cherry-picks, resets, trailers. */
export function createGitIntegration(repo: string, env: NodeJS.ProcessEnv): Integration {
  const command = createGitCommand({ cwd: repo, env });
  const { git } = command;
  const rev = async (name: string) =>
    (await git(['rev-parse', '--verify', `${name}^{commit}`])).stdout.trim();
  return {
    head: () => rev('HEAD'),
    parentOf: (commit) => rev(`${commit}^`),
    async apply(commit) {
      // The merge is computed without touching the work tree or the index (`merge-tree --write-tree`:
      // the attempt's base is on this branch, so the merge base is that base, as a cherry-pick's
      // would be); only a clean result moves the branch, by fast-forward. A kill at any point leaves
      // no merge or cherry-pick in progress, so the rerun starts without a person.
      const head = await rev('HEAD');
      const merged = await git(['merge-tree', '--write-tree', '--name-only', head, commit], {
        ok: [0, 1, 129],
      });
      if (merged.exitCode === 129) {
        throw new EnvironmentError(
          `--parallel lands results with git merge-tree --write-tree, which this git does not know.`,
          { hint: 'Install git 2.38 or newer, or run without --parallel.' },
        );
      }
      const [tree = '', ...rest] = merged.stdout.split('\n');
      if (merged.exitCode !== 0) {
        const blank = rest.indexOf('');
        const files = rest.slice(0, blank === -1 ? rest.length : blank).filter((line) => line !== '');
        const detail = (blank === -1 ? '' : rest.slice(blank + 1).join('\n')).trim();
        return {
          ok: false,
          conflict:
            files.length > 0
              ? `Merge conflict in ${files.join(', ')} against the integration branch.\n\n${detail}`
              : `The result could not be applied to the integration branch.\n\n${detail}`,
        };
      }
      // One commit per bead on a linear branch, as a serial --auto-commit run leaves it, with the
      // attempt's message and trailers and its author.
      const { stdout: meta } = await git(['log', '-1', '--format=%an%x00%ae%x00%ad%x00%B', commit]);
      const [name = '', email = '', date = '', ...body] = meta.split('\0');
      const made = await git(['commit-tree', tree.trim(), '-p', head, '-F', '-'], {
        input: body.join('\0'),
        env: { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_AUTHOR_DATE: date },
      });
      const sha = made.stdout.trim();
      await git(['merge', '--ff-only', '--quiet', sha]);
      return { ok: true, sha };
    },
    async undo(commit) {
      await git(['reset', '--quiet', '--hard', commit]);
    },
    async landed(beadId, runIds) {
      const bead = `${BEAD_TRAILER}: ${beadId}`;
      const attemptsOfRuns = runIds.map((runId) => `${ATTEMPT_TRAILER}: ${runId}.${beadId}.`);
      const ofRun = (line: string): boolean =>
        attemptsOfRuns.some((prefix) => line.startsWith(prefix) && /^\d+$/.test(line.slice(prefix.length)));
      const { stdout } = await git([
        'log',
        '--format=%H%x00%B%x1e',
        '--fixed-strings',
        `--grep=${bead}`,
        'HEAD',
      ]);
      for (const record of stdout.split('\x1e')) {
        const [sha, body] = record.trim().split('\0');
        if (sha === undefined || body === undefined) continue;
        const lines = body.split('\n').map((line) => line.trim());
        if (lines.includes(bead) && lines.some(ofRun)) return sha;
      }
      return undefined;
    },
  };
}

/**
 * Takes out of `worktree` each file changed since `base` (in the tree, or in a commit the agent made)
 * that passes `limits`: one `base` has goes back to it, one it lacks is removed.
 */
async function dropOverLimits(
  at: GitCommand,
  worktree: string,
  limits: SizeLimits,
  base: string,
): Promise<OverLimit[]> {
  const diff = parseNameStatus(
    (await at.git(['diff', '--name-status', '--no-renames', '-z', base, '--'])).stdout,
  );
  const inBase = new Set([...diff].filter(([, change]) => change !== 'added').map(([path]) => path));
  const changed = [...diff].filter(([, change]) => change !== 'deleted').map(([path]) => path);
  changed.push(...splitNul((await at.git(['ls-files', '--others', '--exclude-standard', '-z'])).stdout));
  const deleted = [...diff].filter(([, change]) => change === 'deleted').map(([path]) => path);
  const tooMany = overFileCount([...changed, ...deleted], limits);
  const over = tooMany.length > 0 ? tooMany : overLimits(await regularFileSizes(worktree, changed), limits);
  const back = over.filter(({ path }) => inBase.has(path)).map(({ path }) => path);
  if (back.length > 0) {
    await at.git(['checkout', base, '--pathspec-from-file=-', '--pathspec-file-nul'], {
      input: back.join('\0'),
    });
  }
  await mapConcurrent(
    over.filter(({ path }) => !inBase.has(path)),
    ({ path }) => removePath(join(worktree, path)),
  );
  return over;
}
