// Which of the paths a watched run's Python and Node processes touched outside the commit
// (infra/python-watch.ts, infra/node-read-watch.ts) the doer's code reached for. A file in git's,
// Forge's or br's folder is never the commit's: code of the doer's scope that reads or writes one
// scores what its turn left there. A file outside the trees is the machine's (a dataset, a tool's
// settings) unless it changed after the loop began: only then can a doer's turn have left it, and its
// ctime says so, which no code can set back. The reader is the innermost file on the stack that is not
// the language's own: an installed package reading its own settings is not the doer's code. A call
// handed to the language's own code (a thread pool, a timer) has no file on its stack at all; nobody
// honest does that for a read of these places.
import { isAbsolute } from 'node:path';
import type { ReadLog, ReadRecord } from '../infra/read-log.js';
import { inTree, splitFrame } from './exit-endings.js';
import { isPathInScope } from './keep-revert.js';

export interface ReadRules {
  /** The tree's root, and its real path where that differs: the log carries real paths. */
  roots: readonly string[];
  /** The doer's scope (`scope.doer_paths`). */
  scope: readonly string[];
  /** The files the loop's commands name (its metric, guard and track scripts): not the doer's. */
  commandFiles: readonly string[];
  /**
   * When the loop began (its baseline's ledger line), in ms. Undefined: no file outside the trees is
   * judged, only git's, Forge's and br's folders.
   */
  since?: number | undefined;
  /**
   * The run is the metric's: a line of the scope that reads its process's command line (`sys.argv`,
   * `process.argv`) is judged. In a check's run it is not: a module under test may read it there (a
   * CLI's `main()` under a `sys.argv` the test patched), and code that tells the metric from the
   * tests reads it under the metric too.
   */
  asks?: boolean;
}

/** The most phrases one run's reason names; the rest are counted. */
const MOST_NAMED = 4;

export interface DoerReads {
  /** Each path, as a phrase for the ledger's reason (`read .git/cache (from src/lib.py:4)`). */
  phrases: string[];
  /** The doer's files that read them, relative to the root. */
  readers: string[];
}

/** Each path the doer's code reached for outside the commit, and which of its files did. */
export function doerReads(log: ReadLog, rules: ReadRules): DoerReads {
  const phrases: string[] = [];
  const readers = new Set<string>();
  const keys = metricReads(log, rules);
  for (const record of log.records) {
    const read =
      record.kind === 'key'
        ? keyRead(record, rules, keys)
        : record.kind === 'who'
          ? whoRead(record, rules)
          : doerRead(record, rules);
    if (read === undefined) continue;
    if (!phrases.includes(read.phrase)) phrases.push(read.phrase);
    if (read.reader !== undefined) readers.add(read.reader);
  }
  const named =
    phrases.length > MOST_NAMED
      ? [...phrases.slice(0, MOST_NAMED), `${phrases.length - MOST_NAMED} more`]
      : phrases;
  // What was not read back may hold anything: a run that logs that much has no score to trust.
  if (!log.complete) named.push("logged more paths outside the commit than Forge's watch reads back");
  if (log.cut === true) named.push("cut a log of Forge's watch short, or rewrote it");
  return { phrases: named, readers: [...readers].sort() };
}

/** What a phrase of a read of the metric's own files (keyRead) says after the file. */
const KEY_READ = ', which the metric reads for itself';

/** Who read a path, when no file of any program is on the stack. */
const NO_CALLER = "handed to the language's own code so that no file of the repository called it";

/** Whether `phrase` (of doerReads) is of a read of the metric's own files, not of what no commit holds. */
export function isMetricKeyRead(phrase: string): boolean {
  return phrase.includes(KEY_READ);
}

/**
 * The files of the metric's own folders that the metric read itself (no file of the doer's on the
 * stack): what it compares the code's answers with, or reads as the code does.
 */
function metricReads(log: ReadLog, rules: ReadRules): Set<string> {
  const read = new Set<string>();
  for (const record of log.records) {
    if (record.kind === 'key' && record.orphan !== true && doerFrame(record, rules) === undefined)
      read.add(record.path);
  }
  return read;
}

/**
 * A file of the metric's own folders that the doer's code read and the metric read too in the same
 * run: the code read the metric's cases with their answers, by whatever path it made (seen:
 * `join(__dirname, '..', 'metric')` listed and read, which names no file of the metric's). One the
 * metric handed the code on its command line, or that the metric never read, is the code's input.
 */
function keyRead(
  record: ReadRecord,
  rules: ReadRules,
  metricRead: ReadonlySet<string>,
): { phrase: string; reader?: string } | undefined {
  // A process it started was given the file, or a folder holding one (`cat`, `grep -r`: unwatched).
  const started = record.event === 'spawn';
  const read = (path: string) =>
    metricRead.has(path) || (started && [...metricRead].some((file) => file.startsWith(`${path}/`)));
  if (record.handed === true || !read(record.path)) return undefined;
  const where = inTree(record.path, rules.roots) ?? record.path;
  return byDoer(record, rules, `${started ? 'gave a process it started' : 'read'} ${where}${KEY_READ}`);
}

/**
 * `what` (a phrase of a read) said with who did it: the innermost file of the scope on the record's
 * stack, or no one when no file called it (an orphan); undefined when the doer's code is not on it.
 */
