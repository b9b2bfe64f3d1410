// Running git for a Git: argv at the top of the working tree, an env that keeps output stable and
// nothing prompting, exit codes turned into GitError, and long path lists cut into chunks.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative } from 'node:path';
import { AppError, ExitCode } from './errors.js';
import type { GitOptions } from './git-port.js';
import { runProcess, type ProcessResult } from './process.js';

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
 */
export const GIT_HARDENING: readonly string[] = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
];

export interface GitCallOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  /** Exit codes that are not failures (default: only 0). */
  ok?: number[];
}

/** How a Git runs its commands (shared with git-scratch-index.ts). */
export interface GitCommand {
  /** Runs `git <args>` at the top of the working tree. */
  git: (args: readonly string[], extra?: GitCallOptions) => Promise<ProcessResult>;
  /** Absolute path of the top of the working tree (asked once). */
  root: () => Promise<string>;
  /** Calls `run` with at most PATHS_PER_CALL paths at a time. */
  forChunks: (paths: readonly string[], run: (chunk: string[]) => Promise<void>) => Promise<void>;
}

/** The top of the working tree `dir` is in (the nearest folder holding `.git`), else `dir`. */
function treeRootOf(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return at;
    if (dirname(at) === at) return dir;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const resolvedGits = new Map<string, string>();

/**
 * The git Forge runs in `cwd`: the first on PATH outside the working tree. A PATH entry inside it
 * (direnv's `PATH_add node_modules/.bin`, a relative `./bin`) is a folder any agent at work in the
 * tree can put a `git` into, and Forge's own status, commits and reverts would then run that script
 * and believe what it prints. `git` as it is when PATH holds no other.
 */
export function trustedGit(cwd: string, env: NodeJS.ProcessEnv): string {
  const path = env.PATH ?? '';
  const key = `${cwd}\0${path}`;
  const known = resolvedGits.get(key);
  if (known !== undefined) return known;
  const root = treeRootOf(cwd);
  let found = 'git';
  for (const dir of path.split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const rel = relative(root, dir);
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) continue;
    if (isExecutableFile(join(dir, 'git'))) {
      found = join(dir, 'git');
      break;
    }
  }
  resolvedGits.set(key, found);
  return found;
}

export function createGitCommand(options: GitOptions): GitCommand {
  const cwd = options.cwd;
  const file = options.gitBinary ?? trustedGit(cwd, options.env);
  // Paths are file names, never patterns; nothing may prompt; our parsing needs stable output.
  const env = { ...options.env, GIT_LITERAL_PATHSPECS: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };

  async function run(dir: string, args: readonly string[], extra: GitCallOptions) {
    const result: ProcessResult = await runProcess(
      { file, args: [...GIT_HARDENING, ...args] },
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
  let top: Promise<string> | undefined;
  const root = () =>
    (top ??= run(cwd, ['rev-parse', '--show-toplevel'], {}).then(
      (r) => r.stdout.trim(),
      (error: unknown) => {
        top = undefined; // not a repository yet: ask again next time
        throw error;
      },
    ));
  const git = async (args: readonly string[], extra: GitCallOptions = {}) => run(await root(), args, extra);

  async function forChunks(paths: readonly string[], run: (chunk: string[]) => Promise<void>): Promise<void> {
    for (let i = 0; i < paths.length; i += PATHS_PER_CALL) await run(paths.slice(i, i + PATHS_PER_CALL));
  }
  return { git, root, forChunks };
}
