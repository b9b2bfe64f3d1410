// The loose objects of a repository (`.git/objects/xx/…`), by name, with each file's identity: what an
// agent wrote there during its run (a new object, or an old one rewritten in place) is told from what
// was there before, and hashed (Git.checkObjects). Git never rewrites a loose object, and never hashes
// one it reads: a rewritten one is read, checked out, stashed and merged as it was rewritten.
//
// And the commit-graph (`objects/info/commit-graph`, or a chain in `commit-graphs/`): git takes a
// commit's tree and parents from it without reading the commit. A doer that wrote one naming, as the
// base commit's tree, a tree holding its change to the metric's helper had `git diff` against the base
// show nothing (seen: a worse 5 kept as 45). Forge's own git calls do not read it (GIT_HARDENING); one
// written during a run is removed, for the metric's and the user's git: it is a cache, which git
// rebuilds (gc) and does without meanwhile.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { removePath } from './fs-ops.js';
import type { Git } from './git-port.js';
import { changedFiles, identity } from './ignored-files.js';

const FAN_OUT = /^[0-9a-f]{2}$/;
const REST = /^[0-9a-f]{38}(?:[0-9a-f]{24})?$/;

/** Each loose object's name → its file's identity (mode, size, inode, times); empty where none are. */
export function looseObjects(commonDir: string): Map<string, string> {
  const objects = new Map<string, string>();
  const root = join(commonDir, 'objects');
  for (const dir of listIfDir(root).filter((name) => FAN_OUT.test(name))) {
    for (const rest of listIfDir(join(root, dir)).filter((name) => REST.test(name))) {
      try {
        objects.set(`${dir}${rest}`, identity(lstatSync(join(root, dir, rest), { bigint: true })));
      } catch {
        // Gone meanwhile (a gc): nothing to read.
      }
    }
  }
  return objects;
}

/** The loose objects written, or rewritten, between `before` and `after` (not those removed). */
export function writtenObjects(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  return changedFiles(before, after).filter((name) => after.has(name));
}

/** The commit-graph's files (absolute) with their identities; empty where there is none. */
export function commitGraphFiles(commonDir: string): Map<string, string> {
  const info = join(commonDir, 'objects', 'info');
  const chain = join(info, 'commit-graphs');
  const files = new Map<string, string>();
  for (const path of [join(info, 'commit-graph'), ...listIfDir(chain).map((name) => join(chain, name))]) {
    try {
      files.set(path, identity(lstatSync(path, { bigint: true })));
    } catch {
      // Absent.
    }
  }
  return files;
}

/**
 * Removes the commit-graph, all of it, when a file of it was written, rewritten or removed since
 * `before` (commitGraphFiles); returns the files removed.
 */
export async function removeWrittenGraph(
  commonDir: string,
  before: ReadonlyMap<string, string>,
): Promise<string[]> {
  const now = commitGraphFiles(commonDir);
  if (changedFiles(before, now).length === 0) return [];
  for (const path of now.keys()) await removePath(path);
  await removePath(join(commonDir, 'objects', 'info', 'commit-graphs'), { recursive: true });
  return [...now.keys()].sort();
}

/**
 * The loose objects and the commit-graph as they are now; `check()` then removes a commit-graph
 * written since (saying so, in the line it returns), and hashes each loose object written or
 * rewritten since, throwing ForgedObjectError for one that is not what it is named (named as
 * `an object <writer> wrote`).
 */
export async function watchLooseObjects(
  git: Pick<Git, 'commonDir' | 'checkObjects'>,
  writer: string,
): Promise<{ check: () => Promise<string[]> }> {
  const dir = await git.commonDir();
  const before = looseObjects(dir);
  const graph = commitGraphFiles(dir);
  return {
    check: async () => {
      const removed = await removeWrittenGraph(dir, graph);
      await git.checkObjects(
        new Map(
          writtenObjects(before, looseObjects(dir)).map((object) => [object, `an object ${writer} wrote`]),
        ),
      );
      return removed.length === 0
        ? []
        : [
            `removed the commit-graph ${writer} wrote (git reads the commits themselves until gc writes one again)`,
          ];
    },
  };
}

function listIfDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
