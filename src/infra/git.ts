// A small Git interface over runProcess: argv arrays, an explicit cwd and env, literal pathspecs, -z output.
import { pathExists } from './atomic-file.js';
import { randomBytes } from 'node:crypto';
import { rm, rmdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { AppError, ExitCode } from './errors.js';
import {
  comparePaths,
  indexInfoEntry,
  indexInfoOfStaged,
  indexInfoRemoval,
  nulTerminated as nul,
  parseLsTree,
  parseNameStatus,
  parseStatusPorcelain,
  parseWorktreeList,
  splitLines,
  splitNul,
  stagedEntryPath,
  treePathspecs,
  type ChangedPath,
} from './git-parse.js';
import type { Git, GitOptions, SavedFile } from './git-port.js';
import { runProcess, type ProcessResult } from './process.js';

export type { ChangedPath, FileChange, StatusEntry, TreeEntry, WorktreeEntry } from './git-parse.js';
export type { Git, GitOptions, SavedFile } from './git-port.js';

export class GitError extends AppError {
  readonly stderr: string;

  constructor(message: string, stderr = '') {
    super(message, { exitCode: ExitCode.environment });
    this.name = 'GitError';
    this.stderr = stderr;
  }
}

const PATHS_PER_CALL = 500;

interface GitCallOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  /** Exit codes that are not failures (default: only 0). */
  ok?: number[];
}

