// The files git ignores in the tree that a measured run reads and must leave as it found them: the data a
// metric compares against (a test set, the expected answers, a model's weights) is kept out of git when
// it is large, so no tree check sees a change to it. Seen: code the doer changed that, while the metric
// ran it, wrote its own answer over the ignored `data/expected.txt` the metric then compared with: 0
// became 100, kept. Around every metric, guard and track run (outside-watch.ts), each such file that
// was there before the run and that it changed or removed is put back from the runner's copy (times and
// mode too), and the run measures nothing; one too large to copy is left as found and holds the loop
// until a person looks (dependency-guard.ts's record). One written again with the same bytes gets its
// times back, and the run measures nothing all the same: the metric may have read other bytes between.
// The copies live in memory: while a run measures, the held files' identities wait in a marker file, so
// a runner killed meanwhile has the next run find what changed (the agent-run guard leaves the same).
// Not held: what the loop's runs write themselves (run-outputs.ts: what the baseline's runs wrote, what
// a run made), build outputs, scratch and logs (ignored-guard.ts's `isDerived`), tools' and editors'
// own state, and the paths the loop names as rebuilt by its metric (`scope.rebuilt_paths`).
import { isAbsolute, join } from 'node:path';
import { ContentHashes } from '../infra/content-hashes.js';
import { readFileIfExists, writeJsonAtomic } from '../infra/atomic-file.js';
import { readBytesIfReadable, removePath } from '../infra/fs-ops.js';
import { FileCopies, MAX_COPIED_FILE, putBack, putTimesBack } from '../infra/file-copies.js';
import { changedFiles, identitiesNow } from '../infra/ignored-files.js';
import { modeOf, sizeOf } from '../infra/verified-read.js';
import { isDerived } from './ignored-guard.js';
import { isPathInScope } from './keep-revert.js';
import { isOutput } from './run-outputs.js';

/** How much of the held files too large to copy is hashed ahead, per runner process. */
const MAX_HASHED_DATA = 1 << 30;

/** What one run did to the held files, once undone as far as it can be. */
export interface DataChange {
  /** Changed or removed, and put back from the copy. */
  putBack: string[];
  /** Changed or removed, with no copy to put back: left as found. */
  lost: string[];
  /**
   * Written during the run and holding the same bytes and mode at its end: its times are put back. The
   * metric may have read other bytes meanwhile (code that writes its answer over the key and puts the
   * key back once it was read); no honest run writes the data it reads (a step that makes it again
   * made it at the baseline too, and is the runs' output).
   */
  rewritten: string[];
  /** Made by the run where no file was (not held: the runs' own, for the record of outputs). */
  made: string[];
}

export interface DataWatch {
  /**
   * Before a run, with the ignored files as a snapshot lists them: the held ones are looked at again
   * (the snapshot may be the last run's, and an agent's guard put files back since), their copies and
   * hashes brought up to date. Returns the held files that changed while a run was measuring and the
   * runner was killed (the marker it left says what they were; their copies died with it).
   */
  prime(listed: ReadonlyMap<string, string>, outputs: ReadonlySet<string>): Promise<string[]>;
  /** After it, with the files as they are now: undoes what it changed of the held files, and says what. */
  settle(after: ReadonlyMap<string, string>, outputs: ReadonlySet<string>): Promise<DataChange>;
}

/**
 * Folders where tools and editors keep their own state, which they rewrite whenever they like (an IDE
 * open on the tree all night writes `.idea/workspace.xml`; Hypothesis its example database, Gradle its
 * file hashes): no metric reads them as its data.
 */
const TOOL_STATE_DIRS = new Set([
  '.idea',
  '.vscode',
  '.vs',
  '.fleet',
  '.history',
  '.hypothesis',
  '.benchmarks',
  '.gradle',
  '.dart_tool',
  '.stack-work',
  '.angular',
  '.nx',
  '.terraform',
  '.serverless',
  '.expo',
  '.docusaurus',
  '.sass-cache',
  '.ropeproject',
]);

