// Per-run transcript file: the agent's raw stream as it arrives, plus a few Forge-tagged lines.
import { createWriteStream } from 'node:fs';
import { openOwnLogSync } from '../infra/own-log.js';

export interface Transcript {
  /** A line of the agent's own output, verbatim. */
  raw(line: string): void;
  /** A line Forge adds (start, stderr, steps, end), as JSON with a `forge` key naming the kind. */
  note(kind: string, fields?: Record<string, unknown>): void;
  /** Flushes and closes the file. Never throws: a transcript must not fail the bead. */
  close(): Promise<void>;
}

/**
 * The most of the agent's output (its lines and its stderr) waiting for the disk. An agent that writes
 * faster than the disk takes it would otherwise grow the runner's memory without bound (100 MB of empty
 * lines held 1.5 GB); past this its lines are dropped, and a `dropped` line says how many once there is
 * room again. Dropping, rather than pausing the agent's pipe, keeps the runner reading its output (the
 * stop signals agents print, the kept tail) at the agent's pace, and the transcript is a record, not
 * what a bead's outcome is judged by. Forge's own lines are never dropped.
 */
const MAX_QUEUED_CHARS = 8 * 1024 * 1024;
/** Lines gathered into one write, at most this much (or what one turn of the event loop brings). */
const BATCH_CHARS = 64 * 1024;
/** Forge's note for a line the agent wrote to stderr: the agent's output, bounded like its stdout. */
const AGENT_KIND = 'stderr';

/**
 * The most of an agent's output one transcript keeps on disk. An agent, or a command it runs, that
 * prints without end until its timeout would otherwise fill the disk overnight, at whatever speed the
 * disk takes it (a full disk stops the run, and every other program on the machine). Past it the
 * agent's lines are left out, but for the last TAIL_CHARS of them, written at the end after a
 * `truncated` line that says how much was left out: how it ended is what a person reads first.
 */
const MAX_TRANSCRIPT_CHARS = 100 * 1024 * 1024;
const TAIL_CHARS = 1024 * 1024;

export interface TranscriptLimits {
  /** The agent's output kept from the start (default MAX_TRANSCRIPT_CHARS). */
  maxChars?: number;
  /** Of what comes past it, the end kept (default 1 MiB). */
  tailChars?: number;
}

const discard: Transcript = { raw: () => {}, note: () => {}, close: async () => {} };

/**
 * Opens `path` for appending, its folders made or checked from `root` (see openOwnLogSync); without a
 * path, a transcript that keeps nothing.
 */
export async function openTranscript(
  path: string | undefined,
  root?: string,
  limits: TranscriptLimits = {},
): Promise<Transcript> {
  const maxChars = limits.maxChars ?? MAX_TRANSCRIPT_CHARS;
  const tailChars = limits.tailChars ?? TAIL_CHARS;
  if (path === undefined) return discard;
  let fd: number;
  try {
    // A link an agent left at the path is removed and the transcript starts afresh; a folder on the
    // way that is a link, or a name that cannot be removed, leaves the bead without a transcript.
    fd = openOwnLogSync(path, root);
  } catch {
    return discard;
  }
  const stream = createWriteStream('', { fd, encoding: 'utf8' });
  let broken = false;
  stream.on('error', () => {
    broken = true;
  });
  // Lines are gathered and handed to the stream a batch at a time: one write per line cost a request
  // object each, which for 100 MB of empty lines was a minute of CPU.
  let batch: string[] = [];
  let batchChars = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (batch.length === 0) return;
    const text = batch.join('');
    batch = [];
    batchChars = 0;
    if (!broken) stream.write(text);
  };
  const queue = (text: string): void => {
    batch.push(text);
    batchChars += text.length;
    if (batchChars >= BATCH_CHARS) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  let dropped = { lines: 0, chars: 0 };
  const sayDropped = (): void => {
    if (dropped.lines === 0) return;
    queue(forgeLine('dropped', { ...dropped, reason: 'the agent wrote faster than the disk took it' }));
    dropped = { lines: 0, chars: 0 };
  };
  // What of the agent's output was taken for the file. Once that reaches maxChars, the end of the rest
  // (whole lines, at most tailChars), and how much was left out before it, written before Forge's next
  // line of its own or at the close.
  let taken = 0;
  let full = false;
  let tail: string[] = [];
  let tailSize = 0;
  let past = { lines: 0, chars: 0 };
  const keepInTail = (text: string): void => {
    tail.push(text);
    tailSize += text.length;
    while (tailSize > tailChars && tail.length > 0) {
      const out = tail.shift() ?? '';
      tailSize -= out.length;
      past.lines += 1;
      past.chars += out.length;
    }
  };
  const writeTail = (): void => {
    if (tail.length === 0 && past.lines === 0) return;
    const reason = `the agent's output passed the ${sizeName(maxChars)} a transcript keeps; the last ${tail.length} line(s) follow`;
    queue(forgeLine('truncated', { ...past, reason }));
    for (const text of tail) queue(text);
    tail = [];
    tailSize = 0;
    past = { lines: 0, chars: 0 };
  };
  const agentLine = (text: string): void => {
    if (broken) return;
    full ||= taken + text.length > maxChars;
    if (full) {
      keepInTail(text);
      return;
    }
    // The stream's queue counts bytes and the batch characters: near enough for a bound. Once full, it
    // drains to half before taking lines again, so the gap is one stretch, not short lines let through.
    const waiting = stream.writableLength + batchChars;
    const limit = dropped.lines > 0 ? MAX_QUEUED_CHARS / 2 : MAX_QUEUED_CHARS;
    if (waiting + text.length > limit) {
      dropped.lines += 1;
      dropped.chars += text.length;
      return;
    }
    sayDropped();
    taken += text.length;
    queue(text);
  };
  return {
    raw: (line) => agentLine(`${line}\n`),
    note: (kind, fields = {}) => {
      if (kind === AGENT_KIND) return agentLine(forgeLine(kind, fields));
      if (broken) return;
      sayDropped();
      writeTail();
      queue(forgeLine(kind, fields));
    },
    close: () =>
      new Promise<void>((resolve) => {
        sayDropped();
        if (!broken) writeTail();
        flush();
        if (broken) return resolve();
        stream.once('error', () => resolve());
        stream.end(() => resolve());
      }),
  };
}

function sizeName(chars: number): string {
  const mib = chars / (1024 * 1024);
  return mib >= 1 ? `${Number(mib.toFixed(1))} MiB` : `${Math.round(chars / 1024)} KiB`;
}

function forgeLine(kind: string, fields: Record<string, unknown>): string {
  return `${JSON.stringify({ forge: kind, ts: new Date().toISOString(), ...fields })}\n`;
}
