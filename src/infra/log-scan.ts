// Finds a few lines in a long log without decoding the rest: the lines holding a needle (searched for
// byte by byte), the first line a test takes, and the last lines. A long loop's run logs are tens of MB
// of its agents' activity, and status and the report want a few thousand lines of them: decoding every
// line into a string was most of their time and memory.
import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { openIfExists } from './atomic-file.js';
import { MAX_LINE_CHARS } from './line-splitter.js';

export interface LogQuery {
  /** Text the wanted lines hold, matched as UTF-8 bytes (so the rest of a line is never decoded to look). */
  needle: string;
  /** Lines are tried from the start, one by one, until this takes one: that one is `first`. */
  first?: (line: string) => boolean;
  /** How many of the last non-blank lines to return (none by default). */
  last?: number;
}

export interface LogScan {
  /** Every line holding the needle, in order. */
  matches: string[];
  /** The first line `query.first` took, if any did. */
  first: string | undefined;
  /** The last `query.last` non-blank lines, the last one last. */
  last: string[];
}

/**
 * A line longer than this (in bytes) is passed over: no event Forge writes comes near it, and only a
 * process writing into the log could make one (a 600 MB line once made `status` fail).
 */
export const MAX_SCANNED_LINE_BYTES = MAX_LINE_CHARS;

/** What scanLog reads at a time. */
const CHUNK_BYTES = 256 * 1024;
const NEWLINE = 0x0a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Scans the log at `path` for what `query` asks; undefined when there is no file. Lines end at '\n'
 * (a '\r' before it is dropped); an unterminated last line counts as a line, as scanLogText reads it.
 */
export async function scanLog(
  path: string,
  query: LogQuery,
  chunkBytes = CHUNK_BYTES,
): Promise<LogScan | undefined> {
  return (await scanFrom(path, query, undefined, chunkBytes, false))?.scan;
}

/** Scans that go on from where the last one of the same log and query stopped. */
export interface LogScans {
  scan(path: string, query: LogQuery, chunkBytes?: number): Promise<LogScan | undefined>;
}

/**
 * scanLog, remembering for each log and query (by identity) where it stopped: the next scan of a log
 * that only grew reads what was added since. A log that was replaced, that shrank, or whose last bytes
 * before that point changed is scanned again from its start. Meant for a process that lives on (the
 * dashboard polls every few seconds): in a one-shot command, what is kept costs more than a second read
 * saves (status of a 10,000-iteration loop took 50 ms longer, the garbage collector copying those lines).
 */
export function createLogScans(): LogScans {
  const points = new WeakMap<LogQuery, Map<string, ScanPoint>>();
  return {
    async scan(path, query, chunkBytes = CHUNK_BYTES) {
      const byPath = points.get(query) ?? new Map<string, ScanPoint>();
      points.set(query, byPath);
      const key = resolve(path);
      // Taken out while in use: the scan going on from it adds to its lists.
      const point = byPath.get(key);
      byPath.delete(key);
      const done = await scanFrom(path, query, point, chunkBytes, true);
      if (done?.point !== undefined) byPath.set(key, done.point);
      return done?.scan;
    },
  };
}

/** Where a scan stood after the last complete line it read: what it found, and the file it read. */
interface ScanPoint extends ScanState {
  dev: number;
  ino: number;
  /** Where the line after the last complete one starts: the next scan reads from here. */
  offset: number;
  /** The bytes just before `offset`: the same if the log only grew since. */
  tail: Buffer;
}

interface ScanState {
  matches: string[];
  first: string | undefined;
  seekingFirst: boolean;
  last: string[];
}

const TAIL_BYTES = 256;

async function scanFrom(
  path: string,
  query: LogQuery,
  point: ScanPoint | undefined,
  chunkBytes: number,
  remember: boolean,
): Promise<{ scan: LogScan; point: ScanPoint | undefined } | undefined> {
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  const chunk = Buffer.allocUnsafe(Math.max(chunkBytes, TAIL_BYTES, BOM.length));
  try {
    const { dev, ino } = await handle.stat();
    const goOn =
      point !== undefined &&
      point.offset > 0 &&
      point.dev === dev &&
      point.ino === ino &&
      (await bytesAt(handle, chunk, point.offset - point.tail.length, point.tail.length)).equals(point.tail);
    const scan = new Scanner(query, goOn ? point : undefined);
    // A byte-order mark opening the file is no part of its first line (a decoder drops it too).
    let position = goOn
      ? point.offset
      : (await bytesAt(handle, chunk, 0, BOM.length)).equals(BOM)
        ? BOM.length
        : 0;
    // Read in turn on this thread: a regular file (openIfExists) in the page cache is read in tens of
    // µs a chunk, and each read handed to libuv's pool left this thread idle 0.3-8 ms waiting for it
    // (97 ms of a report's 680 over a 10,000-iteration loop's 41 MB of logs; 763 -> 710 ms measured).
    for (;;) {
      const bytesRead = readSync(handle.fd, chunk, 0, chunkBytes, position);
      if (bytesRead === 0) break;
      scan.push(chunk.subarray(0, bytesRead));
      position += bytesRead;
    }
    let next: ScanPoint | undefined;
    if (remember) {
      const offset = position - scan.heldBytes;
      const tail = await bytesAt(
        handle,
        chunk,
        Math.max(0, offset - TAIL_BYTES),
        Math.min(offset, TAIL_BYTES),
      );
      next = { dev, ino, offset, tail: Buffer.from(tail), ...scan.state() };
    }
    scan.end();
    return { scan: scan.result(), point: next };
  } finally {
    await handle.close();
  }
}

