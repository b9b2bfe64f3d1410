// The Git port over git itself (git-command.ts runs it): argv arrays, literal pathspecs, -z output.
// Commits and file writes that go through a throwaway index live in git-scratch-index.ts.
import { rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathExists } from './atomic-file.js';
import { mapConcurrent } from './concurrent.js';
import {
  comparePaths,
  nulTerminated as nul,
  parseLsTree,
  parseHeadState,
  parseNameStatus,
  parseStatusV2,
  splitLines,
  splitNul,
  stagedEntryPath,
  treePathspecs,
  type ChangedPath,
  type TreeEntry,
} from './git-parse.js';
import { createGitCommand } from './git-command.js';
import { markOf, SAVED_MAX_BYTES } from './file-marks.js';
import { refMethods } from './git-refs.js';
import { worktreeMethods } from './git-worktrees.js';
import type { Git, GitOptions, IndexFlags, SavedFile } from './git-port.js';
import { commitExactly, exportFiles, temporaryIndexPath, writeSavedFiles } from './git-scratch-index.js';

export type {
  ChangedPath,
  FileChange,
  HeadState,
  StatusEntry,
  TreeEntry,
  WorktreeEntry,
} from './git-parse.js';
export type { Git, GitOptions, IndexFlags, SavedFile } from './git-port.js';

export { GitError } from './git-command.js';

