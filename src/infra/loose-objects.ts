// The loose objects of a repository (`.git/objects/xx/…`), by name, with each file's identity: what an
// agent wrote there during its run (a new object, or an old one rewritten in place) is told from what
// was there before, and hashed (Git.checkObjects). Git never rewrites a loose object, and never hashes
// one it reads: a rewritten one is read, checked out, stashed and merged as it was rewritten.
//
// The packs too (`objects/pack/`): git looks an object up in the packs before the loose objects, by the
// name the pack's index gives it, and reads a blob without hashing it. A doer that wrote a pack whose
// index named the metric's committed weight as other bytes had `git show HEAD:…` print those (seen: a
// worse 5 kept as 45). A pack written or rewritten during a run has every object of it hashed (`git
// verify-pack`); a multi-pack index, which names objects in packs the same way, is removed.
//
// And the commit-graph (`objects/info/commit-graph`, or a chain in `commit-graphs/`): git takes a
// commit's tree and parents from it without reading the commit. A doer that wrote one naming, as the
// base commit's tree, a tree holding its change to the metric's helper had `git diff` against the base
// show nothing (seen: a worse 5 kept as 45). Forge's own git calls read neither (GIT_HARDENING); one
// written during a run is removed, for the metric's and the user's git: each is a cache, which git
// rebuilds (gc) and does without meanwhile.
import { lstatSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { removePath } from './fs-ops.js';
import { ForgedObjectError } from './git-command.js';
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

/** Identities of the files (absolute) in `dir` whose names `keep` takes, and under its subfolders `deep`. */
function filesIn(
  dir: string,
  keep: (name: string) => boolean,
  deep: readonly string[] = [],
): Map<string, string> {
  const files = new Map<string, string>();
  const paths = [
    ...listIfDir(dir).filter(keep),
    ...deep.flatMap((sub) => listIfDir(join(dir, sub)).map((name) => join(sub, name))),
  ];
  for (const path of paths) {
    try {
      files.set(join(dir, path), identity(lstatSync(join(dir, path), { bigint: true })));
    } catch {
      // Gone meanwhile.
    }
  }
  return files;
}

/**
 * The caches git reads objects and commits through without checking them (absolute paths, with
 * their identities): the commit-graph and its chain, the multi-pack index and its chain.
 */
export function commitGraphFiles(commonDir: string): Map<string, string> {
  return new Map([
    ...filesIn(join(commonDir, 'objects', 'info'), (name) => name === 'commit-graph', ['commit-graphs']),
    ...filesIn(join(commonDir, 'objects', 'pack'), (name) => name === 'multi-pack-index', [
      'multi-pack-index.d',
    ]),
  ]);
}

/**
 * Removes those caches, all of them, when a file of one was written, rewritten or removed since
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
  await removePath(join(commonDir, 'objects', 'pack', 'multi-pack-index.d'), { recursive: true });
  return [...now.keys()].sort();
}

/** The files of the packs (`pack-<sum>.pack`, `.idx`, …) with their identities. */
export function packFiles(commonDir: string): Map<string, string> {
  return filesIn(join(commonDir, 'objects', 'pack'), (name) => name.startsWith('pack-'));
}

/**
 * An identity (ignored-files.ts: mode, size, inode, then the times) without its times. Git sets a
 * pack's times whenever it would write an object the pack already holds (every commit does, for the
 * trees it did not change): such a pack was not written, and hashing it again would cost a read of
 * the whole store after every commit.
 */
const withoutTimes = (id: string) => id.split(':').slice(0, 3).join(':');

/**
 * The index of each pack a file of which was made or written from `before` to `after`: new, or of
 * another size, mode or inode (not one whose times alone moved).
 */
export function writtenPacks(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  const indexes = new Set<string>();
  for (const [path, id] of after) {
    const was = before.get(path);
    if (was !== undefined && withoutTimes(was) === withoutTimes(id)) continue;
    const index = path.replace(/\.[a-z]+$/, '.idx');
    if (after.has(index)) indexes.add(index);
  }
  return [...indexes].sort();
}

/**
 * The loose objects, the packs and the caches above as they are now; `check()` then removes a cache
 * written since (saying so, in the line it returns), verifies each pack written or rewritten since, and
 * hashes each loose object written or rewritten since, throwing ForgedObjectError for one that is not
 * what it is named (named as `an object <writer> wrote`, `a pack <writer> wrote`).
 */
export async function watchLooseObjects(
  git: Pick<Git, 'commonDir' | 'checkObjects' | 'forgedPacks'>,
  writer: string,
): Promise<{ check: () => Promise<string[]> }> {
  const dir = await git.commonDir();
  const before = looseObjects(dir);
  const packs = packFiles(dir);
  const graph = commitGraphFiles(dir);
  return {
    check: async () => {
      const removed = await removeWrittenGraph(dir, graph);
      const written = writtenPacks(packs, packFiles(dir));
      const forged = written.length === 0 ? [] : ((await git.forgedPacks?.(written)) ?? []);
      if (forged.length > 0)
        throw new ForgedObjectError(
          forged.map((index) => ({
            object: basename(index, '.idx'),
            path: `a pack ${writer} wrote`,
            found: 'holds other objects than its index names',
          })),
        );
      await git.checkObjects(
        new Map(
          writtenObjects(before, looseObjects(dir)).map((object) => [object, `an object ${writer} wrote`]),
        ),
      );
      const caches = [
        ...(removed.some((path) => /commit-graph/.test(path)) ? ['the commit-graph'] : []),
        ...(removed.some((path) => /multi-pack-index/.test(path)) ? ['the multi-pack index'] : []),
      ];
      return caches.length === 0
        ? []
        : [
            `removed ${caches.join(' and ')} ${writer} wrote (git reads without them until a gc writes them again)`,
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