/** `length` bytes of the file from `position` (fewer at its end), in `buffer`. */
async function bytesAt(
  handle: FileHandle,
  buffer: Buffer,
  position: number,
  length: number,
): Promise<Buffer> {
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/** scanLog over a text already read (the memory store's files, and the reference scanLog is tested against). */
export function scanLogText(text: string, query: LogQuery): LogScan {
  const lines = (text.startsWith('\uFEFF') ? text.slice(1) : text).split('\n');
  if (lines.at(-1) === '') lines.pop();
  const kept = lines
    .filter((line) => Buffer.byteLength(line) <= MAX_SCANNED_LINE_BYTES)
    .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  const wanted = query.last ?? 0;
  return {
    matches: kept.filter((line) => line.includes(query.needle)),
    first: query.first === undefined ? undefined : kept.find(query.first),
    last: wanted === 0 ? [] : kept.filter((line) => line.trim() !== '').slice(-wanted),
  };
}

/** Lines are only ever decoded when one is wanted: for the first, a match, or one of the last. */
class Scanner {
  private readonly needle: Buffer;
  private readonly matches: string[];
  private first: string | undefined;
  private seekingFirst: boolean;
  private last: string[];
  private readonly wantedLast: number;
  /** The start of a line that began in an earlier chunk; `heldBytes` counts it all, kept or not. */
  private held: Buffer[] = [];
  heldBytes = 0;

  /** From the start of a log, or going on from what an earlier scan of it found. */
  constructor(
    private readonly query: LogQuery,
    from?: ScanState,
  ) {
    this.needle = Buffer.from(query.needle, 'utf8');
    if (this.needle.length === 0 || this.needle.includes(NEWLINE))
      throw new Error('scanLog: the needle must be non-empty and on one line');
    this.matches = from?.matches ?? [];
    this.first = from?.first;
    this.seekingFirst = from === undefined ? query.first !== undefined : from.seekingFirst;
    this.last = from === undefined ? [] : [...from.last];
    this.wantedLast = query.last ?? 0;
  }

  /** What the complete lines so far gave (a copy: later lines do not change it). */
  state(): ScanState {
    const { first, seekingFirst } = this;
    return { matches: [...this.matches], first, seekingFirst, last: [...this.last] };
  }

  push(data: Buffer): void {
    let start = 0;
    if (this.heldBytes > 0) {
      const end = data.indexOf(NEWLINE, start);
      if (end === -1) {
        this.hold(data.subarray(start));
        return;
      }
      this.hold(data.subarray(start, end));
      this.heldLine();
      start = end + 1;
    }
    const lastEnd = data.lastIndexOf(NEWLINE);
    if (lastEnd >= start) this.lines(data, start, lastEnd);
    this.hold(data.subarray(Math.max(start, lastEnd + 1)));
  }

  end(): void {
    if (this.heldBytes > 0) this.heldLine();
  }

  result(): LogScan {
    return { matches: this.matches, first: this.first, last: this.last };
  }

  /** The complete lines of `data` from `start` to the newline at `lastEnd`. */
  private lines(data: Buffer, start: number, lastEnd: number): void {
    for (let at = start; this.seekingFirst && at <= lastEnd;) {
      const end = data.indexOf(NEWLINE, at);
      this.tryFirst(data, at, end);
      at = end + 1;
    }
    for (let hit = data.indexOf(this.needle, start); hit !== -1 && hit < lastEnd;) {
      const lineStart = data.lastIndexOf(NEWLINE, hit) + 1;
      const end = data.indexOf(NEWLINE, hit);
      const line = decode(data, Math.max(lineStart, start), end);
      if (line !== undefined) this.matches.push(line);
      hit = data.indexOf(this.needle, end + 1);
    }
    if (this.wantedLast > 0) this.lastLines(data, start, lastEnd);
  }

  /** The last non-blank lines among those of `data` ending by `lastEnd`, after the ones seen before. */
  private lastLines(data: Buffer, start: number, lastEnd: number): void {
    const found: string[] = [];
    for (let end = lastEnd; end >= start && found.length < this.wantedLast;) {
      // (lastIndexOf counts a negative offset from the end: an empty line at `start` is not searched.)
      const lineStart = end === start ? start : Math.max(start, data.lastIndexOf(NEWLINE, end - 1) + 1);
      const line = decode(data, lineStart, end);
      if (line !== undefined && line.trim() !== '') found.unshift(line);
      end = lineStart - 1;
    }
    this.last = [...this.last, ...found].slice(-this.wantedLast);
  }

  private tryFirst(data: Buffer, start: number, end: number): void {
    const line = decode(data, start, end);
    if (line !== undefined && this.query.first?.(line) === true) {
      this.first = line;
      this.seekingFirst = false;
    }
  }

  /** Keeps a line's start while it may still be short enough to read; beyond that only counts it. */
  private hold(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.heldBytes + piece.length <= MAX_SCANNED_LINE_BYTES) this.held.push(Buffer.from(piece));
    else this.held = [];
    this.heldBytes += piece.length;
  }

  /** The held line is complete: it is looked at as a chunk of its own. */
  private heldLine(): void {
    const whole =
      this.heldBytes <= MAX_SCANNED_LINE_BYTES ? Buffer.concat([...this.held, NEWLINE_BYTE]) : undefined;
    this.held = [];
    this.heldBytes = 0;
    if (whole !== undefined) this.lines(whole, 0, whole.length - 1);
  }
}

const NEWLINE_BYTE = Buffer.from([NEWLINE]);

/** The line in `data[start, end)` without a closing '\r'; undefined when it is too long to be read. */
function decode(data: Buffer, start: number, end: number): string | undefined {
  if (end - start > MAX_SCANNED_LINE_BYTES) return undefined;
  const close = end > start && data[end - 1] === 0x0d ? end - 1 : end;
  return data.toString('utf8', start, close);
}
