// The files git ignores in a working tree: installed dependencies (node_modules, a virtualenv,
// vendor/), tools' caches, and the rest (data, local settings, build outputs). No `git status` shows a
// change to them, yet a command that measures the tree loads them. A fingerprint of every file's
// identity (inode, size, mode and change times: any write moves ctime) tells whether anything there
// changed, without reading what may be hundreds of MB; what changed is then compared by content
// (content-hashes.ts) or put back from a copy (file-copies.ts).
import { lstatSync, readdirSync, statSync, type BigIntStats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, isAbsolute, join } from 'node:path';

/** Directories package managers install into. */
const DEPENDENCY_DIRS = new Set([
  'node_modules',
  'bower_components',
  'jspm_packages',
  '.venv',
  'venv',
  'site-packages',
  'vendor',
  '.bundle',
]);

/**
 * Caches tools write as they run (Python's bytecode, vitest's results, babel's, eslint's and
 * TypeScript's build state), inside those directories or anywhere git ignores them. They change as a
 * doer runs the tests, so a change there is no tamper; yet a tool that finds its cache current loads
 * what is in it instead of the sources (Python, a `.pyc` whose header matches the source's mtime and
 * size), so what an agent wrote there is removed for the tool to rebuild.
 */
const CACHE_DIRS = new Set([
  '__pycache__',
  '.pytest_cache',
  '.mypy_cache',
  '.ruff_cache',
  '.cache',
  '.vite',
  '.vitest',
  '.vite-temp',
  '.parcel-cache',
  '.turbo',
]);

/** A cache directory shared by many tools: each directory in it is a cache of its own. */
const SHARED_CACHE_DIR = '.cache';

const isCacheFile = (name: string) =>
  name === '.eslintcache' || name === '.stylelintcache' || name.endsWith('.tsbuildinfo');

/** Bounds a fingerprint of a huge install: past this many files the rest are not looked at. */
const MAX_FILES = 400_000;

const segmentsOf = (path: string) => path.replace(/\/$/, '').split('/');

/** Under a dependency directory at any depth. */
const inDependencyDir = (path: string) => segmentsOf(path).some((segment) => DEPENDENCY_DIRS.has(segment));

/**
 * Whether an ignored path is data, a local setting or a build output: in no dependency directory and
 * no tool's cache (the guard's `others`, which it puts back after every agent run).
 */
export function isOtherIgnored(path: string): boolean {
  const segments = segmentsOf(path);
  return (
    !segments.some((segment) => DEPENDENCY_DIRS.has(segment) || CACHE_DIRS.has(segment)) &&
    !segments.includes(SHARED_CACHE_DIR) &&
    !isCacheFile(segments[segments.length - 1] ?? '')
  );
}

/**
 * Git's ignored paths (`ls-files --others --ignored --directory`) but those that are, or lie in, one of
 * `own` (the runner's state directories, guarded apart).
 */
export function watchedEntries(ignored: readonly string[], own: readonly string[]): string[] {
  return ignored.filter((path) => {
    const rel = path.replace(/\/$/, '');
    return !own.some((dir) => rel === dir || rel.startsWith(`${dir}/`));
  });
}

/** Ignored files by kind, each with its identity. */
export interface IgnoredFiles {
  /** Installed dependencies: in a package manager's directory, or an environment outside the tree. */
  dependencies: Map<string, string>;
  /** In a tool's cache. */
  caches: Map<string, string>;
  /** Each cache file's cache: the directory (or file) removed as one when an agent wrote there. */
  cacheOf: Map<string, string>;
  /** The rest: data, local settings, build outputs. */
  others: Map<string, string>;
  /**
   * What runs by name or as an interpreter starts: the entries of the PATH directories outside the
   * tree and the top level of the system Python's site-packages (absolute paths). Not hashed, not copied.
   */
  programs: Map<string, string>;
  /** The files of the package stores in the home (package-stores.ts), absolute, whatever their kind. */
  stores: Map<string, string>;
}

/**
 * Where a path is as to caches: in none (undefined), directly in the shared `.cache` (null: each
 * entry there is a cache of its own), or in the cache rooted at the string.
 */
type CacheState = string | null | undefined;

function childCache(state: CacheState, child: string, name: string): CacheState {
  if (state === null) return child;
  if (state !== undefined) return state;
  if (name === SHARED_CACHE_DIR) return null;
  return CACHE_DIRS.has(name) ? child : undefined;
}

/**
 * Each file under `entries` with its identity, by kind; nothing under `skip` (relative paths). An
 * entry is relative to `root`, or absolute (an environment outside the tree: dependencies), and its
 * files are named the same way.
 */
