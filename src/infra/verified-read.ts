// Reading a file as a fingerprint saw it (ignored-files.ts): its content counts only if the file still
// has the identity the fingerprint took once read to its end, so a file changed meanwhile is never
// taken for what it was. Synchronous calls, a fourth of the time of promise-based ones (20,000 files
// of 4 KB: 0.23 s against 0.85 s here), with a pause every 20 ms so timers (a lock's heartbeat) run.
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { identity } from './ignored-files.js';

/** Never blocks on a FIFO put where a file was, never follows a link put there. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const SLICE_MS = 20;

/** An identity's mode and size (its first two fields). */
export const modeOf = (id: string) => Number(id.split(':')[0]);
export const sizeOf = (id: string) => Number(id.split(':')[1]);
export const isLinkIdentity = (id: string) => (modeOf(id) & S_IFMT) === S_IFLNK;

/** Lets the event loop run once a slice of time has passed since it last did. */
export class Slices {
  #since = performance.now();

  async pause(): Promise<void> {
    if (performance.now() - this.#since < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}

/**
 * Hands the bytes of the regular file at `at` to `onChunk` (a view of `buffer`, valid until the next
 * call, unless `buffer` holds the whole file: then it is filled in place) and says whether they are what it held at identity `id`: false for anything else (changed,
 * gone, not a regular file), whatever was handed over.
 */
export async function readAsSeen(
  at: string,
  id: string,
  buffer: Buffer,
  onChunk: (chunk: Buffer) => void,
  slices: Slices,
): Promise<boolean> {
  if ((modeOf(id) & S_IFMT) !== S_IFREG) return false;
  let fd: number;
  try {
    fd = openSync(at, READ_FLAGS);
  } catch {
    return false;
  }
  try {
    // The size the identity names: once that much is read and the identity still holds, it is all.
    const size = sizeOf(id);
    // A buffer that holds it all is filled in place; a smaller one is reused for each chunk.
    const whole = buffer.length >= size;
    for (let total = 0; total < size;) {
      const offset = whole ? total : 0;
      const read = readSync(fd, buffer, offset, Math.min(buffer.length - offset, size - total), null);
      if (read === 0) return false;
      onChunk(buffer.subarray(offset, offset + read));
      total += read;
      await slices.pause();
    }
    return identity(fstatSync(fd, { bigint: true })) === id;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Where the link at `at` leads, if it is the link of identity `id` before and after; else undefined. */
export function linkAsSeen(at: string, id: string): string | undefined {
  try {
    if (identity(lstatSync(at, { bigint: true })) !== id) return undefined;
    const target = readlinkSync(at);
    return identity(lstatSync(at, { bigint: true })) === id ? target : undefined;
  } catch {
    return undefined;
  }
}
