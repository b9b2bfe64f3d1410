// Per-run transcript file: the agent's raw stream as it arrives, plus a few Forge-tagged lines.
import { createWriteStream, mkdirSync, openSync } from 'node:fs';
import { LOG_APPEND_FLAGS } from '../infra/atomic-file.js';
import { dirname } from 'node:path';

export interface Transcript {
  /** A line of the agent's own output, verbatim. */
  raw(line: string): void;
  /** A line Forge adds (start, stderr, steps, end), as JSON with a `forge` key naming the kind. */
  note(kind: string, fields?: Record<string, unknown>): void;
  /** Flushes and closes the file. Never throws: a transcript must not fail the bead. */
  close(): Promise<void>;
}

const discard: Transcript = { raw: () => {}, note: () => {}, close: async () => {} };

/** Opens `path` for appending (creating its directory); without a path, a transcript that keeps nothing. */
export async function openTranscript(path: string | undefined): Promise<Transcript> {
  if (path === undefined) return discard;
  let fd: number;
  try {
    // In place: the directory is there after the first bead, and a trip to the thread pool would
    // stand between the runner and the agent's start every time. Without blocking: a FIFO an agent
    // put at the path fails the open at once (ENXIO), and the bead goes on without a transcript.
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, LOG_APPEND_FLAGS);
  } catch {
    return discard;
  }
  const stream = createWriteStream('', { fd, encoding: 'utf8' });
  let broken = false;
  stream.on('error', () => {
    broken = true;
  });
  const write = (text: string) => {
    if (!broken) stream.write(`${text}\n`);
  };
  return {
    raw: write,
    note: (kind, fields = {}) =>
      write(JSON.stringify({ forge: kind, ts: new Date().toISOString(), ...fields })),
    close: () =>
      new Promise<void>((resolve) => {
        if (broken) return resolve();
        stream.once('error', () => resolve());
        stream.end(() => resolve());
      }),
  };
}
