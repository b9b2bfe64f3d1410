// Writes Git makes through a throwaway index (GIT_INDEX_FILE), so the user's own index is never
// touched: a commit of exactly some paths, saved blobs written back, tree entries exported elsewhere.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GitError, type GitCommand } from './git-command.js';
import {
  indexInfoEntry,
  indexInfoOfStaged,
  indexInfoRemoval,
  nulTerminated as nul,
  splitNul,
  stagedEntryPath,
  type TreeEntry,
} from './git-parse.js';
import type { SavedFile } from './git-port.js';
import { isMark, markNow, NoCopyError } from './file-marks.js';

/** Stages and commits exactly `paths` on HEAD (see Git.commitPaths); undefined when nothing changed. */
export async function commitExactly(
  { git, forChunks }: GitCommand,
  paths: readonly string[],
  message: string,
  headSha: () => Promise<string>,
): Promise<string | undefined> {
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
    const diff = await git(['diff', '--cached', '--name-only', '-z', '--no-renames', 'HEAD', '--', ...chunk]);
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
  const head = await headSha();
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
}

/**
 * Writes saved content back to the working tree (see Git.writeSavedFiles). NoCopyError, before any
 * write, when a file saved as a mark has changed.
 */
export async function writeSavedFiles(
  { git, root, checkObjects }: GitCommand,
  files: ReadonlyMap<string, SavedFile>,
): Promise<void> {
  const dir = await root();
  // A mark is a file too large to have been copied: untouched, it needs nothing; changed, it cannot
  // be put back, and nothing else is written before that is said.
  const changedMarks: string[] = [];
  for (const [path, file] of files) {
    if (isMark(file.blob) && (await markNow(join(dir, path))) !== file.blob) changedMarks.push(path);
  }
  if (changedMarks.length > 0) throw new NoCopyError(changedMarks);
  const toWrite = [...files].filter(([, file]) => file.blob !== null && !isMark(file.blob));
  for (const [path, file] of files) if (file.blob === null) await rm(join(dir, path), { force: true });
  if (toWrite.length === 0) return;
  await checkObjects(new Map(toWrite.map(([path, file]) => [file.blob ?? '', path])));
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
}

/** Writes regular-file entries under `dir` (see Git.exportFiles). */
export async function exportFiles(
  { git, checkObjects }: GitCommand,
  entries: readonly TreeEntry[],
  dir: string,
): Promise<void> {
  const refused = entries.find((entry) => entry.mode !== '100644' && entry.mode !== '100755');
  if (refused !== undefined) {
    throw new GitError(`refusing to export ${refused.path}: mode ${refused.mode} is not a regular file`);
  }
  if (entries.length === 0) return;
  await checkObjects(new Map(entries.map((entry) => [entry.object, entry.path])));
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
}

/** A fresh path for a throwaway index, outside the repository (removed by whoever made it). */
export function temporaryIndexPath(): string {
  return join(tmpdir(), `forge-index-${process.pid}-${randomBytes(4).toString('hex')}`);
}
