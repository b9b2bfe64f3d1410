// NDJSON event logs: one JSON object per line, appended as events happen, read back tolerantly.
import { constants } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EnvironmentError } from './errors.js';
import { parseEventLines, readLogLines } from './file-tail.js';
import { ensureOwnDir, OWN_LOG_APPEND, OWN_LOG_CREATE } from './own-log.js';
import type { TextSink } from './text-sink.js';

/** The run's event log is no longer the file the run made at its path: the run stopped writing it. */
export class EventLogReplacedError extends EnvironmentError {
  readonly code = 'ELOGREPLACED';

  constructor(
    readonly path: string,
    why: string,
  ) {
    super(`${path}, this run's event log, ${why}: the run stopped writing it.`, {
      hint: 'Nothing was written through it. Remove it if you did not put it there (an agent can), then run again.',
    });
    this.name = 'EventLogReplacedError';
  }
}

/**
 * Appends events in order; writes are chained so lines never interleave. The file and its directory
 * appear with the first event, so a run that never starts leaves none; the folders are made or checked
 * from `root` (see own-log.ts). A failed write (a full disk, a FIFO at the path) ends the log and never
 * escapes as an unhandled rejection: flush() reports it, and closes the file until the next write.
 */
export function createEventLogWriter(
  path: string,
  root?: string,
  /**
   * The log was deleted under the run (an agent's `git clean -fdx`, fault injection) and written back
   * from the run's open copy, before `event` (the write that found it gone).
   */
  onRestored?: (path: string, event: object) => void,
): { write(event: object): void; flush(): Promise<void> } {
  let chain: Promise<void> = Promise.resolve();
  let made: { dev: number; ino: number } | undefined;
  let handle: FileHandle | undefined;
  let failure: { error: unknown } | undefined;

  /** Writes what the deleted file held to a new one at the path, and goes on with that. */
  const writeBack = async (held: FileHandle, size: number): Promise<void> => {
    const content = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const { bytesRead } = await held.read(content, read, size - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    ensureOwnDir(root ?? dirname(dirname(path)), dirname(path));
    const fresh = await open(path, LOG_CREATE_READABLE, 0o644);
    try {
      await fresh.write(content.subarray(0, read));
    } catch (error) {
      await fresh.close().catch(() => undefined);
      throw error;
    }
    const info = await fresh.stat();
    made = { dev: info.dev, ino: info.ino };
    handle = fresh;
    await held.close().catch(() => undefined);
  };

  // The run id is in every agent's environment, so an agent can name the log: a hard link to
  // ~/.profile put in its place, or a file of its own, would take the run's events from here on.
  // Each append first checks that the path still names the file the run created, with no other name.
  const append = async (line: string, event: object): Promise<void> => {
    if (made === undefined) {
      ensureOwnDir(root ?? dirname(dirname(path)), dirname(path));
      // Created, never opened: run ids are new, and anything at the path is not the run's. Readable,
      // so that a log deleted under the run can be written back from it.
      handle = await open(path, LOG_CREATE_READABLE, 0o644);
      const info = await handle.stat();
      made = { dev: info.dev, ino: info.ino };
    }
    handle ??= await open(path, LOG_APPEND_READABLE);
    let [held, named] = await Promise.all([handle.stat(), lstat(path).catch(() => undefined)]);
    if (held.dev !== made.dev || held.ino !== made.ino) throw new EventLogReplacedError(path, 'was replaced');
    // Deleted (no name left, nothing at the path): written back whole, from the file the run holds.
    if (named === undefined && held.nlink === 0) {
      await writeBack(handle, held.size);
      onRestored?.(path, event);
      [held, named] = await Promise.all([handle.stat(), lstat(path).catch(() => undefined)]);
    }
    if (named?.dev !== made.dev || named.ino !== made.ino)
      throw new EventLogReplacedError(path, 'was moved or replaced');
    if (held.nlink !== 1) throw new EventLogReplacedError(path, 'has another name (a hard link)');
    await handle.write(line);
  };

  return {
    write(event) {
      const line = `${JSON.stringify(event)}\n`;
      chain = chain
        .then(async () => {
          if (failure === undefined) await append(line, event);
        })
        .catch((error: unknown) => {
          failure ??= { error };
        });
    },
    async flush() {
      // In the chain, so a write made meanwhile never finds its file closed under it.
      chain = chain.then(async () => {
        const held = handle;
        handle = undefined;
        await held?.close().catch(() => undefined);
      });
      await chain;
      if (failure !== undefined) throw failure.error;
    },
  };
}

/** A log written back (createEventLogWriter's onRestored), for a warning: by which bead's run, if any. */
export function describeRestoredLog(path: string, event: object): string {
  const { bead } = event as { bead?: unknown };
  const during = typeof bead === 'string' ? ` while ${bead} ran` : '';
  return `this run's event log ${path} was deleted${during} (an agent's git clean?) and written back from the run's open copy.`;
}

/** OWN_LOG_APPEND and _CREATE, opened for reading too (the event log only: written back if deleted). */
const LOG_APPEND_READABLE = (OWN_LOG_APPEND & ~constants.O_WRONLY) | constants.O_RDWR;
const LOG_CREATE_READABLE = (OWN_LOG_CREATE & ~constants.O_WRONLY) | constants.O_RDWR;

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
  return parseEventLines((await readLogLines(path)) ?? []);
}
