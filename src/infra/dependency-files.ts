// The installed dependencies in a working tree (node_modules, a virtualenv, vendor/): ignored by git,
// so no `git status` shows a change to them, yet a command that measures the tree loads them. A
// fingerprint of every file's identity (inode, size, mode and change times: any write moves ctime)
// tells whether anything there changed, without reading what may be hundreds of MB.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, statSync, type BigIntStats } from 'node:fs';
import { isAbsolute, join } from 'node:path';

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
 * Caches that tools write inside those directories as they run (vitest's results, babel's and
 * eslint's caches, Python's bytecode): changing as a doer runs the tests, they are left out.
 */
const CACHE_DIRS = new Set(['.cache', '.vite', '.vitest', '.vite-temp', '__pycache__', '.pytest_cache']);

/** Bounds a fingerprint of a huge install: past this many files the rest are not looked at. */
const MAX_FILES = 400_000;

/** Of git's ignored paths (`ls-files --others --ignored --directory`), those inside a dependency directory. */
export function dependencyEntries(ignored: readonly string[]): string[] {
  return ignored.filter((path) =>
    path
      .replace(/\/$/, '')
      .split('/')
      .some((segment) => DEPENDENCY_DIRS.has(segment)),
  );
}

/**
 * Each file under `entries` with its identity; caches left out. An entry is relative to `root`, or
 * absolute (an environment outside the tree), and its files are named the same way.
 */
export function fingerprintFiles(root: string, entries: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  const at = (rel: string) => (isAbsolute(rel) ? rel : join(root, rel));
  // A dependency directory itself may be a link (to a shared install): its files are still looked at.
  const visit = (rel: string, top = false): void => {
    if (found.size >= MAX_FILES) return;
    let stats;
    try {
      stats = lstatSync(at(rel), { bigint: true });
      if (top && stats.isSymbolicLink() && statSync(at(rel)).isDirectory()) {
        found.set(`${rel} ->`, identity(stats));
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
      for (const name of names.sort()) if (!CACHE_DIRS.has(name)) visit(`${rel}/${name}`);
      return;
    }
    found.set(rel, identity(stats));
  };
  for (const entry of entries) {
    const rel = entry.replace(/\/$/, '');
    // Inside the tree a cache may be listed as an entry of its own; an environment outside it may well
    // live in one (poetry's are under ~/.cache), and only the caches inside it are left out.
    if (!isAbsolute(rel) && rel.split('/').some((segment) => CACHE_DIRS.has(segment))) continue;
    visit(rel, true);
  }
  return found;
}

/** What changes whenever a file is written, renamed over, or has its mode or times set. */
function identity(stats: BigIntStats): string {
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

/** One digest of a fingerprint: equal digests, the same files unchanged. */
export function fingerprintDigest(files: ReadonlyMap<string, string>): string {
  const hash = createHash('sha256');
  for (const path of [...files.keys()].sort()) hash.update(`${path}\0${files.get(path) ?? ''}\n`);
  return hash.digest('hex');
}