export function createGit(options: GitOptions): Git {
  const command = createGitCommand(options);
  const { git, root, forChunks } = command;
  const cwd = options.cwd;

  async function indexFlags(): Promise<Map<string, IndexFlags>> {
    // `-v` tags each entry: a lowercase letter is assume-unchanged, S (or s) skip-worktree.
    const { stdout } = await git(['ls-files', '-v', '-z']);
    const flags = new Map<string, IndexFlags>();
    for (const entry of splitNul(stdout)) {
      const tag = entry.charAt(0);
      const skipWorktree = tag === 'S' || tag === 's';
      const assumeUnchanged = tag !== tag.toUpperCase();
      if (skipWorktree || assumeUnchanged) flags.set(entry.slice(2), { skipWorktree, assumeUnchanged });
    }
    return flags;
  }

  // One call for the tree's status and where HEAD is (`--no-ahead-behind`: no walk to the upstream).
  const status = async () => {
    const { stdout } = await git(
      ['status', '--porcelain=v2', '-z', '--branch', '--no-ahead-behind', '--untracked-files=all'],
      { env: { GIT_OPTIONAL_LOCKS: '0' } },
    );
    return parseStatusV2(stdout);
  };
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
      return (await status()).entries;
    },

    async statusWithHead() {
      const { head, entries } = await status();
      // With no commit yet, or detached (or on a branch named `(detached)`): asked the usual way.
      const sha = head.sha;
      if (sha === undefined || head.branch === undefined) return { head: await api.headState(), entries };
      return { head: { sha, branch: head.branch }, entries };
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

    async untrackedBytes(paths) {
      if (paths.length === 0) return [];
      const chunks: Buffer[] = [];
      await git(['ls-files', '-z', '--others', '--directory', '--exclude-standard', '--', ...paths], {
        onStdoutBytes: (chunk) => chunks.push(chunk),
      });
      return splitNulBytes(Buffer.concat(chunks));
    },

    async ignoredPaths() {
      const { stdout } = await git([
        'ls-files',
        '--others',
        '--ignored',
        '--exclude-standard',
        '--directory',
        '-z',
      ]);
      return splitNul(stdout);
    },

    indexFlags,

    async exposeForgedEntries() {
      // A throwaway index with the same entries and no stat data: git must hash every file to compare
      // it, where the real index lets matching stat data vouch for the content.
      const { stdout: staged } = await git(['ls-files', '--stage', '-z']);
      const indexFile = temporaryIndexPath();
      const scratch = { GIT_INDEX_FILE: indexFile };
      let differ: string[];
      try {
        await git(['update-index', '-z', '--index-info'], { input: staged, env: scratch });
        // `git diff`, not `diff-files`: it hashes each file whose stat data differs and lists only those
        // whose content does, which took `update-index --refresh` and then `diff-files` (a git call
        // fewer, four times an iteration). Its refresh is asked for, whatever the repository's config says.
        const diff = ['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', '--ignore-submodules'];
        differ = splitNul(
          (await git(['-c', 'diff.autoRefreshIndex=true', ...diff], { env: scratch })).stdout,
        );
      } finally {
        await rm(indexFile, { force: true });
      }
      if (differ.length === 0) return [];
      // What the real index shows changed too is an honest change, not a forged entry.
      const seen = new Set(
        splitNul((await git(['diff-files', '--name-only', '-z', '--ignore-submodules'])).stdout),
      );
      const hidden = differ.filter((path) => !seen.has(path));
      if (hidden.length === 0) return [];
      // A flagged entry is passed over on purpose (the user's own; those an agent set are set back first).
      const flagged = await indexFlags();
      const forged = new Set(hidden.filter((path) => !flagged.has(path)));
      if (forged.size === 0) return [];
      // Each entry written again as it is (mode, blob, stage) but with no stat data: from here on every
      // git call hashes the file, and sees what it holds.
      const entries = splitNul(staged).filter((entry) => forged.has(stagedEntryPath(entry)));
      await git(['update-index', '-z', '--index-info'], { input: nul(entries) });
      return [...forged].sort(comparePaths);
    },

    async setIndexFlags(flags) {
      // One flag per call: update-index applies only one of --[no-]assume-unchanged and
      // --[no-]skip-worktree to a path when both are given (seen, git 2.39).
      const groups = new Map<string, string[]>();
      for (const [path, { skipWorktree, assumeUnchanged }] of flags) {
        for (const option of [
          skipWorktree ? '--skip-worktree' : '--no-skip-worktree',
          assumeUnchanged ? '--assume-unchanged' : '--no-assume-unchanged',
        ])
          groups.set(option, [...(groups.get(option) ?? []), path]);
      }
      for (const [option, paths] of groups) {
        await forChunks(paths, async (chunk) => {
          await git(['update-index', option, '--', ...chunk]);
        });
      }
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
      // What is written must be what the commit names: each blob is hashed as it is stored first.
      const blobs = new Map<string, string>();
      await forChunks(paths, async (chunk) => {
        const { stdout } = await git(['ls-tree', '-r', '-z', '--full-tree', commit, '--', ...chunk]);
        for (const entry of parseLsTree(stdout))
          if (entry.type === 'blob') blobs.set(entry.object, entry.path);
      });
      await command.checkObjects(blobs);
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
      const absolute = paths.map((path) => resolve(dir, path));
      await mapConcurrent(absolute, (path) => rm(path, { force: true, recursive: true }));
      // Each folder once, the deepest first, so a parent is tried after its children have gone.
      const parents = [...new Set(absolute.map((path) => dirname(path)))].sort((a, b) => b.length - a.length);
      for (const parent of parents) await pruneEmptyParents(parent, dir);
    },

    async commitPaths(paths, message) {
      return commitExactly(command, paths, message, () => api.headSha());
    },

    async isMergeOrRebaseInProgress() {
      // Each marker is this worktree's own, in its git dir (what `rev-parse --git-path` names for them).
      const { gitDir } = await command.layout();
      const markers = ['MERGE_HEAD', 'rebase-merge', 'rebase-apply', 'CHERRY_PICK_HEAD', 'REVERT_HEAD'];
      for (const marker of markers) if (await pathExists(join(gitDir, marker))) return true;
      return false;
    },

    async saveFiles(paths) {
      const saved = new Map<string, SavedFile>();
      const present: string[] = [];
      const dir = await root();
      for (const path of paths) {
        const info = await stat(join(dir, path), { bigint: true }).catch(() => undefined);
        if (info?.isFile()) {
          const mode = (info.mode & 0o111n) !== 0n ? '100755' : '100644';
          // Too large to copy into the store: held as a mark of what it is (file-marks.ts).
          if (info.size > BigInt(SAVED_MAX_BYTES)) saved.set(path, { blob: markOf(info), mode });
          else {
            present.push(path);
            saved.set(path, { blob: null, mode });
          }
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
      await writeSavedFiles(command, files);
    },

    async listTree(commit, paths) {
      const specs = treePathspecs(paths);
      const argv = ['ls-tree', '-r', '-z', '--full-tree', commit];
      if (specs === undefined) return parseLsTree((await git(argv)).stdout);
      // In pieces: 100,000 paths (a doer's generated folder) passed at once failed with E2BIG.
      const entries = new Map<string, TreeEntry>();
      let calls = 0;
      await forChunks(specs, async (chunk) => {
        calls += 1;
        for (const entry of parseLsTree((await git([...argv, '--', ...chunk])).stdout))
          entries.set(entry.path, entry);
      });
      const listed = [...entries.values()];
      return calls > 1 ? listed.sort((x, y) => comparePaths(x.path, y.path)) : listed;
    },

    async exportFiles(entries, dir) {
      await exportFiles(command, entries, dir);
    },

    async readTexts(commit, paths) {
      const texts = new Map<string, string>();
      if (paths.length === 0) return texts;
      const wanted = new Set(paths);
      const entries = (await api.listTree(commit, paths)).filter(
        (entry) => wanted.has(entry.path) && (entry.mode === '100644' || entry.mode === '100755'),
      );
      await command.checkObjects(new Map(entries.map((entry) => [entry.object, entry.path])));
      for (const entry of entries)
        texts.set(entry.path, (await git(['cat-file', 'blob', entry.object])).stdout);
      return texts;
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

    ...worktreeMethods(git, cwd),

    async headState() {
      // One call for both: the commit, then HEAD's full symbolic name (`HEAD` itself when detached).
      const { stdout } = await git(['rev-parse', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD']);
      return parseHeadState(stdout);
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

    async keepRefs(refs) {
      if (refs.size === 0) return;
      const input = [...refs].map(([ref, object]) => `update ${forgeRef(ref)} ${object}\n`).join('');
      await git(['update-ref', '--stdin'], { input });
    },

    async pinObjects(ref, { blobs, trees }) {
      // Entry names only need to be distinct; mktree checks that every object exists.
      const entries = [
        ...blobs.map((object, i) => `100644 blob ${object}\tb${i}\n`),
        ...trees.map((object, i) => `040000 tree ${object}\tt${i}\n`),
      ];
      const tree = (await git(['mktree'], { input: entries.join('') })).stdout.trim();
      await git(['update-ref', forgeRef(ref), tree]);
    },

    async dropRefs(refs) {
      if (refs.length === 0) return;
      const input = refs.map((ref) => `delete ${forgeRef(ref)}\n`).join('');
      await git(['update-ref', '--stdin'], { input });
    },

    async listRefs(prefix) {
      const { stdout } = await git(['for-each-ref', '--format=%(refname)', forgeRef(prefix)]);
      return stdout.split('\n').filter((line) => line !== '');
    },

    ...refMethods(git),

    async attachHead(branch, orAt) {
      const ref = `refs/heads/${branch}`;
      if (orAt !== undefined && (await api.resolveCommit(ref)) === undefined)
        await git(['update-ref', ref, orAt]);
      await git(['symbolic-ref', 'HEAD', ref]);
    },

    checkObjects: (objects) => command.checkObjects(objects),

    async forgedPacks(indexes) {
      const forged: string[] = [];
      for (const index of indexes) {
        const { exitCode } = await git(['verify-pack', index], { ok: [0, 1, 128] });
        if (exitCode !== 0 && (await pathExists(index))) forged.push(index);
      }
      return forged;
    },

    async commonDir() {
      return (await command.layout()).commonDir;
    },

    async gitDir() {
      return (await command.layout()).gitDir;
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

/** NUL-separated entries, as bytes. */
function splitNulBytes(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let index = bytes.indexOf(0); index !== -1; index = bytes.indexOf(0, start)) {
    if (index > start) parts.push(bytes.subarray(start, index));
    start = index + 1;
  }
  if (start < bytes.length) parts.push(bytes.subarray(start));
  return parts;
}

/** `ref` when it is one of Forge's own (under refs/forge/); anything else is a programming error. */
function forgeRef(ref: string): string {
  if (!ref.startsWith('refs/forge/')) throw new Error(`not a ref of Forge's own: ${ref}`);
  return ref;
}
