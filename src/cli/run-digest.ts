// What a plain epic's status needs of a run's event log, folded from its events: the run's start and
// end, each bead's last start and whether it ended, each bead's last failure, each gate's last result.
// A run's log grows with every bead it runs (an agent's activity lines most of all: 9 MB for 500 beads
// of 100 lines each, +92 ms a status), so the digest is kept beside the epic's runs with the byte it
// was read to, and the next status reads only what the runner appended since.
//
// The log is only ever appended to. The kept digest is used when the file is the same (device and
// inode), at least as long as the digest's offset, and holds there the same last bytes it held when
// the digest was made (a log rewritten in place reads again from its start). A torn last line (the
// runner mid-write) counts for this status, as a whole read counts it, and is read again by the next.
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { openIfExists, readFileIfExists, writeJsonAtomicNow } from '../infra/atomic-file.js';
import { parseEventLines } from '../infra/file-tail.js';
import { isJsonObject } from '../infra/json-object.js';
import { createLineSplitter } from '../infra/line-splitter.js';
import { isOwnDir } from '../infra/own-log.js';

type Event = Record<string, unknown>;

/** One bead of a run, by its events. */
export interface BeadTrace {
  /** Its last bead_started, while it has not ended since (null once it has). */
  started: Event | null;
  /** Closed or failed after its last start (or with no start in this log). */
  ended: boolean;
  /** Its last bead_failed, or attempt_finished with an outcome other than ok. */
  failure: Event | null;
}

export interface RunDigest {
  /** The first run_started. */
  started: Event | null;
  /** The last run_finished. */
  finished: Event | null;
  beads: Map<string, BeadTrace>;
  /** Each gate's last gate_finished, in the order the gates first finished. */
  gates: Map<string, Event>;
}

/** The events a digest takes; a long run's many `activity` lines are skipped unparsed. */
export const DIGEST_EVENTS =
  /"type":"(run_started|run_finished|bead_started|bead_closed|bead_failed|attempt_finished|gate_finished)"/;

/** The file beside an epic's runs that keeps the digests of its newest logs. */
export const RUN_DIGESTS_FILE = 'status-runs.json';

/** Bumped whenever what a digest holds, or how it is folded, changes. */
const FORMAT = 1;
/** How many logs' digests the file keeps (the newest run's and a live run's, when they differ). */
const KEPT_LOGS = 2;
/** How many bytes before the offset are kept, to tell a log appended to from one rewritten. */
const TAIL_BYTES = 64;
/** What is read at a time. */
const READ_CHUNK_BYTES = 64 * 1024;

export function emptyDigest(): RunDigest {
  return { started: null, finished: null, beads: new Map(), gates: new Map() };
}

/** Folds one event into `digest`. */
export function foldEvent(digest: RunDigest, event: Event): void {
  const { type, bead } = event;
  if (type === 'run_started') digest.started ??= event;
  else if (type === 'run_finished') digest.finished = event;
  else if (type === 'gate_finished') {
    if (typeof event.gate === 'string') digest.gates.set(event.gate, event);
  }
  if (typeof bead !== 'string') return;
  const ends = type === 'bead_closed' || type === 'bead_failed';
  const fails = type === 'bead_failed' || (type === 'attempt_finished' && event.outcome !== 'ok');
  if (type !== 'bead_started' && !ends && !fails) return;
  let trace = digest.beads.get(bead);
  if (trace === undefined) {
    trace = { started: null, ended: false, failure: null };
    digest.beads.set(bead, trace);
  }
  if (type === 'bead_started') {
    trace.started = event;
    trace.ended = false;
  } else if (ends) {
    trace.started = null;
    trace.ended = true;
  }
  if (fails) trace.failure = event;
}

/** The digest of whole `events`, in order. */
export function digestOf(events: readonly Event[]): RunDigest {
  const digest = emptyDigest();
  for (const event of events) foldEvent(digest, event);
  return digest;
}

/** A kept digest: the log it is of, and how far it was read. */
interface Kept {
  name: string;
  file: string;
  offset: number;
  tail: string;
  digest: RunDigest;
}

/**
 * The digest of the log at `path`, read on from where the digest kept at `kept.path` left off when it
 * can be; undefined when there is no log. The digest read to the log's last whole line is kept there
 * for the next status when its folder is the epic's own below `kept.root` (never through a symlink);
 * a digest that cannot be kept is no error.
 */
export async function readRunDigest(
  path: string,
  kept?: { path: string; root: string },
): Promise<RunDigest | undefined> {
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  const name = basename(path);
  let all: Kept[] = [];
  let made: Kept | undefined;
  let digest: RunDigest;
  try {
    const info = await handle.stat({ bigint: true });
    const file = `${info.dev}:${info.ino}`;
    all = kept === undefined ? [] : await readKept(kept.path);
    const before = all.find((entry) => entry.name === name && entry.file === file);
    let offset = 0;
    digest = emptyDigest();
    if (before !== undefined && BigInt(before.offset) <= info.size && (await tailHolds(handle, before))) {
      offset = before.offset;
      digest = before.digest;
    }
    const { partial, end } = await readOn(handle, offset, digest);
    if (kept !== undefined && end > offset) {
      made = { name, file, offset: end, tail: await tailAt(handle, end), digest };
    }
    if (partial !== undefined) {
      // Counted for this read only: the kept digest stays as the whole lines left it.
      digest = copyOf(digest);
      for (const event of partial) foldEvent(digest, event);
    }
  } finally {
    await handle.close();
  }
  if (made !== undefined && kept !== undefined) keep(kept, made, all);
  return digest;
}

