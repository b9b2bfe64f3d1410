// Files a process must not change behind the runner's back: snapshots taken in memory around a step,
// put back when changed, and a seal (hashes plus copies, outside the watched tree) kept between runs.
//
// In a watched directory, the runner's live working files (lock, stop request, event logs,
// transcripts, archives, temp files) are not watched: the runner itself writes them during a step.
import { lstat, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  isNotFound,
  isNotRegularFile,
  openIfExists,
  readBytesIfExists,
  readFileIfExists,
  writeFileAtomic,
  writeJsonAtomic,
} from './atomic-file.js';
import { AppError, ExitCode } from './errors.js';
import { intentsPath, leftByRunner, readJournal, relativeName, sha256 } from './seal-journal.js';

/** Absolute path → content; null when the file does not exist. */
export type Snapshot = Map<string, Buffer | null>;

export interface VaultLayout {
  /** Names in messages and in the seal are relative to this directory. */
  repo: string;
  /** Directories every file of which belongs to the loop (the workspace, `.beads/` around some roles). */
  dirs: readonly string[];
  /** Single files that belong to the loop wherever they are (the rubric, metric files, Forge's config). */
  files: readonly string[];
}

/**
 * Workspace entries the runner writes while an agent runs, or a person may drop in: never guarded.
 * `report.html` is the page written when a run ends (`ralph-loop report`), a view and not the loop's record.
 */
const LIVE_ENTRIES = new Set(['ralph-loop.lock', 'stop', 'runs', 'logs', 'archive', 'report.html']);

function isLive(name: string): boolean {
  return LIVE_ENTRIES.has(name) || name.endsWith('.tmp');
}

/** Reads every guarded file. Directories that do not exist contribute nothing. */
export async function takeSnapshot(layout: VaultLayout): Promise<Snapshot> {
  const snapshot: Snapshot = new Map();
  for (const dir of layout.dirs) await readTree(dir, true, snapshot);
  // Most named files do not exist (a tool's settings nobody wrote): one listing of their folder says
  // so for all of them, where opening each would cost a call apiece.
  const byFolder = new Map<string, string[]>();
  for (const file of layout.files)
    byFolder.set(dirname(file), [...(byFolder.get(dirname(file)) ?? []), file]);
  for (const [folder, files] of byFolder) {
    const names = await listNames(folder);
    for (const file of files)
      snapshot.set(
        file,
        names !== undefined && !names.has(foldCase(basename(file))) ? null : await readOrNull(file),
      );
  }
  return snapshot;
}

// macOS and Windows find `.Rprofile` under the name `.rprofile`, and so does every tool there.
const foldCase =
  process.platform === 'darwin' || process.platform === 'win32'
    ? (name: string) => name.toLowerCase()
    : (name: string) => name;

/** The names in a folder; an empty set when there is none, undefined when it cannot be listed. */
async function listNames(folder: string): Promise<Set<string> | undefined> {
  try {
    return new Set((await readdir(folder)).map(foldCase));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return isNotFound(error) || code === 'ENOTDIR' ? new Set() : undefined;
  }
}

async function readTree(dir: string, top: boolean, into: Snapshot): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isNotFound(error) || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return;
    throw error;
  }
  for (const entry of entries) {
    if (top && isLive(entry.name)) continue;
    if (entry.name.endsWith('.tmp')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await readTree(path, false, into);
    else if (entry.isFile() || entry.isSymbolicLink()) into.set(path, await readOrNull(path));
  }
}

/**
 * The most of one guarded file a snapshot holds (a loop's config, ledger, program and metric files are
 * kilobytes to tens of megabytes; a 100,000-line ledger is 50 MB).
 */
export const MAX_HELD_BYTES = 1024 * 1024 * 1024;

/**
 * What a snapshot holds for a file larger than MAX_HELD_BYTES: not its bytes (Node reads no more than
 * 2 GiB at once; a doer that grew the ledger past that ended the run with a RangeError), but a mark of
 * its identity and size. Two marks are equal while the file is untouched, and a file grown into one
 * differs from what it was, so it is put back; a mark is never written as a file's content.
 */
const oversized = new WeakSet<Buffer>();

function oversizedMark(info: { ino: number; size: number; ctimeMs: number; mtimeMs: number }): Buffer {
  const mark = Buffer.from(
    `\0forge: larger than a snapshot holds ${info.ino} ${info.size} ${info.ctimeMs} ${info.mtimeMs}`,
  );
  oversized.add(mark);
  return mark;
}

/** A file's bytes; null when there is none, or something other than a regular file (never waited on). */
async function readOrNull(path: string): Promise<Buffer | null> {
  try {
    const handle = await openIfExists(path);
    if (handle === undefined) return null;
    try {
      const info = await handle.stat();
      return info.size > MAX_HELD_BYTES ? oversizedMark(info) : await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (isNotRegularFile(error) || code === 'ELOOP') return null;
    throw error;
  }
}

/** A guarded file over MAX_HELD_BYTES that changed, where no copy of what it was is held. */
export class OversizedFileError extends AppError {
  constructor(path: string) {
    super(
      `${path} is larger than Forge holds of a loop's file (${MAX_HELD_BYTES / 1024 ** 3} GiB), and it changed: there is no copy of it to put back.`,
      {
        exitCode: ExitCode.environment,
        hint: 'A loop file that large was made by an agent or a process it left: remove it or bring it back from git, then run again.',
      },
    );
    this.name = 'OversizedFileError';
  }
}

/** Paths whose content differs (a file that appeared or disappeared included), sorted. */
export function changedPaths(before: Snapshot, after: Snapshot): string[] {
  const changed: string[] = [];
  for (const path of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(path) ?? null;
    const b = after.get(path) ?? null;
    if (a === null && b === null) continue;
    if (a === null || b === null || !a.equals(b)) changed.push(path);
  }
  return changed.sort();
}

/** Puts `paths` back as they were in `before`: rewritten atomically, or removed if they did not exist. */
export async function restoreSnapshot(before: Snapshot, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    // A device node is the system's: never removed or replaced by a file, whatever was read there.
    if (await isDevice(path)) continue;
    const content = before.get(path) ?? null;
    if (content !== null && oversized.has(content)) throw new OversizedFileError(path);
    if (content === null) await rm(path, { force: true, recursive: true });
    else await writeFileAtomic(path, content);
  }
}

