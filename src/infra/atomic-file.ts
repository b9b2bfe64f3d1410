// Atomic file writes (temp file in the same directory, fsync, rename) and a torn-line-tolerant append.
//
// Many paths Forge reads and writes lie where an agent can write too (the repository's .forge/ and
// .autoresearch/, the agent CLIs' files in HOME). A FIFO put at one (mkfifo) blocks a plain open() until
// a writer or reader comes, which is never: the runner waited on it for good, and Node waits for the
// blocked thread even to exit. A link to /dev/zero never ends. So files are opened without blocking
// (O_NONBLOCK: a FIFO opens at once for reading, and not at all for writing without a reader), and a
// read takes only a regular file (NotRegularFileError otherwise); temp files are created, never
// reopened (O_EXCL).
import { access, mkdir, open, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { EnvironmentError } from './errors.js';

export interface AtomicWriteOptions {
  /**
   * Flush the new content to the disk before it replaces the old (default true). Either way readers
   * and a killed process see the old file or the new one; false only risks the new content on a power
   * loss, for files that mean nothing after one (a live lock's progress: its process is gone too).
   */
  durable?: boolean;
}

/** Writes `content` to `path` so readers see either the old file or the new one, never a mix. */
export async function writeFileAtomic(
  path: string,
  content: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  // node:crypto on first write only: read-only commands (status) never load it (~2.5 ms of a start).
  const { randomBytes } = await import('node:crypto');
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    try {
      await handle.writeFile(content);
      if (options.durable !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    // A write that failed (a full disk) leaves no half-written temp file to hold the space it lacked.
    await rm(temp, { force: true });
    throw error;
  }
}

/** Temp files of the two writes below, unique within this process. */
let nowWrites = 0;

/**
 * A fresh temp path beside `path`, which the write creates (O_EXCL): whatever is there already fails the
 * write rather than being written through (a FIFO would block it for good). A counter and Math.random,
 * not node:crypto (see writeFileAtomic): an agent that can read the lock (its pid) cannot guess it.
 */
function tempBeside(path: string): string {
  nowWrites += 1;
  const unique = `${nowWrites}${Math.random().toString(36).slice(2, 8)}`;
  return join(dirname(path), `.${basename(path)}.${process.pid}.w${unique}.tmp`);
}

const jsonText = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * writeJsonAtomic for the rare write that must be on disk before the caller goes on (a process that
 * can be killed any moment after), without a flush: readers and a kill see the old file or the new.
 */
export function writeJsonAtomicNow(path: string, value: unknown): void {
  const temp = tempBeside(path);
  try {
    writeFileSync(temp, jsonText(value), { flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    if (!isAlreadyThere(error)) rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * writeJsonAtomic (unflushed) that gives way: once the new content is written beside the file,
 * `skip` is asked and the rename made in one synchronous step, so a newer version written meanwhile
 * by writeJsonAtomicNow is never replaced by this older one. True when it renamed.
 */
export async function writeJsonAtomicUnless(
  path: string,
  value: unknown,
  skip: () => boolean,
): Promise<boolean> {
  await mkdir(dirname(path), { recursive: true });
  const temp = tempBeside(path);
  try {
    await writeFile(temp, jsonText(value), { flag: 'wx' });
    const renamed = !skip();
    if (renamed) renameSync(temp, path);
    else rmSync(temp, { force: true });
    return renamed;
  } catch (error) {
    if (!isAlreadyThere(error)) rmSync(temp, { force: true });
    throw error;
  }
}

export async function writeJsonAtomic(
  path: string,
  value: unknown,
  options: AtomicWriteOptions = {},
): Promise<void> {
  await writeFileAtomic(path, jsonText(value), options);
}

/**
 * Reads a file, or returns undefined when it does not exist. Anything but a regular file there (a
 * FIFO, a device, a directory) is a NotRegularFileError, without waiting on it.
 */
export async function readFileIfExists(path: string): Promise<string | undefined> {
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Appends one line to a JSONL file. The common case is a plain append. When the file ends in a torn
 * line (a crash mid-append), the file is first rewritten atomically without it (or with the missing
 * newline, if the tail is complete JSON), so the ledger stays parseable.
 *
 * The files appended this way (a loop's ledger, its journals) have names an agent knows: a symlink or
 * a hard link put at one (to ~/.bashrc) would take the line to the file it names. Such a file is
 * rewritten the same atomic way instead, which gives the path a file of its own and leaves the other
 * name's as it was.
 */
export async function appendJsonLine(path: string, value: unknown): Promise<void> {
  const line = JSON.stringify(value);
  const handle = await open(path, APPEND_FLAGS).catch(async (error: unknown) => {
    if (isLinkAt(error)) return undefined;
    if (!isNotFound(error)) throw error;
    await mkdir(dirname(path), { recursive: true });
    return open(path, APPEND_FLAGS);
  });
  if (handle !== undefined) {
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new NotRegularFileError(path, info);
      const { size, nlink } = info;
      const last = Buffer.alloc(1);
      if (size > 0) await handle.read(last, 0, 1, size - 1);
      if (nlink === 1 && (size === 0 || last[0] === 0x0a)) {
        await handle.appendFile(`${line}\n`);
        await handle.sync();
        return;
      }
    } finally {
      await handle.close();
    }
  }
  // Rare path: the file ends in a torn line, or is a link; rewrite it without that line (or just add
  // the newline).
  const existing = (await readFileIfExists(path)) ?? '';
  const lastNewline = existing.lastIndexOf('\n');
  const head = lastNewline === -1 ? '' : existing.slice(0, lastNewline + 1);
  const tail = existing.slice(lastNewline + 1);
  const kept = isCompleteJson(tail) ? `${head}${tail}\n` : head;
  await writeFileAtomic(path, `${kept}${line}\n`);
}

/**
 * The last line of a JSONL file as `appendJsonLine` will leave it before appending: the last complete
 * line (a torn tail that is not JSON is dropped by the append). Undefined for an empty or missing file.
 */
export async function readLastLine(path: string): Promise<string | undefined> {
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  try {
    const { size } = await handle.stat();
    // Lines are small; read a tail large enough to hold a few, or the whole file when it is short.
    for (let want = 64 * 1024; ; want *= 4) {
      const from = Math.max(0, size - want);
      const buffer = Buffer.alloc(size - from);
      await handle.read(buffer, 0, buffer.length, from);
      const text = buffer.toString('utf8');
      const lines = text.split('\n');
      // Without the start of the file, the first piece may be a partial line: never use it.
      const usable = from === 0 ? lines : lines.slice(1);
      const tail = usable.pop() ?? '';
      if (tail.trim() !== '' && isCompleteJson(tail)) return tail;
      const last = usable.reverse().find((line) => line.trim() !== '');
      if (last !== undefined || from === 0) return last;
    }
  } finally {
    await handle.close();
  }
}

/** Whether `text` parses as JSON: a last line that does is whole, not torn by a crash mid-append. */
export function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether something exists at `path` (a file, a directory, anything). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** When the file at `path` was last modified (ms since the epoch), or undefined when it cannot be read. */
export async function modifiedTimeMs(path: string): Promise<number | undefined> {
  return stat(path).then(
    (stats) => stats.mtimeMs,
    () => undefined,
  );
}

/** Open for reading, never waiting on what is there (a FIFO), never taking a terminal for its own. */
export const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
/** `r+` (read and write, no create) the same way. */
export const UPDATE_FLAGS = constants.O_RDWR | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
/** `a+` (read, append, create) the same way, never through a symlink at the path (ELOOP). */
const APPEND_FLAGS =
  constants.O_RDWR |
  constants.O_APPEND |
  constants.O_CREAT |
  (constants.O_NONBLOCK ?? 0) |
  (constants.O_NOCTTY ?? 0) |
  (constants.O_NOFOLLOW ?? 0);

/** Something other than a regular file where Forge reads one: it is not read, nor waited on. */
export class NotRegularFileError extends EnvironmentError {
  /** EISDIR for a directory, as reading one says; ENOTREGULAR for the rest. */
  readonly code: 'EISDIR' | 'ENOTREGULAR';

  constructor(
    readonly path: string,
    info: { isFIFO(): boolean; isDirectory(): boolean },
  ) {
    const kind = info.isFIFO() ? 'a FIFO' : info.isDirectory() ? 'a directory' : 'a device or socket';
    // An expected failure (exit 3, said plainly), not an "unexpected error" to report: Forge makes only
    // files at its paths, so someone or something else put this one there.
    super(
      `${path} is ${kind}, not a regular file: Forge does not read it. Remove it if you did not put it there.`,
      { hint: 'Forge makes only files there: move it out of the way (look inside first) and run again.' },
    );
    this.name = 'NotRegularFileError';
    this.code = info.isDirectory() ? 'EISDIR' : 'ENOTREGULAR';
  }
}

export function isNotRegularFile(error: unknown): error is NotRegularFileError {
  return error instanceof NotRegularFileError;
}

/**
 * The regular file at `path` opened for reading: anything else there (a FIFO, a device, a directory) is
 * a NotRegularFileError, found without waiting on it; a missing file throws ENOENT as open() does.
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const handle = await open(path, READ_FLAGS);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new NotRegularFileError(path, info);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/**
 * The bytes of the regular file at `path` when it holds fewer than `maxBytes`, read at once
 * (`READ_FLAGS`: a FIFO there is never waited on) and without following a link there; null when nothing
 * is there, undefined for anything else. For small files read on a hot path (git's HEAD, after each git
 * call).
 */
export function readSmallRegularFileSync(path: string, maxBytes: number): Buffer | null | undefined {
  // A look first, which says "nothing there" without an exception (most of git's optional files are
  // absent, and a thrown ENOENT costs ~10 µs); the file opened is checked again below.
  let seen: Stats | undefined;
  try {
    seen = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (seen === undefined) return null;
  if (!seen.isFile() || seen.size >= maxBytes) return undefined;
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    return isNotFound(error) ? null : undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size >= maxBytes) return undefined;
    // One byte more than it holds: a file that grew meanwhile fills it, and is not taken as read whole.
    // Not from Node's shared pool, which a kept slice would hold on to whole.
    const bytes = Buffer.allocUnsafeSlow(info.size + 1);
    const read = readSync(fd, bytes, 0, bytes.length, 0);
    return read === bytes.length ? undefined : bytes.subarray(0, read);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** openRegularFile, or undefined when nothing is at `path`. */
export async function openIfExists(path: string): Promise<FileHandle | undefined> {
  return openRegularFile(path).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
}

/** The bytes of the regular file at `path`, or undefined when nothing is there (see openRegularFile). */
export async function readBytesIfExists(path: string): Promise<Buffer | undefined> {
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The open met a symlink where O_NOFOLLOW forbids one. */
function isLinkAt(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ELOOP';
}

function isAlreadyThere(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'EEXIST';
}

export function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT';
}