/**
 * Folds the whole lines from `offset` on into `digest`; returns where the last whole line ends, and
 * the events of a last line without its newline (counted for this read, not kept).
 */
async function readOn(
  handle: FileHandle,
  offset: number,
  digest: RunDigest,
): Promise<{ partial: Event[] | undefined; end: number }> {
  let lines: string[] = [];
  const splitter = createLineSplitter((line) => {
    if (DIGEST_EVENTS.test(line)) lines.push(line);
  });
  const fold = () => {
    for (const event of parseEventLines(lines).events) foldEvent(digest, event);
    lines = [];
  };
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  const decoder = new TextDecoder('utf-8');
  let position = offset;
  let end = offset;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    const newline = chunk.lastIndexOf(10);
    if (newline >= 0) end = position + newline + 1;
    position += bytesRead;
    // `stream: true` keeps a character split across two reads for the next one.
    splitter.push(decoder.decode(chunk, { stream: true }));
    fold();
  }
  splitter.push(decoder.decode());
  fold();
  // What is left is a line without its newline yet.
  splitter.end();
  const partial = lines.length === 0 ? undefined : parseEventLines(lines).events;
  return { partial, end };
}

async function tailAt(handle: FileHandle, offset: number): Promise<string> {
  const length = Math.min(TAIL_BYTES, offset);
  const bytes = Buffer.alloc(length);
  const { bytesRead } = await handle.read(bytes, 0, length, offset - length);
  return bytes.subarray(0, bytesRead).toString('base64');
}

async function tailHolds(handle: FileHandle, entry: Kept): Promise<boolean> {
  return (await tailAt(handle, entry.offset)) === entry.tail;
}

function copyOf(digest: RunDigest): RunDigest {
  return {
    started: digest.started,
    finished: digest.finished,
    beads: new Map([...digest.beads].map(([bead, trace]) => [bead, { ...trace }])),
    gates: new Map(digest.gates),
  };
}

function keep(kept: { path: string; root: string }, made: Kept, all: readonly Kept[]): void {
  const entries = [made, ...all.filter((entry) => entry.name !== made.name)].slice(0, KEPT_LOGS);
  try {
    if (!isOwnDir(kept.root, dirname(kept.path))) return;
    writeJsonAtomicNow(kept.path, {
      format: FORMAT,
      logs: entries.map((entry) => ({
        name: entry.name,
        file: entry.file,
        offset: entry.offset,
        tail: entry.tail,
        started: entry.digest.started,
        finished: entry.digest.finished,
        beads: [...entry.digest.beads],
        gates: [...entry.digest.gates],
      })),
    });
  } catch {
    // A read-only folder, a full disk: the next status reads the log from its start.
  }
}

/** The kept digests, checked: a file not as written (someone edited it) keeps none. */
async function readKept(path: string): Promise<Kept[]> {
  const text = await readFileIfExists(path).catch(() => undefined);
  if (text === undefined) return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return [];
  }
  if (!isJsonObject(json) || json.format !== FORMAT || !Array.isArray(json.logs)) return [];
  const entries: Kept[] = [];
  for (const value of json.logs) {
    const entry = keptOf(value);
    if (entry === undefined) return [];
    entries.push(entry);
  }
  return entries;
}

function keptOf(value: unknown): Kept | undefined {
  if (!isJsonObject(value)) return undefined;
  const { name, file, offset, tail, started, finished, beads, gates } = value;
  if (typeof name !== 'string' || typeof file !== 'string' || typeof tail !== 'string') return undefined;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) return undefined;
  if (!isEventOrNull(started) || !isEventOrNull(finished)) return undefined;
  if (!Array.isArray(beads) || !Array.isArray(gates)) return undefined;
  const digest: RunDigest = { started, finished, beads: new Map(), gates: new Map() };
  for (const pair of beads) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') return undefined;
    const trace: unknown = pair[1];
    if (!isJsonObject(trace) || typeof trace.ended !== 'boolean') return undefined;
    if (!isEventOrNull(trace.started) || !isEventOrNull(trace.failure)) return undefined;
    digest.beads.set(pair[0], { started: trace.started, ended: trace.ended, failure: trace.failure });
  }
  for (const pair of gates) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') return undefined;
    const event: unknown = pair[1];
    if (!isJsonObject(event)) return undefined;
    digest.gates.set(pair[0], event);
  }
  return { name, file, offset, tail, digest };
}

function isEventOrNull(value: unknown): value is Event | null {
  return value === null || isJsonObject(value);
}
