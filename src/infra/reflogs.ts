// The reflogs (`logs/HEAD`, `logs/refs/…`) after an agent's run: `git reflog` prints every entry's
// message, and each entry keeps the commits it names from the gc. An agent's `git update-ref -m …` or
// `git checkout` writes text of its own there, and its commits live on in the entries: both are read
// back by the code it commits as easily as a ref (git-state.ts). So an entry appended during the run
// loses its message, one that names an object being removed goes, and a log rewritten in place is put
// back as it was.
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';

/** The message an entry appended during an agent's run is given. */
export const NEUTRAL_MESSAGE = 'forge: an entry made during an agent run (its text is not kept)';

/** Every file under each `<dir>/logs`, absolute path → its bytes. */
export async function readReflogs(dirs: readonly string[]): Promise<Map<string, Buffer>> {
  const logs = new Map<string, Buffer>();
  const visit = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await visit(path);
      else if (entry.isFile()) {
        const bytes = await readFile(path).catch(() => undefined);
        if (bytes !== undefined) logs.set(path, bytes);
      }
    }
  };
  for (const dir of new Set(dirs)) await visit(join(dir, 'logs'));
  return logs;
}

/** An entry's two object names (`<old> <new> <who> <when>\t<message>`), or undefined for a line that is not one. */
function objectsOf(line: string): [string, string] | undefined {
  const match = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) /.exec(line);
  return match === null ? undefined : [match[1] ?? '', match[2] ?? ''];
}

/** `line` with its message replaced (an entry's who and when stay: they say when the run moved the ref). */
function neutral(line: string): string {
  const tab = line.indexOf('\t');
  return `${tab < 0 ? line : line.slice(0, tab)}\t${NEUTRAL_MESSAGE}`;
}

/**
 * Settles each log as the header says, given the logs `before` the run and the `stray` objects about
 * to be removed. A log the run made for a ref that does not exist (`exists` says) is removed. Returns
 * the logs changed (absolute).
 */
export async function settleReflogs(
  dirs: readonly string[],
  before: ReadonlyMap<string, Buffer>,
  stray: ReadonlySet<string>,
  exists: (ref: string) => boolean,
  /** Refs whose logs are someone else's (the user's, in another worktree): left as they are. */
  theirs: (ref: string) => boolean = () => false,
): Promise<string[]> {
  const changed: string[] = [];
  const now = await readReflogs(dirs);
  const name = (path: string) => {
    const dir = dirs.find((d) => path.startsWith(`${d}/`)) ?? dirs[0] ?? '';
    return relative(dir, path);
  };
  for (const [path, bytes] of now) {
    const was = before.get(path);
    if (was !== undefined && bytes.equals(was)) continue;
    const ref = name(path).replace(/^logs\//, '');
    if (theirs(ref)) continue;
    if (was === undefined && ref !== 'HEAD' && !exists(ref)) {
      await rm(path, { force: true });
      changed.push(path);
      continue;
    }
    const kept = was !== undefined && bytes.subarray(0, was.length).equals(was) ? was : undefined;
    if (was !== undefined && kept === undefined) {
      // Rewritten in place, not appended to: as it was.
      await writeFileAtomic(path, was);
      changed.push(path);
      continue;
    }
    const appended = bytes
      .subarray(kept?.length ?? 0)
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '');
    const lines = appended
      .filter((line) => (objectsOf(line) ?? []).every((object) => !stray.has(object)))
      .filter((line) => objectsOf(line) !== undefined)
      .map(neutral);
    const text = Buffer.concat([kept ?? Buffer.alloc(0), Buffer.from(lines.map((l) => `${l}\n`).join(''))]);
    if (text.equals(bytes)) continue;
    // A file another git command appends to while this one is written would lose its entry: only a
    // log no longer growing is written (its size read again just before).
    if ((await stat(path).catch(() => undefined))?.size !== bytes.length) continue;
    await writeFileAtomic(path, text);
    changed.push(path);
  }
  return changed.sort();
}
