// `.beads/issues.jsonl` as an append log: a change appends the whole changed issue as a new line (the
// last line per id stands, as in br's import), compaction rewrites the file sorted with one line per id.
// Readers follow the file by what was appended since they last looked, and reload it whole only when
// it was replaced or edited.
import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import {
  isCompleteJson,
  NotRegularFileError,
  openIfExists,
  UPDATE_FLAGS,
  writeFileAtomic,
} from '../../infra/atomic-file.js';
import { parseIssueLines, serializeIssueLine, serializeIssuesJsonl } from './line-format.js';
import { IndexedIssues } from './record-index.js';
import type { IssueRecord } from './records.js';

/** Bytes remembered from before the end of what was read, to recognise the same file grown by appends. */
const TAIL_BYTES = 64;
const NEWLINE = 0x0a;

/** What a reader knows about the file it last read. */
export interface LogFile {
  ino: number;
  mtimeMs: number;
  /** The file's size when read. */
  size: number;
  /** Bytes through the last complete line; what follows is a torn append, ignored until a writer cuts it. */
  validSize: number;
  /** The last line is complete JSON without its newline (a hand edit): a writer adds the newline first. */
  missingNewline: boolean;
  /** Lines read, for error messages naming the line of a later append. */
  lines: number;
  /** The TAIL_BYTES bytes before `validSize`. */
  tail: Buffer;
  /** Lines whose id an earlier line already had: what compaction would drop. */
  superseded: number;
  /** Ids strictly increasing, each once, nothing torn: the file is as compaction writes it. */
  compact: boolean;
  lastId: string | undefined;
}

export interface LogState {
  file: LogFile;
  issues: IndexedIssues;
}

/**
 * The file's records as of now: `known` itself when the file did not change, `known` with the lines
 * appended since, or a whole new read. Undefined when the file does not exist. Throws naming
 * `path:line` on a bad line, leaving `known` as it was.
 */
export async function refreshLog(path: string, known: LogState | undefined): Promise<LogState | undefined> {
  // Never waits on a FIFO put there (an agent can write the store's files): an error names it.
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  try {
    const stats = await handle.stat();
    if (known !== undefined && stats.ino === known.file.ino) {
      const file = known.file;
      if (stats.size === file.size && stats.mtimeMs === file.mtimeMs) return known;
      if (stats.size > file.validSize && (await startsWithTail(handle, file))) {
        const appended = await readRange(handle, file.validSize, stats.size);
        const firstLine = file.missingNewline ? file.lines : file.lines + 1;
        const next = readLines(appended, path, firstLine, known.issues, file);
        known.issues.put(next.records);
        known.file = { ...next.file, ino: stats.ino, mtimeMs: stats.mtimeMs, size: stats.size };
        return known;
      }
    }
    const whole = await readRange(handle, 0, stats.size);
    const issues = new IndexedIssues();
    const next = readLines(whole, path, 1, issues, emptyFile());
    issues.put(next.records);
    return { issues, file: { ...next.file, ino: stats.ino, mtimeMs: stats.mtimeMs, size: stats.size } };
  } finally {
    await handle.close();
  }
}

/**
 * Appends `records` as lines (cutting a torn append first, ending an unterminated last line), fsynced,
 * and updates `state` to match. The caller holds the store lock and refreshed `state` under it.
 */
export async function appendToLog(
  path: string,
  state: LogState,
  records: readonly IssueRecord[],
): Promise<void> {
  if (records.length === 0) return;
  const file = state.file;
  const text = `${file.missingNewline ? '\n' : ''}${records.map((r) => `${serializeIssueLine(r)}\n`).join('')}`;
  const bytes = Buffer.from(text, 'utf8');
  const handle = await open(path, UPDATE_FLAGS);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new NotRegularFileError(path, info);
    if (file.size !== file.validSize) await handle.truncate(file.validSize);
    await handle.write(bytes, 0, bytes.length, file.validSize);
    await handle.sync();
    const stats = await handle.stat();
    const next = readLines(
      bytes,
      path,
      file.missingNewline ? file.lines : file.lines + 1,
      state.issues,
      file,
      records,
    );
    state.issues.put(records);
    state.file = { ...next.file, ino: stats.ino, mtimeMs: stats.mtimeMs, size: stats.size };
  } finally {
    await handle.close();
  }
}

