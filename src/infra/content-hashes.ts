// What the installed dependencies' files hold, hashed once per identity. A reinstall (npm ci, pip
// install --force-reinstall) writes every file anew: each one's identity changes, and what it holds
// does not. Comparing contents where identities differ tells such a reinstall from a patch.
//
// A hash is taken only of a file whose identity, before and after it was read, is the one the
// fingerprint saw: a file changed meanwhile has no hash, and counts as changed.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { identity } from './ignored-files.js';

/** Files hashed at once: reads overlap, and each holds one buffer. */
const CONCURRENCY = 8;
const CHUNK = 1 << 20;
/** The file type bits of a mode, and a symbolic link's. */
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
/** Never blocks on a FIFO put where a file was, never follows a link put there. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

const modeOf = (identity: string) => Number(identity.split(':')[0]);

export class ContentHashes {
  /** What each file held at the identity it had when hashed. */
  #known = new Map<string, { identity: string; hash: string }>();

  constructor(private readonly root: string) {}

  /** Hashes each file of `files` not yet hashed at its identity, and forgets the files gone. */
  async prime(files: ReadonlyMap<string, string>): Promise<void> {
    for (const path of this.#known.keys()) if (!files.has(path)) this.#known.delete(path);
    await this.#hashAll([...files].filter(([path, id]) => this.#known.get(path)?.identity !== id));
  }

  /**
   * Of `changed` (files added, removed or with another identity from `before` to `after`), those whose
   * content or mode changed too: an added or removed file always, one hashed at neither identity too.
   */
  async contentChanged(
    before: ReadonlyMap<string, string>,
    after: ReadonlyMap<string, string>,
    changed: readonly string[],
  ): Promise<string[]> {
    const then = new Map<string, string>();
    for (const path of changed) {
      const known = this.#known.get(path);
      if (known !== undefined && known.identity === before.get(path)) then.set(path, known.hash);
    }
    const both = changed.filter((path) => then.has(path) && after.has(path));
    await this.#hashAll(both.map((path) => [path, after.get(path)!]));
    return changed.filter((path) => {
      const was = before.get(path);
      const now = after.get(path);
      if (was === undefined || now === undefined || modeOf(was) !== modeOf(now)) return true;
      const known = this.#known.get(path);
      return known?.identity !== now || known.hash !== then.get(path);
    });
  }

  async #hashAll(files: [string, string][]): Promise<void> {
    let next = 0;
    const worker = async () => {
      const buffer = Buffer.allocUnsafe(CHUNK);
      while (next < files.length) {
        const [path, id] = files[next++]!;
        const hash = await this.#hash(path, id, buffer);
        if (hash === undefined) this.#known.delete(path);
        else this.#known.set(path, { identity: id, hash });
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
  }

  /** What the file at `path` holds, if its identity is `id` before and after the read. */
  async #hash(path: string, id: string, buffer: Buffer): Promise<string | undefined> {
    // A followed link's own entry is named `<dir> ->`: what it holds is where it leads.
    const link = path.endsWith(' ->');
    const file = path.slice(0, link ? -3 : undefined);
    const at = isAbsolute(file) ? file : join(this.root, file);
    try {
      if (link || (modeOf(id) & S_IFMT) === S_IFLNK) {
        if (identity(await lstat(at, { bigint: true })) !== id) return undefined;
        const target = await readlink(at);
        return identity(await lstat(at, { bigint: true })) === id ? `link:${target}` : undefined;
      }
      if ((modeOf(id) & S_IFMT) !== S_IFREG) return undefined;
      const handle = await open(at, READ_FLAGS);
      try {
        if (identity(await handle.stat({ bigint: true })) !== id) return undefined;
        const hash = createHash('sha256');
        for (;;) {
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
          if (bytesRead === 0) break;
          hash.update(buffer.subarray(0, bytesRead));
        }
        return identity(await handle.stat({ bigint: true })) === id ? hash.digest('hex') : undefined;
      } finally {
        await handle.close();
      }
    } catch {
      return undefined; // gone or unreadable: no hash, so it counts as changed
    }
  }
}
