// Atomic file writes (temp file in the same directory, fsync, rename) and a torn-line-tolerant append.
import {
  access,
  mkdir,
  open,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

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
  const handle = await open(temp, 'w');
  try {
    await handle.writeFile(content);
    if (options.durable !== false) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Temp files of the two writes below, unique within this process. */
let nowWrites = 0;

/** A fresh temp path beside `path` (a counter, not node:crypto: see writeFileAtomic). */
function tempBeside(path: string): string {
  nowWrites += 1;
  return join(dirname(path), `.${basename(path)}.${process.pid}.w${nowWrites}.tmp`);
}

const jsonText = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * writeJsonAtomic for the rare write that must be on disk before the caller goes on (a process that
 * can be killed any moment after), without a flush: readers and a kill see the old file or the new.
 */
export function writeJsonAtomicNow(path: string, value: unknown): void {
  const temp = tempBeside(path);
  try {
    writeFileSync(temp, jsonText(value));
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
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
    await writeFile(temp, jsonText(value));
    const renamed = !skip();
    if (renamed) renameSync(temp, path);
    else rmSync(temp, { force: true });
    return renamed;
  } catch (error) {
    rmSync(temp, { force: true });
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

/** Reads a file, or returns undefined when it does not exist. */
export async function readFileIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * Appends one line to a JSONL file. The common case is a plain append. When the file ends in a torn
 * line (a crash mid-append), the file is first rewritten atomically without it (or with the missing
 * newline, if the tail is complete JSON), so the ledger stays parseable.
 */
export async function appendJsonLine(path: string, value: unknown): Promise<void> {
  const line = JSON.stringify(value);
  const handle = await open(path, 'a+').catch(async (error: unknown) => {
    if (!isNotFound(error)) throw error;
    await mkdir(dirname(path), { recursive: true });
    return open(path, 'a+');
  });
  try {
    const { size } = await handle.stat();
    const last = Buffer.alloc(1);
    if (size > 0) await handle.read(last, 0, 1, size - 1);
    if (size === 0 || last[0] === 0x0a) {
      await handle.appendFile(`${line}\n`);
      await handle.sync();
      return;
    }
  } finally {
    await handle.close();
  }
  // Rare path: the file ends in a torn line; rewrite it without that line (or just add the newline).
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

/** The file opened for reading; undefined when it does not exist, other errors are thrown. */
export async function openIfExists(path: string): Promise<FileHandle | undefined> {
  return open(path, 'r').catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
}

export function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT';
}
