// Running git for a Git: argv at the top of the working tree, an env that keeps output stable and
// nothing prompting, exit codes turned into GitError, and long path lists cut into chunks.
import { createHash, type Hash } from 'node:crypto';
import { dirname } from 'node:path';
import { AppError, ExitCode } from './errors.js';
import { fifoError } from './fifo-wait.js';
import { userGitFiles } from './git-control.js';
import { MAX_FIFOS_REMOVED, noteReads, takeAwayFifo, type GitFolders } from './git-fifo.js';
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
 * through the metric's helper module). The commit-graph is such a record too, of each commit's tree and
 * parents, and git takes them from it without reading the commit (loose-objects.ts): a forged one hid
 * the same change (seen: 5 kept as 45).
 */
export const GIT_HARDENING: readonly string[] = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.commitGraph=false',
  '-c',
  'core.multiPackIndex=false',
  '--no-replace-objects',
];

export interface GitCallOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  /** Exit codes that are not failures (default: only 0). */
  ok?: number[];
  /** Each chunk of stdout as the bytes it is (paths that are not UTF-8); the result's stdout is then empty. */
  onStdoutBytes?: (chunk: Buffer) => void;
}

/** Where a repository is: its top, and its own folders (git-fifo.ts). */
export interface RepoLayout extends GitFolders {
  top: string;
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
  /** Throws ForgedObjectError unless each object's stored content hashes to its name. */
  checkObjects: (objects: ReadonlyMap<string, string>) => Promise<void>;
}

/**
 * Objects in the repository whose stored content does not hash to their name. Git reads an object by
 * its name and never hashes it again, so one rewritten in `.git/objects` (a loose object's file, or a
 * pack of its own naming an object it does not hold) is checked out as it was rewritten. A doer that
 * rewrote the object of the metric's script, beside the script itself, had the script "put back" as
 * the forged one, with `git status` clean (seen).
 */
export class ForgedObjectError extends AppError {
  readonly objects: readonly { object: string; path: string; found: string }[];

  constructor(objects: readonly { object: string; path: string; found: string }[]) {
    const named = objects
      .slice(0, 3)
      .map((o) => {
        const what = o.object.startsWith('pack-') ? o.object.slice(0, 17) : `object ${o.object.slice(0, 12)}`;
        return `${o.path} (${what} ${o.found})`;
      })
      .join(', ');
    const more = objects.length > 3 ? `, and ${objects.length - 3} more` : '';
    super(
      `The git object store holds objects that are not what they are named, so no file was written from them: ${named}${more}. An agent rewrote them in .git/objects.`,
      {
        exitCode: ExitCode.environment,
        hint: '`git fsck --full` lists every such object: remove their files from .git/objects and restore them from a clone or a backup, then run again.',
      },
    );
    this.objects = objects;
    this.name = 'ForgedObjectError';
  }
}

/**
 * What went wrong, from git's stderr: its `fatal:`/`error:` line, which says it (git explains an
 * index.lock left behind in six lines more, whose last three alone read "are terminated then try
 * again"), else the last lines.
 */
export function gitFailureDetail(stderr: string): string {
  const lines = stderr.trim().split('\n');
  const said = lines.find((line) => /^(?:fatal|error): /.test(line));
  return said ?? lines.slice(-3).join(' ');
}