export function createGit(options: GitOptions): Git {
  const cwd = options.cwd;
  const file = options.gitBinary ?? 'git';
  // Paths are file names, never patterns; nothing may prompt; our parsing needs stable output.
  const env = { ...options.env, GIT_LITERAL_PATHSPECS: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };

  async function run(dir: string, args: readonly string[], extra: GitCallOptions) {
    const result: ProcessResult = await runProcess(
      { file, args },
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

  const api: Git = {
    cwd,

    async headSha() {
      return (await git(['rev-parse', '--verify', 'HEAD^{commit}'])).stdout.trim();
    },

    async resolveCommit(rev) {
      const result = await git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { ok: [0, 1] });
      return result.exitCode === 0 ? result.stdout.trim() : undefined;
    },

    async statusPorcelain() {
      const { stdout } = await git(['status', '--porcelain=v1', '-z', '--untracked-files=all'], {
        env: { GIT_OPTIONAL_LOCKS: '0' },
      });
      return parseStatusPorcelain(stdout);
    },

    async changedSince(base) {
      const { stdout } = await git([
        'diff',
        '--name-status',
        '-z',
        '--no-renames',
        '--ignore-submodules',
        base,
        '--',
      ]);
      const changes = parseNameStatus(stdout);
      const others = await git(['ls-files', '--others', '--exclude-standard', '-z']);
      for (const path of splitNul(others.stdout)) if (!changes.has(path)) changes.set(path, 'untracked');
      return [...changes]
        .map(([path, change]): ChangedPath => ({ path, change }))
        .sort((x, y) => comparePaths(x.path, y.path));
    },

    async pathsInCommit(commit, paths) {
      const found = new Set<string>();
      await forChunks(paths, async (chunk) => {
        const { stdout } = await git([
          'ls-tree',
          '-r',
          '-z',
          '--name-only',
          '--full-tree',
          commit,
          '--',
          ...chunk,
        ]);
        for (const path of splitNul(stdout)) found.add(path);
      });
      return found;
    },

    async checkoutPathsFrom(commit, paths) {
      if (paths.length === 0) return;
      await git(['checkout', '--no-overlay', commit, '--pathspec-from-file=-', '--pathspec-file-nul'], {
        input: nul(paths),
      });
    },

    async removePaths(paths) {
      if (paths.length === 0) return;
      await git(
        ['rm', '-q', '-r', '--cached', '--ignore-unmatch', '--pathspec-from-file=-', '--pathspec-file-nul'],
        {
          input: nul(paths),
        },
      );
      const dir = await root();
      for (const path of paths) {
        const absolute = resolve(dir, path);
        await rm(absolute, { force: true, recursive: true });
        await pruneEmptyParents(dirname(absolute), dir);
      }
    },

    async commitPaths(paths, message) {
      if (paths.length === 0) return undefined;
      // `git add` refuses paths it knows nothing about (gone from disk and index): stage only known ones.
      const known: string[] = [];
      await forChunks(paths, async (chunk) => {
        const { stdout } = await git([
          'ls-files',
          '-z',
          '--cached',
          '--others',
          '--exclude-standard',
          '--',
          ...chunk,
        ]);
        known.push(...splitNul(stdout));
      });
      if (known.length > 0) {
        await git(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], { input: nul(known) });
      }
      const staged: string[] = [];
      const entries: string[] = [];
      await forChunks(paths, async (chunk) => {
        const diff = await git([
          'diff',
          '--cached',
          '--name-only',
          '-z',
          '--no-renames',
          'HEAD',
          '--',
          ...chunk,
        ]);
        staged.push(...splitNul(diff.stdout));
      });
      if (staged.length === 0) return undefined;
      await forChunks(staged, async (chunk) => {
        const { stdout } = await git(['ls-files', '-s', '-z', '--', ...chunk]);
        entries.push(...splitNul(stdout));
      });
      // The commit is built in a throwaway index (HEAD plus exactly these paths as staged), so a user's
      // other staged work stays staged and out of it. `git commit --only` would do the same, but trips
      // over a path that turned from a file into a directory.
      const inIndex = new Set(entries.map(stagedEntryPath));
      const head = await api.headSha();
      const removals = staged
        .filter((path) => !inIndex.has(path))
        .map((path) => indexInfoRemoval(path, head.length));
      const additions = entries.map(indexInfoOfStaged);
      const indexFile = temporaryIndexPath();
      const scratch = { GIT_INDEX_FILE: indexFile };
      try {
        await git(['read-tree', head], { env: scratch });
        await git(['update-index', '-z', '--index-info'], {
          input: [...removals, ...additions].join(''),
          env: scratch,
        });
        const tree = (await git(['write-tree'], { env: scratch })).stdout.trim();
        const commit = (
          await git(['commit-tree', tree, '-p', head, '-F', '-'], { input: message })
        ).stdout.trim();
        const subject = message.split('\n')[0] ?? '';
        await git(['update-ref', '-m', `commit: ${subject}`, 'HEAD', commit, head]);
        return commit;
      } finally {
        await rm(indexFile, { force: true });
      }
    },

    async isMergeOrRebaseInProgress() {
      const markers = ['MERGE_HEAD', 'rebase-merge', 'rebase-apply', 'CHERRY_PICK_HEAD', 'REVERT_HEAD'];
      const { stdout } = await git(['rev-parse', ...markers.flatMap((m) => ['--git-path', m])]);
      for (const path of splitLines(stdout)) {
        if (await pathExists(resolve(await root(), path))) return true;
      }
      return false;
    },

    async saveFiles(paths) {
      const saved = new Map<string, SavedFile>();
      const present: string[] = [];
      const dir = await root();
      for (const path of paths) {
        const info = await stat(join(dir, path)).catch(() => undefined);
        if (info?.isFile()) {
          present.push(path);
          saved.set(path, { blob: null, mode: (info.mode & 0o111) !== 0 ? '100755' : '100644' });
        } else {
          saved.set(path, { blob: null, mode: '100644' });
        }
      }
      if (present.length > 0) {
        const { stdout } = await git(['hash-object', '-w', '--no-filters', '--stdin-paths'], {
          input: `${present.join('\n')}\n`,
        });
        const blobs = stdout.trim().split('\n');
        present.forEach((path, i) => {
          const entry = saved.get(path);
          if (entry !== undefined) entry.blob = blobs[i] ?? null;
        });
      }
      return saved;
    },

    async writeSavedFiles(files) {
      const toWrite = [...files].filter(([, file]) => file.blob !== null);
      const dir = await root();
      for (const [path, file] of files) if (file.blob === null) await rm(join(dir, path), { force: true });
      if (toWrite.length === 0) return;
      // A throwaway index lets checkout-index write the exact bytes (binary-safe) without touching the real one.
      const indexFile = temporaryIndexPath();
      try {
        const info = toWrite.map(([path, file]) => indexInfoEntry(file.mode, file.blob ?? '', path)).join('');
        await git(['update-index', '-z', '--add', '--index-info'], {
          input: info,
          env: { GIT_INDEX_FILE: indexFile },
        });
        await git(['checkout-index', '-f', '-z', '--stdin'], {
          input: nul(toWrite.map(([path]) => path)),
          env: { GIT_INDEX_FILE: indexFile },
        });
      } finally {
        await rm(indexFile, { force: true });
      }
    },

    async listTree(commit, paths) {
      const specs = treePathspecs(paths);
      const { stdout } = await git([
        'ls-tree',
        '-r',
        '-z',
        '--full-tree',
        commit,
        ...(specs === undefined ? [] : ['--', ...specs]),
      ]);
      return parseLsTree(stdout);
    },

    async exportFiles(entries, dir) {
      const refused = entries.find((entry) => entry.mode !== '100644' && entry.mode !== '100755');
      if (refused !== undefined) {
        throw new GitError(`refusing to export ${refused.path}: mode ${refused.mode} is not a regular file`);
      }
      if (entries.length === 0) return;
      // A throwaway index holding only these entries; checkout-index writes them under the prefix.
      const indexFile = temporaryIndexPath();
      try {
        const info = entries.map((entry) => indexInfoEntry(entry.mode, entry.object, entry.path)).join('');
        await git(['update-index', '-z', '--add', '--index-info'], {
          input: info,
          env: { GIT_INDEX_FILE: indexFile },
        });
        await git(['checkout-index', '-z', '--stdin', `--prefix=${resolve(dir)}/`], {
          input: nul(entries.map((entry) => entry.path)),
          env: { GIT_INDEX_FILE: indexFile },
        });
      } finally {
        await rm(indexFile, { force: true });
      }
    },

    async detachHead(commit) {
      await git(['update-ref', '--no-deref', '-m', 'forge: detach HEAD', 'HEAD', commit]);
    },

    async writeIndexTree() {
      return (await git(['write-tree'])).stdout.trim();
    },

    async readIndexTree(tree) {
      await git(['read-tree', tree]);
      // read-tree drops the stat data: refresh it once, or every later status hashes every file.
      await git(['update-index', '-q', '--refresh'], { ok: [0, 1] });
    },

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

    async currentBranch() {
      const result = await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], { ok: [0, 1] });
      return result.exitCode === 0 ? result.stdout.trim() : undefined;
    },

    async isAncestor(ancestor, descendant) {
      const result = await git(['merge-base', '--is-ancestor', ancestor, descendant], { ok: [0, 1] });
      return result.exitCode === 0;
    },

    async diffCommits(from, to) {
      const { stdout } = await git(['diff', '--name-only', '-z', '--no-renames', from, to, '--']);
      return splitNul(stdout).sort(comparePaths);
    },

    async resetSoft(commit) {
      await git(['reset', '--soft', '--quiet', commit]);
    },

    async attachHead(branch) {
      await git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
    },

    async commonDir() {
      const { stdout } = await git(['rev-parse', '--path-format=absolute', '--git-common-dir']);
      return stdout.trim();
    },

    async gitDir() {
      const { stdout } = await git(['rev-parse', '--path-format=absolute', '--git-dir']);
      return stdout.trim();
    },

    async topLevel() {
      return root();
    },

    async subjectsBetween(from, to) {
      const { stdout } = await git(['log', '--format=%s', `${from}..${to}`, '--']);
      return splitLines(stdout);
    },
  };
  return api;
}

function temporaryIndexPath(): string {
  return join(tmpdir(), `forge-index-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** Removes directories that became empty, up to (not including) the repository root. */
async function pruneEmptyParents(dir: string, root: string): Promise<void> {
  let current = dir;
  while (current.startsWith(`${root}/`)) {
    try {
      await rmdir(current);
    } catch {
      return; // not empty, or already gone
    }
    current = dirname(current);
  }
}
