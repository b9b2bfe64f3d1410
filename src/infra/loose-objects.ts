// The loose objects of a repository (`.git/objects/xx/…`), by name, with each file's identity: what an
// agent wrote there during its run (a new object, or an old one rewritten in place) is told from what
// was there before, and hashed (Git.checkObjects). Git never rewrites a loose object, and never hashes
// one it reads: a rewritten one is read, checked out, stashed and merged as it was rewritten.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
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

/**
 * The loose objects as they are now; `check()` then hashes each one written or rewritten since, and
 * throws ForgedObjectError for one that is not what it is named (named as `an object <writer> wrote`).
 */
export async function watchLooseObjects(
  git: Pick<Git, 'commonDir' | 'checkObjects'>,
  writer: string,
): Promise<{ check: () => Promise<void> }> {
  const dir = await git.commonDir();
  const before = looseObjects(dir);
  return {
    check: () =>
      git.checkObjects(
        new Map(
          writtenObjects(before, looseObjects(dir)).map((object) => [object, `an object ${writer} wrote`]),
        ),
      ),
  };
}

function listIfDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