export function createGitCommand(options: GitOptions): GitCommand {
  const cwd = options.cwd;
  const file =
    options.gitBinary === undefined
      ? outsideTree('git', cwd, options.env)
      : Promise.resolve(options.gitBinary);
  // Paths are file names, never patterns; nothing may prompt; our parsing needs stable output.
  const env = { ...options.env, GIT_LITERAL_PATHSPECS: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  /** The user's and the system's git config, read as the repository's files are (noteReads). */
  const userFiles = userGitFiles(options.env);
  /** The repository's own folders once asked (layout): where a FIFO is git's to take away. */
  let folders: RepoLayout | undefined;

  /** HEAD's index for the git folder `gitDir`, written to `indexFile` (a FIFO had the index's place). */
  const buildIndex = async (gitDir: string, indexFile: string): Promise<boolean> => {
    const made = await runShortProcess(
      { file: await file, args: [...GIT_HARDENING, `--git-dir=${gitDir}`, 'read-tree', 'HEAD'] },
      { cwd, env: { ...env, GIT_INDEX_FILE: indexFile } },
    );
    return made.exitCode === 0 && made.fifoWait === undefined && made.spawnError === undefined;
  };

  async function run(dir: string, args: readonly string[], extra: GitCallOptions) {
    const binary = await file;
    // Streamed stdout is handed on once the attempt that made it is the one kept: what a call stopped
    // on a FIFO printed before it would otherwise reach the caller twice.
    let streamed: Buffer[] = [];
    const call = () => {
      streamed = [];
      return runShortProcess(
        { file: binary, args: [...GIT_HARDENING, ...args] },
        {
          cwd: dir,
          env: { ...env, ...extra.env },
          input: extra.input,
          onStdoutBytes: extra.onStdoutBytes === undefined ? undefined : (chunk) => streamed.push(chunk),
        },
      );
    };
    let result: ProcessResult = await call();
    // A FIFO where git reads a file is taken away and the call made again (git-fifo.ts); where nothing
    // can take its place, the call stops and names it.
    for (let removed = 0; result.fifoWait !== undefined && removed < MAX_FIFOS_REMOVED; removed += 1) {
      if (!(await takeAwayFifo(result.fifoWait, folders, buildIndex))) break;
      result = await call();
    }
    if (result.spawnError !== undefined) {
      throw new GitError(`could not run git: ${result.spawnError}`);
    }
    if (result.fifoWait !== undefined) throw fifoError(`git ${args[0] ?? ''}`, dir, result.fifoWait);
    for (const chunk of streamed) extra.onStdoutBytes?.(chunk);
    if (result.outputError !== undefined) {
      throw new GitError(`git ${args[0] ?? ''} failed in ${cwd}: ${result.outputError}`, result.stderr);
    }
    if (!(extra.ok ?? [0]).includes(result.exitCode ?? -1)) {
      const detail = gitFailureDetail(result.stderr);
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
      (r) => (folders = parseLayout(r.stdout)),
      (error: unknown) => {
        asked = undefined; // not a repository yet: ask again next time
        throw error;
      },
    ));
  const root = async () => (await layout()).top;

  // Once the top is known, git never looks above it for a repository: where its `.git` went (a linked
  // worktree deleted while a run went on, then written into again), every call climbed to the repository
  // around the tree and worked on that one (seen: the main checkout switched to the loop's branch).
  const git = async (args: readonly string[], extra: GitCallOptions = {}) => {
    const top = await root();
    const ceiling = [dirname(top), options.env.GIT_CEILING_DIRECTORIES].filter(
      (dir) => dir !== undefined && dir !== '',
    );
    const result = await run(top, args, {
      ...extra,
      env: { GIT_CEILING_DIRECTORIES: ceiling.join(':'), ...extra.env },
    });
    noteReads(await layout(), userFiles);
    return result;
  };

  async function forChunks(paths: readonly string[], run: (chunk: string[]) => Promise<void>): Promise<void> {
    for (let i = 0; i < paths.length; i += PATHS_PER_CALL) await run(paths.slice(i, i + PATHS_PER_CALL));
  }
  async function checkObjects(objects: ReadonlyMap<string, string>): Promise<void> {
    if (objects.size === 0) return;
    const found = await hashStoredObjects(await file, await root(), env, [...objects.keys()]);
    const forged = [...objects]
      .filter(([object]) => found.get(object) !== object)
      .map(([object, path]) => {
        const hash = found.get(object);
        return { object, path, found: hash === undefined ? 'is missing' : `hashes to ${hash.slice(0, 12)}` };
      });
    if (forged.length > 0) throw new ForgedObjectError(forged);
  }

  return { git, root, layout, forChunks, checkObjects };
}

/**
 * Each object's name → the hash of what `git cat-file --batch` reads for it (its type, size and bytes,
 * as git names objects: SHA-1, or SHA-256 for a 64-digit name); absent when git has no such object.
 * The content streams through the hash, so a large object is never held whole.
 */
async function hashStoredObjects(
  file: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  objects: readonly string[],
): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  let header = Buffer.alloc(0);
  let body: { object: string; left: number; hash: Hash } | undefined;
  let skipNewline = false;
  const read = (chunk: Buffer): void => {
    let at = 0;
    while (at < chunk.length) {
      if (skipNewline) {
        skipNewline = false;
        at += 1;
      } else if (body !== undefined) {
        const take = Math.min(body.left, chunk.length - at);
        body.hash.update(chunk.subarray(at, at + take));
        body.left -= take;
        at += take;
        if (body.left === 0) {
          hashes.set(body.object, body.hash.digest('hex'));
          body = undefined;
          skipNewline = true;
        }
      } else {
        const end = chunk.indexOf(10, at);
        if (end === -1) {
          header = Buffer.concat([header, chunk.subarray(at)]);
          return;
        }
        const line = Buffer.concat([header, chunk.subarray(at, end)]).toString('latin1');
        header = Buffer.alloc(0);
        at = end + 1;
        // `<name> <type> <size>` and its bytes, or `<name> missing` (or `ambiguous`) alone.
        const [object = '', type, size] = line.split(' ');
        if (size === undefined) continue;
        const hash = createHash(object.length === 64 ? 'sha256' : 'sha1').update(`${type} ${size}\0`);
        body = { object, left: Number(size), hash };
        if (body.left === 0) {
          hashes.set(object, hash.digest('hex'));
          body = undefined;
          skipNewline = true;
        }
      }
    }
  };
  const result = await runShortProcess(
    { file, args: [...GIT_HARDENING, 'cat-file', '--batch'] },
    { cwd, env, input: objects.map((object) => `${object}\n`).join(''), onStdoutBytes: read },
  );
  if (result.spawnError !== undefined) throw new GitError(`could not run git: ${result.spawnError}`);
  if (result.fifoWait !== undefined) throw fifoError('git cat-file', cwd, result.fifoWait);
  if (result.outputError !== undefined) {
    throw new GitError(`git cat-file failed in ${cwd}: ${result.outputError}`, result.stderr);
  }
  if (result.exitCode !== 0) {
    throw new GitError(`git cat-file failed in ${cwd}: ${result.stderr.trim()}`, result.stderr);
  }
  return hashes;
}

/** The three lines of `rev-parse --show-toplevel --git-dir --git-common-dir`. */
function parseLayout(stdout: string): RepoLayout {
  const [top, gitDir, commonDir] = stdout.split('\n').map((line) => line.trim());
  if (!top || !gitDir || !commonDir) {
    throw new GitError(`git rev-parse did not name the working tree and its git directories: ${stdout}`);
  }
  return { top, gitDir, commonDir };
}
