// NDJSON event logs: one JSON object per line, appended as events happen, read back tolerantly.
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { LOG_APPEND_FLAGS, openRegularFile } from './atomic-file.js';
import { parseEventLines } from './file-tail.js';
import type { TextSink } from './text-sink.js';

/**
 * Appends events in order; writes are chained so lines never interleave. The file and its directory
 * appear with the first event, so a run that never starts leaves none. A failed write (a full disk)
 * ends the log and never escapes as an unhandled rejection: flush() reports it.
 */
export function createEventLogWriter(path: string): { write(event: object): void; flush(): Promise<void> } {
  let chain: Promise<void> = Promise.resolve();
  let opened = false;
  let failure: { error: unknown } | undefined;
  return {
    write(event) {
      const line = `${JSON.stringify(event)}\n`;
      const first = !opened;
      opened = true;
      chain = chain
        .then(async () => {
          if (failure !== undefined) return;
          if (first) await mkdir(dirname(path), { recursive: true });
          // Never waits on a FIFO put at the log's path: the write fails, and flush() says so.
          await appendFile(path, line, { flag: LOG_APPEND_FLAGS });
        })
        .catch((error: unknown) => {
          failure ??= { error };
        });
    },
    async flush() {
      await chain;
      if (failure !== undefined) throw failure.error;
    },
  };
}

/**
 * Streams objects as NDJSON lines to a sink (stdout for `--json`). ndjson, with the streams library it
 * brings (~100 KB, ~10 ms to load), is loaded here, by the runs that print JSON, not by every run.
 */
export async function createNdjsonStream(sink: TextSink): Promise<{ write(event: object): void }> {
  const loaded = await import('ndjson');
  // Node gives a CommonJS package's exports by name and as `default`; the bundle, as `default` only.
  const ndjson = (loaded as { default?: typeof loaded }).default ?? loaded;
  const stream = ndjson.stringify();
  stream.on('data', (line: string | Buffer) => sink.write(String(line)));
  return { write: (event) => void stream.write(event) };
}

/** Reads an NDJSON file; a torn or corrupt line is skipped and counted, never fatal. */
export async function readEventLog(
  path: string,
): Promise<{ events: Record<string, unknown>[]; skipped: number }> {
  const lines: string[] = [];
  const handle = await openRegularFile(path);
  try {
    const input = handle.createReadStream({ encoding: 'utf8', autoClose: false });
    for await (const line of createInterface({ input, crlfDelay: Infinity })) lines.push(line);
  } finally {
    await handle.close();
  }
  return parseEventLines(lines);
}