/** Rewrites the file atomically: one line per issue, sorted by id. The caller holds the store lock. */
export async function compactLog(path: string, state: LogState): Promise<void> {
  const bytes = Buffer.from(serializeIssuesJsonl(state.issues.map.values()), 'utf8');
  await writeFileAtomic(path, bytes);
  const stats = await stat(path);
  const ids = [...state.issues.map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  state.file = {
    ino: stats.ino,
    mtimeMs: stats.mtimeMs,
    size: stats.size,
    validSize: bytes.length,
    missingNewline: false,
    lines: ids.length,
    tail: Buffer.from(bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES))),
    superseded: 0,
    compact: true,
    lastId: ids.at(-1),
  };
}

/** Whether the log has grown enough superseded lines that rewriting it pays: more than it has issues. */
export function needsCompaction(state: LogState, minimumSuperseded: number): boolean {
  return state.file.superseded > Math.max(minimumSuperseded, state.issues.map.size);
}

function emptyFile(): LogFile {
  return {
    ino: 0,
    mtimeMs: 0,
    size: 0,
    validSize: 0,
    missingNewline: false,
    lines: 0,
    tail: Buffer.alloc(0),
    superseded: 0,
    compact: true,
    lastId: undefined,
  };
}

/**
 * Reads `bytes` (which follow `before.validSize` in the file) as lines: the complete ones, and a last
 * one without its newline when it is complete JSON; a torn rest is left out of `validSize`.
 * `parsed` skips parsing when the caller already has the records of these bytes.
 */
function readLines(
  bytes: Buffer,
  path: string,
  firstLine: number,
  issues: IndexedIssues,
  before: LogFile,
  parsed?: readonly IssueRecord[],
): { records: readonly IssueRecord[]; file: LogFile } {
  const lastNewline = bytes.lastIndexOf(NEWLINE);
  const rest = bytes.subarray(lastNewline + 1);
  const restText = rest.toString('utf8');
  const unterminated = rest.length > 0 && isCompleteJson(restText);
  const usedLength = unterminated ? bytes.length : lastNewline + 1;
  const text = bytes.subarray(0, usedLength).toString('utf8');
  const records = parsed ?? parseIssueLines(text, path, firstLine);
  let { superseded, compact, lastId } = before;
  const seen = new Set<string>();
  for (const record of records) {
    if (issues.map.has(record.id) || seen.has(record.id)) superseded += 1;
    seen.add(record.id);
    if (lastId !== undefined && !(lastId < record.id)) compact = false;
    lastId = record.id;
  }
  const newlines = countNewlines(bytes, usedLength);
  const validSize = before.validSize + usedLength;
  const tail = Buffer.concat([before.tail, bytes.subarray(0, usedLength)]);
  return {
    records,
    file: {
      ...before,
      validSize,
      missingNewline: unterminated || (before.missingNewline && usedLength === 0),
      lines:
        before.lines - (before.missingNewline && usedLength > 0 ? 1 : 0) + newlines + (unterminated ? 1 : 0),
      tail: Buffer.from(tail.subarray(Math.max(0, tail.length - TAIL_BYTES))),
      superseded,
      compact: compact && usedLength === bytes.length,
      lastId,
    },
  };
}

async function startsWithTail(handle: FileHandle, file: LogFile): Promise<boolean> {
  const from = file.validSize - file.tail.length;
  const seen = await readRange(handle, from, file.validSize);
  return seen.equals(file.tail);
}

async function readRange(handle: FileHandle, from: number, to: number): Promise<Buffer> {
  const buffer = Buffer.alloc(to - from);
  let done = 0;
  while (done < buffer.length) {
    const { bytesRead } = await handle.read(buffer, done, buffer.length - done, from + done);
    if (bytesRead === 0) return buffer.subarray(0, done);
    done += bytesRead;
  }
  return buffer;
}

function countNewlines(bytes: Buffer, length: number): number {
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1 && at < length; at = bytes.indexOf(NEWLINE, at + 1))
    count += 1;
  return count;
}
