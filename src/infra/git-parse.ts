// Pure parsers of git's machine output (-z, porcelain) and builders of its stdin: no process, no disk.

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

/** One entry of `git ls-tree -r`: a file (mode 100644/100755), a symlink (120000) or a submodule (160000). */
export interface TreeEntry {
  mode: string;
  type: string;
  object: string;
  path: string;
}

/** Where HEAD is: its commit and its branch. */
export interface HeadState {
  sha: string;
  /** The branch HEAD is on (`main`), or undefined when HEAD is detached. */
  branch: string | undefined;
}

/**
 * `git rev-parse HEAD^{commit} --symbolic-full-name HEAD`: the commit, then `refs/heads/<branch>`, or
 * `HEAD` when it is detached. A HEAD on a ref outside refs/heads (rare) is named in full.
 */
export function parseHeadState(stdout: string): HeadState {
  const [sha = '', name = ''] = stdout.split('\n').map((line) => line.trim());
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(sha) || name === '') {
    throw new Error(`git rev-parse answered ${JSON.stringify(stdout)} for HEAD and its branch`);
  }
  if (name === 'HEAD') return { sha, branch: undefined };
  return { sha, branch: name.startsWith('refs/heads/') ? name.slice('refs/heads/'.length) : name };
}

/** The non-empty fields of NUL-separated output. */
export function splitNul(text: string): string[] {
  return text.split('\0').filter((part) => part !== '');
}

/** The non-empty lines of newline-separated output (`git log --format=%s`, `rev-parse --git-path`). */
export function splitLines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/** Paths as NUL-terminated stdin for `--pathspec-from-file=- --pathspec-file-nul` and `--stdin -z`. */
export function nulTerminated(paths: readonly string[]): string {
  return paths.map((path) => `${path}\0`).join('');
}

/** `git status --porcelain=v1 -z`: `XY path`, and for a rename or copy the source in the next field. */
export function parseStatusPorcelain(stdout: string): StatusEntry[] {
  const fields = stdout.split('\0');
  const entries: StatusEntry[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? '';
    if (field.length < 4) continue;
    const entry: StatusEntry = { index: field.charAt(0), worktree: field.charAt(1), path: field.slice(3) };
    if (entry.index === 'R' || entry.index === 'C') entry.origPath = fields[++i] ?? '';
    entries.push(entry);
  }
  return entries;
}

/** `git diff --name-status -z --no-renames`: letter and path fields in turn, as a map of path to change. */
export function parseNameStatus(stdout: string): Map<string, FileChange> {
  const changes = new Map<string, FileChange>();
  const fields = splitNul(stdout);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    changes.set(fields[i + 1] ?? '', changeOfLetter((fields[i] ?? '').charAt(0)));
  }
  return changes;
}

function changeOfLetter(letter: string): FileChange {
  if (letter === 'A') return 'added';
  if (letter === 'D') return 'deleted';
  if (letter === 'T') return 'type-changed';
  return 'modified';
}

/** `git ls-tree -r -z` (without --name-only): `mode type object\tpath` per entry. */
export function parseLsTree(stdout: string): TreeEntry[] {
  return splitNul(stdout).map((line) => {
    const tab = line.indexOf('\t');
    const [mode = '', type = '', object = ''] = line.slice(0, tab).split(' ');
    return { mode, type, object, path: line.slice(tab + 1) };
  });
}

/** The path of each `git ls-files -s -z` entry (`mode object stage\tpath`). */
export function stagedEntryPath(entry: string): string {
  return entry.slice(entry.indexOf('\t') + 1);
}

/**
 * An `ls-files -s` entry as `update-index --index-info` input (`mode object\tpath`, stage dropped),
 * NUL-terminated for `-z`.
 */
export function indexInfoOfStaged(entry: string): string {
  return `${entry.replace(/ \d\t/, '\t')}\0`;
}

/** `update-index --index-info` input that removes `path` (mode 0, an all-zero object of `shaLength`). */
export function indexInfoRemoval(path: string, shaLength: number): string {
  return `0 ${'0'.repeat(shaLength)}\t${path}\0`;
}

/** `update-index --index-info` input that sets `path` to `object` with `mode`, NUL-terminated. */
export function indexInfoEntry(mode: string, object: string, path: string): string {
  return `${mode} ${object}\t${path}\0`;
}

/** `git worktree list --porcelain -z`: `key value` fields, a record per worktree ended by an empty field. */
export function parseWorktreeList(stdout: string): WorktreeEntry[] {
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
    if (key === 'worktree') current = { path: value, head: null, branch: null, bare: false, detached: false };
    else if (current === undefined) continue;
    else if (key === 'HEAD') current.head = value;
    else if (key === 'branch') current.branch = value;
    else if (key === 'bare') current.bare = true;
    else if (key === 'detached') current.detached = true;
  }
  if (current !== undefined) entries.push(current);
  return entries;
}

/**
 * `git ls-tree` pathspecs for paths as users write them (`./src/`, `a//b`): normalised, or undefined
 * when one of them names the whole tree (an empty path, `.`) or none is given.
 */
export function treePathspecs(paths: readonly string[]): string[] | undefined {
  const specs = paths.map((path) =>
    path
      .split('/')
      .filter((part) => part !== '' && part !== '.')
      .join('/'),
  );
  return specs.length === 0 || specs.includes('') ? undefined : specs;
}

/** Byte order, like git's own path order (localeCompare would differ between machines). */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
