// The loop-files port: every file of a loop's state (its workspace, `.forge/loops.json`, templates) is
// read and written through one `LoopFiles`, so autoresearch code can run against the disk or, in tests,
// against memory (test/support/memory-loop-files.ts). Paths are absolute, as `WorkspacePaths` gives them.
//
// It lives in infra, beside the functions the disk implementation wraps, so the runner (src/loop) can
// take one too without importing upwards.
import { resolve } from 'node:path';
import {
  appendJsonLine,
  pathExists,
  readFileIfExists,
  readLastLine,
  writeFileAtomic,
  writeJsonAtomic,
} from './atomic-file.js';
import {
  fileStat,
  listDirIfExists,
  makeDir,
  openRangeReader,
  removePath,
  renamePath,
  type RangeReader,
} from './fs-ops.js';
import { createLogScans, scanLog, type LogQuery, type LogScan } from './log-scan.js';

export type { RangeReader } from './fs-ops.js';
export type { LogQuery, LogScan } from './log-scan.js';

export interface FileStat {
  /** Bytes in the file. */
  size: number;
  /** Last modification, in ms since the epoch. */
  mtimeMs: number;
}

/** Where a file is kept: its store, and its path there. Two ports onto the same file give the same. */
export interface FileLocation {
  /** The storage (one object for the real disk, one per store in memory). */
  store: object;
  /** The file's absolute path in that store. */
  path: string;
}

export interface LoopFiles {
  /** Where `path` is kept, through whatever mapping this port applies (a candidate's own files). */
  locate(path: string): FileLocation;
  /** The file's text, or undefined when there is no file at `path`. */
  readIfExists(path: string): Promise<string | undefined>;
  /** Replaces the file (creating its directories) so a reader sees the old text or the new, never a mix. */
  writeText(path: string, text: string): Promise<void>;
  /** `writeText` of `value` as indented JSON with a final newline. */
  writeJson(path: string, value: unknown): Promise<void>;
  /**
   * Appends `value` as one JSON line. A torn last line (a crash mid-append) is dropped first, or
   * completed with its newline when it is whole JSON, so the file stays one JSON value per line.
   */
  appendJsonLine(path: string, value: unknown): Promise<void>;
  /**
   * The lines of a log that `query` asks for (those holding its needle, the first its test takes, the
   * last few), or undefined when there is no file: only those lines are ever decoded, so a run log of
   * any size is read in the memory of what is found (a line past MAX_SCANNED_LINE_BYTES is passed over).
   */
  scanLog(path: string, query: LogQuery): Promise<LogScan | undefined>;
  /** The last complete line as `appendJsonLine` would leave it; undefined for an empty or missing file. */
  readLastLine(path: string): Promise<string | undefined>;
  /** Byte ranges of the file (a ledger read from where a cache left off); undefined when it is missing. */
  openRange(path: string): Promise<RangeReader | undefined>;
  /** Size and modification time, or undefined when there is no file at `path`. */
  stat(path: string): Promise<FileStat | undefined>;
  /** Whether anything (a file, a directory) exists at `path`. */
  exists(path: string): Promise<boolean>;
  /** The names in a directory, sorted; undefined when it does not exist. */
  list(path: string): Promise<string[] | undefined>;
  /** Creates a directory and its parents; nothing happens when it exists. */
  mkdir(path: string): Promise<void>;
  /** Moves a file or a directory; the target's directory must exist. */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file, or a directory and all it holds; nothing happens when it is already gone. */
  remove(path: string): Promise<void>;
}

/** The real disk: the store every disk port locates its files in. */
const DISK: object = Object.freeze({ store: 'disk' });

/**
 * The loop's files on the real disk: atomic writes (temp file, fsync, rename) through infra. Each log
 * scan reads its log whole unless `rememberScans` (see rememberingScans).
 */
export function diskLoopFiles(options: { rememberScans?: boolean } = {}): LoopFiles {
  const scans = options.rememberScans === true ? createLogScans() : { scan: scanLog };
  const files: LoopFiles = {
    locate: (path) => ({ store: DISK, path: resolve(path) }),
    readIfExists: readFileIfExists,
    scanLog: (path, query) => scans.scan(path, query),
    writeText: writeFileAtomic,
    writeJson: writeJsonAtomic,
    appendJsonLine,
    readLastLine,
    openRange: openRangeReader,
    stat: fileStat,
    exists: pathExists,
    async list(path) {
      return (await listDirIfExists(path))?.sort();
    },
    mkdir: makeDir,
    rename: renamePath,
    remove: (path) => removePath(path, { recursive: true }),
  };
  if (options.rememberScans !== true) DISK_FILES.add(files);
  return files;
}

/** The disk's files whose scans read each log whole (those rememberingScans gives the same with memory). */
const DISK_FILES = new WeakSet<LoopFiles>();

/**
 * The same files for a process that lives on and reads the same logs again and again (the dashboard):
 * on the disk, each log's next scan goes on from where the last stopped (see createLogScans); any other
 * store as it is.
 */
export function rememberingScans(files: LoopFiles): LoopFiles {
  return DISK_FILES.has(files) ? diskLoopFiles({ rememberScans: true }) : files;
}
