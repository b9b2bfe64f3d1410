// What the installed dependencies' files hold, hashed once per identity. A reinstall (npm ci, pip
// install --force-reinstall) writes every file anew: each one's identity changes, and what it holds
// does not. Comparing contents where identities differ tells such a reinstall from a patch.
//
// A hash is taken only of a file whose identity, once it was read, is the one the fingerprint saw
// (verified-read.ts): a file changed meanwhile has no hash, and counts as changed.
import { createHash } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { isLinkIdentity, linkAsSeen, modeOf, readAsSeen, sizeOf, Slices } from './verified-read.js';

const CHUNK = 1 << 20;

export class ContentHashes {
  /** What each file held at the identity it had when hashed. */
  #known = new Map<string, { identity: string; hash: string }>();

  /**
   * `maxBytes` bounds what is primed: files past it, in path order, are not hashed ahead (they count
   * as changed whenever their identity does). Without it, everything is.
   */
  constructor(
    private readonly root: string,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  /** Hashes each file of `files` not yet hashed at its identity, within the bound; forgets the rest. */
  async prime(files: ReadonlyMap<string, string>): Promise<void> {
    for (const [path, known] of this.#known) if (files.get(path) !== known.identity) this.#known.delete(path);
    let bytes = 0;
    const wanted: [string, string][] = [];
    for (const [path, id] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      bytes += sizeOf(id);
      if (bytes > this.maxBytes) break;
      if (this.#known.get(path)?.identity !== id) wanted.push([path, id]);
    }
    await this.#hashAll(wanted);
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
    const buffer = Buffer.allocUnsafe(CHUNK);
    const slices = new Slices();
    for (const [path, id] of files) {
      const hash = await this.#hash(path, id, buffer, slices);
      if (hash === undefined) this.#known.delete(path);
      else this.#known.set(path, { identity: id, hash });
      await slices.pause();
    }
  }

  /** What the file at `path` holds, if its identity is `id` when read. */
  async #hash(path: string, id: string, buffer: Buffer, slices: Slices): Promise<string | undefined> {
    // A followed link's own entry is named `<dir> ->`: what it holds is where it leads.
    const link = path.endsWith(' ->');
    const file = link ? path.slice(0, -3) : path;
    const at = isAbsolute(file) ? file : join(this.root, file);
    if (link || isLinkIdentity(id)) {
      const target = linkAsSeen(at, id);
      return target === undefined ? undefined : `link:${target}`;
    }
    const hash = createHash('sha256');
    return (await readAsSeen(at, id, buffer, (chunk) => hash.update(chunk), slices))
      ? hash.digest('hex')
      : undefined;
  }
}
