// The runner's own copy of a log that a run's processes only append to (the exit and read watches'),
// taken as the run goes. The log is a file any process of the run could rewrite: one the watches do
// not see (a shell the code starts) could cut a record of its own read out of it before the run
// ends, and the log read afterwards would hold nothing of it. The runner reads each append as the
// file system reports it (inotify, in the same moments the run's processes write), so a record cut
// after that is still in the copy, and a log that shrank, or whose start no longer matches what was
// seen, was cut: the run says so, and its records are judged from the copy and the file together.
import { watch, type FSWatcher } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { isNotFound } from './atomic-file.js';

export interface AppendWitness {
  /**
   * What the log holds, and whether it was cut (it lost or changed what was seen in it): then its
   * text is the copy followed by what the file holds now. Undefined when the log is gone.
   */
  settle(): Promise<{ text: string; cut: boolean } | undefined>;
  /** How many bytes of the log have been copied so far. */
  copied(): number;
  /** Stops watching. */
  close(): void;
}

/** Starts copying `path` (which exists) as it grows, to `most` bytes: past them, no run is trusted. */
export function witnessAppends(path: string, most: number): AppendWitness {
  const chunks: Buffer[] = [];
  let length = 0;
  let cut = false;
  let pending: Promise<void> = Promise.resolve();
  const catchUp = async (): Promise<void> => {
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      if (size < length) cut = true;
      const end = Math.min(size, most);
      if (cut || end <= length) return;
      const chunk = Buffer.alloc(end - length);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, length);
      chunks.push(chunk.subarray(0, bytesRead));
      length += bytesRead;
    } finally {
      await handle.close();
    }
  };
  const queue = () => {
    pending = pending.then(catchUp).catch(() => undefined);
    return pending;
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(path, { persistent: false }, () => void queue());
    watcher.on('error', () => undefined);
  } catch {
    // No watch to be had (a file system without one): the copy is taken when the run ends.
  }
  return {
    async settle() {
      await queue();
      let now: Buffer;
      try {
        now = await readFile(path);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
      const seen = Buffer.concat(chunks, length);
      if (cut || now.length < length || !now.subarray(0, length).equals(seen)) {
        cut = true;
        return { text: `${seen.toString('utf8')}\n${now.toString('utf8')}`, cut };
      }
      return { text: now.toString('utf8'), cut };
    },
    copied: () => length,
    close() {
      watcher?.close();
    },
  };
}