function byDoer(
  record: ReadRecord,
  rules: ReadRules,
  what: string,
): { phrase: string; reader?: string } | undefined {
  if (record.orphan === true) return { phrase: `${what} (${NO_CALLER})` };
  const by = doerFrame(record, rules);
  if (by === undefined) return undefined;
  // Line 0: the process's own entry, a program of the doer's, with no line of its own on the stack.
  const from =
    by.line === '0' ? `in ${by.path}, the doer's program, by no line of it` : `from ${by.path}:${by.line}`;
  return { phrase: `${what} (${from})`, reader: by.path };
}

/**
 * A file of /proc that tells the doer's code who runs its process (its command line, its parent's), or
 * the stack it reached: code that asks can do one thing under the metric and another under the tests
 * that check it (seen: a `work()` that returned at once unless `/proc/self/cmdline` named a test, kept
 * at 350 times its speed with the tests green), or what the process has spent so far (its memory and
 * CPU time, which a test runner's imports add to). Its limits are not such a file (the watches say which).
 */
function whoRead(record: ReadRecord, rules: ReadRules): { phrase: string; reader?: string } | undefined {
  // What the process itself says (its stack, its command line) is logged with no path. A program of
  // the doer's reaches a stack of its own code only, and its command line is its input.
  const asked = record.path === '';
  if (asked && record.entry !== undefined && doerFile(record.entry, rules) !== undefined) return undefined;
  if (asked && record.event !== 'stack' && rules.asks !== true) return undefined;
  const where = record.path.replace(new RegExp(`^/proc/${record.pid}(?=/|$)`), '/proc/self');
  return byDoer(
    record,
    rules,
    record.event === 'stack'
      ? 'reached the stack of its process, which tells it who runs it'
      : asked
        ? `read ${record.event}, which tells it who runs its process`
        : `${verb(record)} ${where}, which tells it who runs its process`,
  );
}

/** The innermost frame of `record`'s stack in a file of the doer's scope (not the metric's, nor installed). */
function doerFrame(record: ReadRecord, rules: ReadRules): { path: string; line: string } | undefined {
  for (const frame of record.frames.map(splitFrame)) {
    if (!isAbsolute(frame.file)) continue;
    const path = doerFile(frame.file, rules);
    if (path !== undefined) return { path, line: frame.line };
  }
  return undefined;
}

/** `file` (absolute) as a path of the doer's scope, relative to the root; undefined when it is not one. */
function doerFile(file: string, rules: ReadRules): string | undefined {
  if (isInstalled(file)) return undefined;
  const path = inTree(file, rules.roots);
  return path !== undefined && !rules.commandFiles.includes(path) && isPathInScope(path, rules.scope)
    ? path
    : undefined;
}

function doerRead(record: ReadRecord, rules: ReadRules): { phrase: string; reader?: string } | undefined {
  // Code with no file of its own (a worker's eval, `[worker eval]:1`) is no reader: its caller is.
  const frames = record.frames.map(splitFrame).filter((frame) => isAbsolute(frame.file));
  const doers = (file: string) => doerFile(file, rules);
  let by: { path: string; line: string } | undefined;
  if (record.kind === 'state') {
    for (const frame of frames) {
      const path = doers(frame.file);
      if (path !== undefined) {
        by = { path, line: frame.line };
        break;
      }
    }
  } else {
    // A file the loop found there, or none at all: the machine's, whoever reads it.
    if (record.write || rules.since === undefined) return undefined;
    if (record.ctimeMs === null || record.ctimeMs <= rules.since) return undefined;
    const reader = frames[0];
    const path = reader === undefined ? undefined : doers(reader.file);
    if (reader !== undefined && path === undefined) return undefined;
    by = reader === undefined || path === undefined ? undefined : { path, line: reader.line };
  }
  if (by === undefined && frames.length > 0) return undefined;
  const where = inTree(record.path, rules.roots) ?? record.path;
  const what =
    record.kind === 'state'
      ? `${verb(record)} ${where}`
      : `${verb(record)} ${where}, which changed after the loop began`;
  const caller = by === undefined ? NO_CALLER : `from ${by.path}:${by.line}`;
  return { phrase: `${what} (${caller})`, ...(by === undefined ? {} : { reader: by.path }) };
}

/** What the code did to the path, by the event logged (Python's audit events, Node's `fs` calls). */
function verb(record: ReadRecord): string {
  const call = record.event.replace(/^os\./, '').replace(/Sync$/, '');
  if (/^(?:listdir|scandir|readdir|opendir)$/.test(call)) return 'listed';
  if (
    /^(?:stat|lstat|exists|access|readlink|realpath|statfs|statvfs|pathconf|getxattr|listxattr|chdir)(?:\.native)?$/.test(
      call,
    )
  )
    return 'looked at';
  if (call === 'remove' || call === 'rmtree') return 'removed';
  if (!record.write) return 'read';
  return call === 'open' ? 'wrote' : 'changed';
}

/** An installed package's file: a virtual environment inside the tree is not the doer's code. */
function isInstalled(file: string): boolean {
  return /[\\/](?:site-packages|dist-packages|node_modules)[\\/]/.test(file);
}