/** An editor's swap, backup or lock file (`.x.swp`, `x~`, `.#x`, `#x#`), or a folder's `.DS_Store`. */
const EDITOR_FILE = /(?:^|\/)(?:\.[^/]*\.sw[a-p]|[^/]*~|\.#[^/]*|#[^/]*#|\.DS_Store)$/;

/** Whether an ignored file (relative to the tree) is the runs' own to write rather than what they read. */
export function isRunWritten(path: string, rebuilt: readonly string[]): boolean {
  // Outside the repository (a dataset the commands name) only what a run was seen to write is its own:
  // `/tmp/datasets/` or `~/logs/` is no build output of the tree's.
  if (isAbsolute(path)) return false;
  return (
    isDerived(path) ||
    isPathInScope(path, rebuilt) ||
    path.split('/').some((segment) => TOOL_STATE_DIRS.has(segment)) ||
    EDITOR_FILE.test(path)
  );
}

/** The ignored files of the tree itself: not an environment outside it, nor a followed link's own entry. */
function inTree(path: string): boolean {
  return !isAbsolute(path) && !path.endsWith(' ->');
}

/** Leaves `files`' identities at `marker` while they are guarded (none past MAX_MARKED: the marker goes). */
export async function writeMarker(marker: string, files: ReadonlyMap<string, string>): Promise<void> {
  if (files.size > 0 && files.size <= MAX_MARKED)
    await writeJsonAtomic(marker, { files: Object.fromEntries(files) });
  else await removePath(marker);
}

/** Past this many held files no marker is written: a killed run's changes there go unseen. */
const MAX_MARKED = 50_000;

/**
 * The held files, as a run's marker names them, that are not as it found them; none without a marker.
 * A marker that cannot be read names none (nothing of Forge's wrote it whole).
 */
export async function changedSinceMarker(cwd: string, marker: string): Promise<string[]> {
  const text = await readFileIfExists(marker);
  if (text === undefined) return [];
  let files: Record<string, string> = {};
  try {
    const parsed = JSON.parse(text) as { files?: unknown };
    if (typeof parsed.files === 'object' && parsed.files !== null)
      files = parsed.files as Record<string, string>;
  } catch {
    return [];
  }
  const now = identitiesNow(cwd, Object.keys(files));
  return Object.entries(files)
    .filter(([path, id]) => now.get(path) !== id)
    .map(([path]) => path)
    .sort();
}

/**
 * The watch of the ignored files of the tree at `cwd`, named relative to it; with `outside`, of the files
 * outside the trees that the commands name (outside-data.ts), named by their absolute paths. With
 * `marker` (a file in the runner's own records), each run leaves the held files' identities there while
 * it measures: a runner killed meanwhile loses its copies, and the next run's start finds what changed.
 */
export function createDataWatch(
  cwd: string,
  rebuilt: readonly string[],
  options: { outside?: boolean; marker?: string } = {},
): DataWatch {
  const copies = new FileCopies(cwd);
  const hashes = new ContentHashes(cwd, MAX_HASHED_DATA);
  const ours = (path: string) =>
    options.outside === true ? isAbsolute(path) && !path.endsWith(' ->') : inTree(path);
  const held = (files: ReadonlyMap<string, string>, outputs: ReadonlySet<string>) =>
    new Map(
      [...files].filter(([path]) => ours(path) && !isRunWritten(path, rebuilt) && !isOutput(outputs, path)),
    );
  let start = new Map<string, string>();
  let listedBefore = new Set<string>();
  return {
    async prime(listed, outputs) {
      const { marker } = options;
      const interrupted = marker === undefined ? [] : await changedSinceMarker(cwd, marker);
      listedBefore = new Set(listed.keys());
      start = identitiesNow(cwd, held(listed, outputs).keys());
      await copies.prime(start);
      await hashes.prime(new Map([...start].filter(([, id]) => sizeOf(id) > MAX_COPIED_FILE)));
      if (marker !== undefined) await writeMarker(marker, start);
      return interrupted;
    },
    async settle(after, outputs) {
      const was = new Map([...start].filter(([path]) => !isOutput(outputs, path)));
      const now = held(after, outputs);
      // A file that appeared is the run's own; only what was there and changed is held.
      const changed = changedFiles(was, now).filter((path) => was.has(path));
      const written = changed.filter((path) => now.has(path));
      // The same bytes and mode again: a small file against its copy, a large one against its hash.
      const copied = written.filter((path) => copies.get(path, was.get(path)!) !== undefined);
      const differ = new Set([
        ...(await hashes.contentChanged(
          was,
          now,
          written.filter((path) => !copied.includes(path)),
        )),
        ...(await differingFromCopies(cwd, copied, was, now, copies)),
      ]);
      const change: DataChange = { putBack: [], lost: [], rewritten: [], made: [] };
      for (const path of changed) {
        const id = was.get(path)!;
        const at = isAbsolute(path) ? path : join(cwd, path);
        const copy = copies.get(path, id);
        if (now.has(path) && !differ.has(path)) {
          await putTimesBack(at, id);
          change.rewritten.push(path);
        } else if (copy !== undefined) {
          await putBack(at, copy);
          change.putBack.push(path);
        } else {
          change.lost.push(path);
        }
      }
      if (options.marker !== undefined) await removePath(options.marker);
      // Outside the trees, a file the run made is not held (the runs' output, or nobody's business).
      change.made =
        options.outside === true
          ? []
          : madeByRun(
              listedBefore,
              [...after.keys()].filter(
                (path) => inTree(path) && !listedBefore.has(path) && !isRunWritten(path, rebuilt),
              ),
            );
      return change;
    },
  };
}

/** Of `paths` (each with a copy at its identity before), those whose bytes or mode now differ from it. */
async function differingFromCopies(
  cwd: string,
  paths: readonly string[],
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  copies: FileCopies,
): Promise<string[]> {
  const differ: string[] = [];
  for (const path of paths) {
    const copy = copies.get(path, before.get(path)!)!;
    const id = after.get(path)!;
    const bytes = Buffer.isBuffer(copy.content)
      ? await readBytesIfReadable(isAbsolute(path) ? path : join(cwd, path))
      : undefined;
    const same =
      bytes !== undefined &&
      Buffer.isBuffer(copy.content) &&
      modeOf(id) === copy.mode &&
      bytes.equals(copy.content);
    if (!same) differ.push(path);
  }
  return differ;
}

/**
 * The files a run made, each as the topmost folder above it that held no file before the run
 * (`results/run-7/`, recorded whole), or as itself in a folder that did; sorted, each once.
 */
export function madeByRun(before: ReadonlySet<string>, made: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const path of before) {
    for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1))
      folders.add(path.slice(0, at + 1));
  }
  const found = new Set<string>();
  for (const path of made) {
    let entry = path;
    for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) {
      const folder = path.slice(0, at + 1);
      if (!folders.has(folder)) {
        entry = folder;
        break;
      }
    }
    found.add(entry);
  }
  return [...found].sort();
}
