// Running git for a Git: argv at the top of the working tree, an env that keeps output stable and
// nothing prompting, exit codes turned into GitError, and long path lists cut into chunks.
import { AppError, ExitCode } from './errors.js';
import type { GitOptions } from './git-port.js';
import { outsideTree } from './trusted-path.js';
import type { ProcessResult } from './process.js';
import { runShortProcess } from './short-process.js';

export class GitError extends AppError {
  readonly stderr: string;

  constructor(message: string, stderr = '') {
    super(message, { exitCode: ExitCode.environment });
    this.name = 'GitError';
    this.stderr = stderr;
  }
}

const PATHS_PER_CALL = 500;

/**
 * Settings every Forge git call overrides (the command line outranks every config file): no hook and no
 * fsmonitor command runs on Forge's behalf. An agent with a shell can install either, in `.git/` or in
 * git config under its home, and Forge's own status, add and commit calls after its bead would run the
 * agent's code outside the bead's timeout and process group (seen: post-index-change and
 * reference-transaction hooks and an fsmonitor command all ran from a loop's doer commit). Forge commits
 * with plumbing or --no-verify, so no hook was meant to run in the first place.
 *
 * And git sees objects as they are: `git replace` (refs/replace/, which any agent can write) makes git
 * read one commit as another. A doer that replaced the iteration's base with a copy holding its change
 * to a file outside its scope made that change invisible to the scope check (seen: a worse 5 kept as 45
 * through the metric's helper module).
 */
export const GIT_HARDENING: readonly string[] = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '--no-replace-objects',
];

export interface GitCallOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  /** Exit codes that are not failures (default: only 0). */
  ok?: number[];
}

export interface RepoLayout {
  top: string;
  /** This working tree's git directory (`.git`, or `.git/worktrees/<name>` in a linked worktree). */
  gitDir: string;
  /** The directory every worktree of the repository shares (`.git`). */
  commonDir: string;
}

/** How a Git runs its commands (shared with git-scratch-index.ts). */
export interface GitCommand {
  /** Runs `git <args>` at the top of the working tree. */
  git: (args: readonly string[], extra?: GitCallOptions) => Promise<ProcessResult>;
  /** Absolute path of the top of the working tree (asked once). */
  root: () => Promise<string>;
  /** Where the repository is: its top, its git dir and its common dir, absolute (asked once, with root). */
  layout: () => Promise<RepoLayout>;
  /** Calls `run` with at most PATHS_PER_CALL paths at a time. */
  forChunks: (paths: readonly string[], run: (chunk: string[]) => Promise<void>) => Promise<void>;
}

export function createGitCommand(options: GitOptions): GitCommand {
  const cwd = options.cwd;
  const file =
    options.gitBinary === undefined
      ? outsideTree('git', cwd, options.env)
      : Promise.resolve(options.gitBinary);
  // Paths are file names, never patterns; nothing may prompt; our parsing needs stable output.
  const env = { ...options.env, GIT_LITERAL_PATHSPECS: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };

  async function run(dir: string, args: readonly string[], extra: GitCallOptions) {
    const result: ProcessResult = await runShortProcess(
      { file: await file, args: [...GIT_HARDENING, ...args] },
      {
        cwd: dir,
        env: { ...env, ...extra.env },
        input: extra.input,
      },
    );
    if (result.spawnError !== undefined) {
      throw new GitError(`could not run git: ${result.spawnError}`);
    }
    if (!(extra.ok ?? [0]).includes(result.exitCode ?? -1)) {
      const detail = result.stderr.trim().split('\n').slice(-3).join(' ');
      throw new GitError(
        `git ${args[0] ?? ''} failed in ${cwd}: ${detail || `exit ${String(result.exitCode)}`}`,
        result.stderr,
      );
    }
    return result;
  }

  // Paths in and out of this interface are relative to the top of the working tree, whatever directory
  // `cwd` is, so commands run there (some git commands print paths relative to the current directory).
  // The three places asked in one call: each is stable for the life of a Git, and the runner needs the
  // git and common dirs (its locks, its vault) wherever it needs the top.
  let asked: Promise<RepoLayout> | undefined;
  const layout = () =>
    (asked ??= run(
      cwd,
      ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir'],
      {},
    ).then(
      (r) => parseLayout(r.stdout),
      (error: unknown) => {
        asked = undefined; // not a repository yet: ask again next time
        throw error;
      },
    ));
  const root = async () => (await layout()).top;
  const git = async (args: readonly string[], extra: GitCallOptions = {}) => run(await root(), args, extra);

  async function forChunks(paths: readonly string[], run: (chunk: string[]) => Promise<void>): Promise<void> {
    for (let i = 0; i < paths.length; i += PATHS_PER_CALL) await run(paths.slice(i, i + PATHS_PER_CALL));
  }
  return { git, root, layout, forChunks };
}

/** The three lines of `rev-parse --show-toplevel --git-dir --git-common-dir`. */
function parseLayout(stdout: string): RepoLayout {
  const [top, gitDir, commonDir] = stdout.split('\n').map((line) => line.trim());
  if (!top || !gitDir || !commonDir) {
    throw new GitError(`git rev-parse did not name the working tree and its git directories: ${stdout}`);
  }
  return { top, gitDir, commonDir };
}