// ---- the seal: what the files were when the runner last let go of them ----

export interface Seal {
  version: 1;
  /** Relative name → sha256 of the content the runner last left. */
  files: Record<string, string>;
}

export interface SealedVault {
  /** Where the seal and the copies live (outside the workspace, in git's own directory). */
  dir: string;
  layout: VaultLayout;
}

function sealPath(vault: SealedVault): string {
  return join(vault.dir, 'seal.json');
}

function copyPath(vault: SealedVault, name: string): string {
  return join(vault.dir, 'files', ...name.split('/'));
}

export async function readSeal(vault: SealedVault): Promise<Seal | undefined> {
  const text = await readFileIfExists(sealPath(vault));
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<Seal>;
    if (value.version !== 1 || typeof value.files !== 'object' || value.files === null) return undefined;
    return { version: 1, files: value.files };
  } catch {
    return undefined;
  }
}

/** Records the files as they are now, copying the ones that changed since the last seal. */
export async function writeSeal(vault: SealedVault, snapshot: Snapshot): Promise<void> {
  const previous = (await readSeal(vault))?.files ?? {};
  const files: Record<string, string> = {};
  for (const [path, content] of snapshot) {
    if (content === null) continue;
    const name = relativeName(vault.layout.repo, path);
    // Too large to copy: what the seal had of it stands (and is put back at the next check).
    if (oversized.has(content)) {
      if (previous[name] !== undefined) files[name] = previous[name];
      continue;
    }
    const hash = sha256(content);
    files[name] = hash;
    if (previous[name] !== hash) await writeFileAtomic(copyPath(vault, name), content);
  }
  for (const name of Object.keys(previous)) {
    if (files[name] === undefined) await rm(copyPath(vault, name), { force: true });
  }
  await writeJsonAtomic(sealPath(vault), { version: 1, files } satisfies Seal);
  // The seal now holds every write the runner announced: the journal starts afresh.
  await rm(intentsPath(vault.dir), { force: true });
}

export interface SealCheck {
  /** Relative names whose content is not what the seal recorded (changed, added or removed). */
  changed: string[];
  /** True when no seal existed yet (a loop's first run under this version). */
  fresh: boolean;
  /** Relative names that differ from the seal only by writes the runner announced (a crash before it re-sealed). */
  journaled: string[];
}

/** Compares the files now with the seal. */
export async function checkSeal(vault: SealedVault, snapshot: Snapshot): Promise<SealCheck> {
  const seal = await readSeal(vault);
  if (seal === undefined) return { changed: [], fresh: true, journaled: [] };
  const now = new Map<string, Buffer>();
  for (const [path, content] of snapshot) {
    if (content !== null) now.set(relativeName(vault.layout.repo, path), content);
  }
  const changed = new Set<string>();
  for (const [name, hash] of Object.entries(seal.files)) {
    const content = now.get(name);
    if (content === undefined || sha256(content) !== hash) changed.add(name);
  }
  for (const name of now.keys()) if (seal.files[name] === undefined) changed.add(name);
  const journal = await readJournal(vault.dir);
  const journaled: string[] = [];
  const foreign: string[] = [];
  for (const name of [...changed].sort()) {
    const hash = seal.files[name];
    const sealed =
      hash !== undefined && journal.has(name)
        ? { hash, content: await readBytesIfExists(copyPath(vault, name)).catch(() => undefined) }
        : { hash };
    if (leftByRunner(journal, name, now.get(name) ?? null, sealed)) journaled.push(name);
    else foreign.push(name);
  }
  return { changed: foreign, fresh: false, journaled };
}

/** Brings the named files back to their sealed copies (removing those the seal did not have). */
export async function restoreFromSeal(vault: SealedVault, names: readonly string[]): Promise<string[]> {
  const seal = await readSeal(vault);
  const restored: string[] = [];
  for (const name of names) {
    const target = join(vault.layout.repo, ...name.split('/'));
    if (seal?.files[name] === undefined) {
      await rm(target, { force: true });
      restored.push(name);
      continue;
    }
    const copy = copyPath(vault, name);
    const content = await readBytesIfExists(copy).catch(() => undefined);
    if (content === undefined || sha256(content) !== seal.files[name]) continue; // no good copy: cannot restore
    // The bytes just checked, not the copy again: it may have been swapped for a FIFO since.
    await writeFileAtomic(target, content);
    restored.push(name);
  }
  return restored;
}

async function isDevice(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info !== undefined && (info.isCharacterDevice() || info.isBlockDevice());
}
