// A small Git interface over runProcess: argv arrays, an explicit cwd and env, literal pathspecs, -z output.
import { pathExists } from './atomic-file.js';
import { randomBytes } from 'node:crypto';
import { rm, rmdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { AppError, ExitCode } from './errors.js';
import { runProcess, type ProcessResult } from './process.js';

export interface GitOptions {
  /** The working tree every command runs in. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The git executable (default `git`, found on env.PATH). */
  gitBinary?: string;
}

/** One entry of `git status --porcelain=v1 -z`: X (index) and Y (working tree) status letters. */
export interface StatusEntry {
  index: string;
  worktree: string;
  path: string;
  /** The source of a rename or copy. */
  origPath?: string;
}

export type FileChange = 'added' | 'modified' | 'deleted' | 'type-changed' | 'untracked';

export interface ChangedPath {
  path: string;
  change: FileChange;
}

export interface WorktreeEntry {
  path: string;
  head: string | null;
  /** `refs/heads/…`, or null when detached or bare. */
  branch: string | null;
  bare: boolean;
  detached: boolean;
}

/** Content of a working-tree file saved in the object database (null: the file did not exist). */
export interface SavedFile {
  blob: string | null;
  mode: '100644' | '100755';
}

/** One entry of `git ls-tree -r`: a file (mode 100644/100755), a symlink (120000) or a submodule (160000). */
export interface TreeEntry {
  mode: string;
  type: string;
  object: string;
  path: string;
}

/** Paths given to and returned by a Git are relative to the top of its working tree. */
export interface Git {
  /** The directory it was created for (any directory inside the working tree). */
  readonly cwd: string;
  headSha(): Promise<string>;
  /** The commit a revision names, or undefined when it names none. */
  resolveCommit(rev: string): Promise<string | undefined>;
  statusPorcelain(): Promise<StatusEntry[]>;
  /** Everything that differs from `base`: committed since, staged, unstaged, and untracked (not ignored). */
  changedSince(base: string): Promise<ChangedPath[]>;
  /** Which of `paths` exist as files in `commit`. */
  pathsInCommit(commit: string, paths: readonly string[]): Promise<Set<string>>;
  /** Sets index and working tree of `paths` to their content in `commit` (they must exist there). */
  checkoutPathsFrom(commit: string, paths: readonly string[]): Promise<void>;
  /** Removes `paths` from the index and the working tree, and directories left empty by that. */
  removePaths(paths: readonly string[]): Promise<void>;
  /** Stages and commits exactly `paths` (other staged work is left staged); undefined when nothing changed. */
  commitPaths(paths: readonly string[], message: string): Promise<string | undefined>;
  isMergeOrRebaseInProgress(): Promise<boolean>;
  /** Saves the current content of `paths` as blobs, so it can be written back after a restore. */
  saveFiles(paths: readonly string[]): Promise<Map<string, SavedFile>>;
  /** Writes saved content back to the working tree (or deletes the file when it had none); index untouched. */
  writeSavedFiles(files: ReadonlyMap<string, SavedFile>): Promise<void>;
  /** Every entry under `paths` in `commit`, recursively (an empty path, or none: the whole tree). */
  listTree(commit: string, paths: readonly string[]): Promise<TreeEntry[]>;
  /**
   * Writes regular-file entries (modes 100644/100755) from the object database under `dir`, an absolute
   * directory anywhere, at their paths; refuses symlinks and submodules. The index is untouched.
   */
  exportFiles(entries: readonly TreeEntry[], dir: string): Promise<void>;
  /** Detaches HEAD at `commit`, leaving index, working tree and every branch as they are. */
  detachHead(commit: string): Promise<void>;
  /** The index written as a tree object; fails while it holds unmerged entries. */
  writeIndexTree(): Promise<string>;
  /** Replaces the index with the content of `tree`; the working tree is untouched. */
  readIndexTree(tree: string): Promise<void>;
  worktreeAdd(path: string, options?: { branch?: string; base?: string }): Promise<void>;
  worktreeList(): Promise<WorktreeEntry[]>;
  // ---- where HEAD points (the loop's branch and history checks) ----
  /** The branch HEAD is on (`main`), or undefined when HEAD is detached. */
  currentBranch(): Promise<string | undefined>;
  /** True when `ancestor` is `descendant` or one of its ancestors. */
  isAncestor(ancestor: string, descendant: string): Promise<boolean>;
  /** Paths whose content differs between two commits. */
  diffCommits(from: string, to: string): Promise<string[]>;
  /** Points the current branch at `commit`, leaving index and working tree as they are. */
  resetSoft(commit: string): Promise<void>;
  /** Puts HEAD back on `branch` without touching index or working tree (`git symbolic-ref`). */
  attachHead(branch: string): Promise<void>;
  /** Absolute path of the repository's common git directory (shared by all its worktrees). */
  commonDir(): Promise<string>;
  /** Absolute path of this working tree's own git directory (per worktree). */
  gitDir(): Promise<string>;
  /** Absolute path of the top of this working tree. */
  topLevel(): Promise<string>;
  /** Subjects of the commits in `from..to`, newest first. */
  subjectsBetween(from: string, to: string): Promise<string[]>;
}

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
        ...(extra.input === undefined ? {} : { input: extra.input }),
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

  const nul = (paths: readonly string[]) => paths.map((p) => `${p}\0`).join('');
  const splitNul = (text: string) => text.split('\0').filter((part) => part !== '');

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
      const fields = stdout.split('\0');
      const entries: StatusEntry[] = [];
      for (let i = 0; i < fields.length; i++) {
        const field = fields[i] ?? '';
        if (field.length < 4) continue;
        const entry: StatusEntry = {
          index: field.charAt(0),
          worktree: field.charAt(1),
          path: field.slice(3),
        };
        if (entry.index === 'R' || entry.index === 'C') entry.origPath = fields[++i] ?? '';
        entries.push(entry);
      }
      return entries;
    },

    async changedSince(base) {
      const changes = new Map<string, FileChange>();
      const { stdout } = await git([
        'diff',
        '--name-status',
        '-z',
        '--no-renames',
        '--ignore-submodules',
        base,
        '--',
      ]);
      const fields = splitNul(stdout);
      for (let i = 0; i + 1 < fields.length; i += 2) {
        const letter = (fields[i] ?? '').charAt(0);
        const change: FileChange =
          letter === 'A'
            ? 'added'
            : letter === 'D'
              ? 'deleted'
              : letter === 'T'
                ? 'type-changed'
                : 'modified';
        changes.set(fields[i + 1] ?? '', change);
      }
      const others = await git(['ls-files', '--others', '--exclude-standard', '-z']);
      for (const path of splitNul(others.stdout)) if (!changes.has(path)) changes.set(path, 'untracked');
      return [...changes].map(([path, change]) => ({ path, change })).sort((a, b) => compare(a.path, b.path));
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
      const inIndex = new Set(entries.map((entry) => entry.slice(entry.indexOf('\t') + 1)));
      const head = await api.headSha();
      const removals = staged
        .filter((path) => !inIndex.has(path))
        .map((path) => `0 ${'0'.repeat(head.length)}\t${path}\0`);
      const additions = entries.map((entry) => `${entry.replace(/ \d\t/, '\t')}\0`);
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
      for (const path of stdout.split('\n').filter((line) => line !== '')) {
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
        const info = toWrite.map(([path, file]) => `${file.mode} ${file.blob ?? ''}\t${path}\0`).join('');
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
      const specs = paths.map((path) =>
        path
          .split('/')
          .filter((part) => part !== '' && part !== '.')
          .join('/'),
      );
      const whole = specs.length === 0 || specs.includes('');
      const { stdout } = await git([
        'ls-tree',
        '-r',
        '-z',
        '--full-tree',
        commit,
        ...(whole ? [] : ['--', ...specs]),
      ]);
      return splitNul(stdout).map((line) => {
        const tab = line.indexOf('\t');
        const [mode = '', type = '', object = ''] = line.slice(0, tab).split(' ');
        return { mode, type, object, path: line.slice(tab + 1) };
      });
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
        const info = entries.map((entry) => `${entry.mode} ${entry.object}\t${entry.path}\0`).join('');
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
      const entries: WorktreeEntry[] = [];
      let current: WorktreeEntry | undefined;
      for (const field of stdout.split('\0')) {
        if (field === '') {
          if (current !== undefined) entries.push(current);
          current = undefined;
          continue;
        }
        const space = field.indexOf(' ');
        const key = space === -1 ? field : field.slice(0, space);
        const value = space === -1 ? '' : field.slice(space + 1);
        if (key === 'worktree')
          current = { path: value, head: null, branch: null, bare: false, detached: false };
        else if (current === undefined) continue;
        else if (key === 'HEAD') current.head = value;
        else if (key === 'branch') current.branch = value;
        else if (key === 'bare') current.bare = true;
        else if (key === 'detached') current.detached = true;
      }
      if (current !== undefined) entries.push(current);
      return entries;
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
      return splitNul(stdout).sort(compare);
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
      return stdout.split('\n').filter((line) => line !== '');
    },
  };
  return api;
}

function temporaryIndexPath(): string {
  return join(tmpdir(), `forge-index-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** Byte order, like git's own path order (localeCompare would differ between machines). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
