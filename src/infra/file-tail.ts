// Reading files another process is appending to: new bytes since the last read, whole lines only.
import { stat } from 'node:fs/promises';
import { isNotFound, openIfExists, openRegularFile } from './atomic-file.js';
import { isJsonObject } from './json-object.js';
import { createLineSplitter } from './line-splitter.js';

export interface FileTail {
  readonly path: string;
  /** Complete lines appended since the last call; a torn last line waits for its newline. */
  readLines(): Promise<string[]>;
  /** What is left of a torn last line, once the writer is known to be done. */
  rest(): string;
}

/**
 * Tails `path` from byte `offset`. A file that does not exist yet reads as empty; one that shrank
 * (rewritten) is read again from its start.
 */
export function createFileTail(path: string, offset = 0): FileTail {
  let position = offset;
  let pending = '';
  const decoder = new TextDecoder('utf-8');
  return {
    path,
    async readLines() {
      const size = await stat(path).then(
        (info) => info.size,
        (error: unknown) => {
          if (isNotFound(error)) return undefined;
          throw error;
        },
      );
      if (size === undefined) return [];
      if (size < position) {
        position = 0;
        pending = '';
      }
      if (size === position) return [];
      const handle = await openRegularFile(path);
      let text: string;
      try {
        const buffer = Buffer.alloc(size - position);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
        position += bytesRead;
        // `stream: true` keeps a multi-byte character split across reads for the next one.
        text = decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
      } finally {
        await handle.close();
      }
      const lines = (pending + text).split('\n');
      pending = lines.pop() ?? '';
      return lines;
    },
    rest: () => pending,
  };
}

/** Parses NDJSON lines into objects; a line that is not a JSON object is counted, never fatal. */
export function parseEventLines(lines: readonly string[]): {
  events: Record<string, unknown>[];
  skipped: number;
} {
  const events: Record<string, unknown>[] = [];
  let skipped = 0;
  for (const line of lines) {
    if (line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isJsonObject(value)) events.push(value);
      else skipped += 1;
    } catch {
      skipped += 1;
    }
  }
  return { events, skipped };
}

/** What readLogLines reads at a time (a stream's default). */
const READ_CHUNK_BYTES = 64 * 1024;

/**
 * The lines of the log at `path`, or undefined when there is no file. Read a chunk at a time, a line
 * past MAX_LINE_CHARS cut (and so no longer JSON: skipped): an agent can write the logs, and one 600 MB
 * line made `status` fail ("Invalid string length") and `logs` crash in readline (found by the red team).
 */
export async function readLogLines(path: string): Promise<string[] | undefined> {
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  const lines: string[] = [];
  const splitter = createLineSplitter((line) => {
    lines.push(line);
  });
  // A read loop, not handle.createReadStream(): the stream loaded Node's stream modules, ~4 ms of
  // every status.
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  const decoder = new TextDecoder('utf-8');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      // `stream: true` keeps a character split across two reads for the next one.
      splitter.push(decoder.decode(buffer.subarray(0, bytesRead), { stream: true }));
    }
    splitter.push(decoder.decode());
    splitter.end();
  } finally {
    await handle.close();
  }
  return lines;
}
