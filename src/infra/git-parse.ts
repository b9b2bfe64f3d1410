// Pure parsers of git's machine output (-z, porcelain) and builders of its stdin: no process, no disk.

/** One entry of `git status`: X (index) and Y (working tree) status letters as v1 prints them. */
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

/** Fields before the path in each kind of `git status --porcelain=v2` entry (`1`, `2`, `u`, `?`, `!`). */
const V2_FIELDS: Record<string, number> = { '1': 8, '2': 9, u: 10, '?': 1, '!': 1 };

/**
 * `git status --porcelain=v2 -z --branch`: the entries as v1 gives them (XY, path, a rename's source),
 * and HEAD from its header: `sha` undefined when HEAD has no commit yet, `branch` undefined when git
 * printed `(detached)` (which a branch may be named too: ask `headState` then).
 */
export function parseStatusV2(stdout: string): {
  head: { sha: string | undefined; branch: string | undefined };
  entries: StatusEntry[];
} {
  const fields = stdout.split('\0');
  const entries: StatusEntry[] = [];
  let sha: string | undefined;
  let branch: string | undefined;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? '';
    if (field.startsWith('# ')) {
      const [, key = '', value = ''] = /^# (\S+) (.*)$/s.exec(field) ?? [];
      if (key === 'branch.oid' && value !== '(initial)') sha = value;
      if (key === 'branch.head' && value !== '(detached)') branch = value;
      continue;
    }
    const count = V2_FIELDS[field.charAt(0)];
    if (count === undefined) continue;
    let at = 0;
    for (let n = 0; n < count && at !== -1; n++) at = field.indexOf(' ', at + (n === 0 ? 0 : 1));
    if (at === -1) throw new Error(`git status answered an entry it should not: ${JSON.stringify(field)}`);
    // v2 marks an unchanged side `.`, where v1 (and so every caller) has a space.
    const xy = count === 1 ? `${field.charAt(0)}${field.charAt(0)}` : field.slice(2, 4).replaceAll('.', ' ');
    const entry: StatusEntry = { index: xy.charAt(0), worktree: xy.charAt(1), path: field.slice(at + 1) };
    if (field.charAt(0) === '2') entry.origPath = fields[++i] ?? '';
    entries.push(entry);
  }
  if (sha !== undefined && !/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(sha)) {
    throw new Error(`git status answered ${JSON.stringify(sha)} for HEAD's commit`);
  }
  return { head: { sha, branch }, entries };
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