export function fingerprintFiles(
  root: string,
  entries: readonly string[],
  skip: readonly string[] = [],
): IgnoredFiles {
  const files: IgnoredFiles = {
    dependencies: new Map(),
    caches: new Map(),
    cacheOf: new Map(),
    others: new Map(),
    programs: new Map(),
    stores: new Map(),
  };
  const skipped = new Set(skip);
  let count = 0;
  const at = (rel: string) => (isAbsolute(rel) ? rel : join(root, rel));
  // A directory listed itself may be a link (a dependency directory to a shared install, data on
  // another disk): its files are still looked at.
  const visit = (rel: string, cache: CacheState, dependency: boolean, top = false): void => {
    if (count >= MAX_FILES || skipped.has(rel)) return;
    let stats;
    try {
      stats = lstatSync(at(rel), { bigint: true });
      if (top && stats.isSymbolicLink() && statSync(at(rel)).isDirectory()) {
        (dependency ? files.dependencies : files.others).set(`${rel} ->`, identity(stats));
        stats = statSync(at(rel), { bigint: true });
      }
    } catch {
      return; // gone meanwhile: absent from the fingerprint
    }
    if (stats.isDirectory()) {
      let names: string[] = [];
      try {
        names = readdirSync(at(rel));
      } catch {
        // Unreadable: its files are not looked at.
      }
      for (const name of names.sort()) {
        const child = `${rel}/${name}`;
        visit(child, childCache(cache, child, name), dependency || DEPENDENCY_DIRS.has(name));
      }
      return;
    }
    count += 1;
    const cacheRoot = cache ?? (isCacheFile(basename(rel)) ? rel : undefined);
    if (cacheRoot !== undefined) {
      files.caches.set(rel, identity(stats));
      files.cacheOf.set(rel, cacheRoot);
    } else {
      (dependency ? files.dependencies : files.others).set(rel, identity(stats));
    }
  };
  for (const entry of entries) {
    const rel = entry.replace(/\/$/, '');
    // Inside the tree an entry may itself lie in a cache. An environment outside it may well live in
    // one (poetry's are under ~/.cache): only the caches inside it count.
    let cache: CacheState;
    if (!isAbsolute(rel)) {
      const segments = segmentsOf(rel);
      segments.forEach((name, i) => {
        cache = childCache(cache, segments.slice(0, i + 1).join('/'), name);
      });
    }
    visit(rel, cache, isAbsolute(rel) || inDependencyDir(rel), true);
  }
  return files;
}

/** Bounds the programs looked at: a PATH of a few directories holds a few thousand. */
const MAX_PROGRAMS = 50_000;

/**
 * Each entry of each of `dirs` (absolute), not their subdirectories, with its identity: what a command
 * named without a path may run.
 */
export function fingerprintPrograms(dirs: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const dir of dirs) {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue; // absent or unreadable: nothing to look at
    }
    for (const name of names) {
      if (found.size >= MAX_PROGRAMS) return found;
      try {
        found.set(join(dir, name), identity(lstatSync(join(dir, name), { bigint: true })));
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return found;
}

/** The caches holding a file added, removed or changed from `before` to `after`, sorted. */
export function changedCaches(before: IgnoredFiles, after: IgnoredFiles): string[] {
  const caches = new Set<string>();
  for (const path of changedFiles(before.caches, after.caches)) {
    const cache = after.cacheOf.get(path) ?? before.cacheOf.get(path);
    if (cache !== undefined) caches.add(cache);
  }
  return [...caches].sort();
}

/** What changes whenever a file is written, renamed over, or has its mode or times set. */
export function identity(stats: BigIntStats): string {
  return `${stats.mode}:${stats.size}:${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/** The files added, removed or changed from `before` to `after`, sorted. */
export function changedFiles(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  const changed = new Set<string>();
  for (const [path, identity] of after) if (before.get(path) !== identity) changed.add(path);
  for (const path of before.keys()) if (!after.has(path)) changed.add(path);
  return [...changed].sort();
}

/**
 * The identities of `paths` (relative to `root`, or absolute) as they are now, those that are there:
 * one synchronous lstat each, as the fingerprint takes them (thousands of files a measured run).
 */
export function identitiesNow(root: string, paths: Iterable<string>): Map<string, string> {
  const found = new Map<string, string>();
  for (const path of paths) {
    try {
      found.set(path, identity(lstatSync(isAbsolute(path) ? path : join(root, path), { bigint: true })));
    } catch {
      // gone: absent from the map
    }
  }
  return found;
}

/** The identity of the file (or link) at `path` as a fingerprint takes it; null when there is none. */
export async function identityAt(path: string): Promise<string | null> {
  try {
    return identity(await lstat(path, { bigint: true }));
  } catch {
    return null;
  }
}
