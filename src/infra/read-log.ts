// The read watches' log (python-watch.ts, node-read-watch.ts): the variables that name it and what
// they watch to every process of a run, and its records as the runner reads them back.
import { parseJsonLines } from './json-object.js';

/** The exit watch's log (exit-watch.ts), named to every process of the run. */
export const EXIT_LOG_VAR = 'FORGE_EXIT_LOG';
/** What the preload tells a process's children about it: `node-test` (node --test's runner), or `other`. */
export const EXIT_PARENT_VAR = 'FORGE_EXIT_PARENT';
/** The scripts the loop's commands name, as a JSON list of real paths: their processes are checks too. */
export const EXIT_ENTRIES_VAR = 'FORGE_EXIT_ENTRIES';
/** The Node preload's file, and the folder beside it that holds the Python hook. */
export const NODE_HOOK_FILE = 'exit-watch.cjs';
export const PYTHON_HOOK_FOLDER = 'python';
/** The read log, named to every process of the run. */
export const READ_LOG_VAR = 'FORGE_READ_LOG';
/** The trees the run measures, as absolute paths joined as PYTHONPATH joins its (`:`). */
export const WATCH_ROOTS_VAR = 'FORGE_WATCH_ROOTS';
/**
 * The metric's own folders in those trees (its scripts and the cases beside them), joined the same
 * way: a file read there is logged whoever reads it, so that outside-reads.ts can tell the doer's
 * code reading the metric's answers, by whatever path it made, from the metric reading them.
 */
export const WATCH_KEYS_VAR = 'FORGE_WATCH_KEYS';
/**
 * Set in a process the doer's code started, to the frame that started it (`/abs/src/x.py:3`): its
 * reads are the doer's, whatever code it runs (`python3 -c …`, `node -e …`, which have no file).
 */
export const WATCH_BY_VAR = 'FORGE_WATCH_BY';

/**
 * What every process of a watched run carries, as the run's env gave it: a child started with an
 * environment of its own is given them back (with the preload in NODE_OPTIONS and the hook's folder
 * on PYTHONPATH), or it would run unwatched.
 */
export const WATCH_VARS = [EXIT_LOG_VAR, EXIT_ENTRIES_VAR, READ_LOG_VAR, WATCH_ROOTS_VAR, WATCH_KEYS_VAR];

/**
 * The environment's variables that tell who runs a process: a test runner's in the processes it tests
 * (node --test, vitest, jest, mocha, pytest), npm's for the script it runs, and Forge's own. The run
 * watches log a line of the scope that asks for one (python-who-watch.ts, node-stack-watch.ts): by the
 * name's start, or the whole name.
 */
export const TELLING_VARIABLES = {
  starts: ['PYTEST_', 'VITEST', 'MOCHA_', 'npm_lifecycle_', 'FORGE_'],
  names: ['NODE_TEST_CONTEXT', 'JEST_WORKER_ID', 'npm_command'],
} as const;

/** One path a Python process opened, listed or removed. */
export interface ReadRecord {
  pid: number;
  /** The audit event: `open`, `os.listdir`, `os.scandir`, `os.remove`, … */
  event: string;
  /** The real absolute path. */
  path: string;
  /**
   * `state`: in a folder of git's, Forge's or br's; `outside`: outside the trees and the usual places;
   * `key`: a file of the metric's own folders (WATCH_KEYS_VAR) opened to be read; `who`: a file of
   * /proc that tells who runs a process (its own command line, environment and open files, anything of
   * another process's, the list of processes).
   */
  kind: 'state' | 'outside' | 'key' | 'who';
  /** Opened for writing, or removed, renamed. */
  write: boolean;
  /** When the file or folder last changed (its ctime, which no code can set back), in ms; null: absent. */
  ctimeMs: number | null;
  /** A `key` file named on the reading process's command line: the metric handed it to the code. */
  handed?: boolean;
  /**
   * A `key` or `who` file read with no file at all on the stack, not by the language's module loader: a
   * read handed to the language's own code (a timer, a promise, a thread pool) so that no file calls it.
   */
  orphan?: boolean;
  /**
   * For a `who` record of what the process itself says, with no path (event `stack`, its stack
   * reached; `sys.argv`, `process.argv` and the like, its command line read): the process's main
   * script, real path. A program of the doer's (a CLI the metric runs) has only its own code on any
   * stack it reaches, and its command line is its input.
   */
  entry?: string;
  /**
   * The files on the stack, innermost first, as `/abs/file.py:12`: Python's own library and code run
   * from a string are left out, installed packages are kept.
   */
  frames: string[];
}

/** A run's log as read back: `complete` is false when it held more than was read (the rest is lost). */
export interface ReadLog {
  records: ReadRecord[];
  complete: boolean;
  /**
   * The watch's logs lost or changed what the runner saw in them as the run went
   * (append-witness.ts): a process no watch sees (a shell) rewrote them, and they hold less than the
   * run did.
   */
  cut?: boolean;
}

/** The log's lines that are records (a line that is not one is left out). */
export function parseReadLog(text: string): ReadRecord[] {
  return parseJsonLines(text, asReadRecord);
}

function asReadRecord(value: unknown): ReadRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.pid !== 'number' || typeof v.event !== 'string' || typeof v.path !== 'string')
    return undefined;
  if (v.kind !== 'state' && v.kind !== 'outside' && v.kind !== 'key' && v.kind !== 'who') return undefined;
  if (!Array.isArray(v.frames) || !v.frames.every((frame) => typeof frame === 'string')) return undefined;
  return {
    pid: v.pid,
    event: v.event,
    path: v.path,
    kind: v.kind,
    write: v.write === true,
    ctimeMs: typeof v.ctimeMs === 'number' ? v.ctimeMs : null,
    frames: v.frames,
    ...(v.handed === true ? { handed: true } : {}),
    ...(v.orphan === true ? { orphan: true } : {}),
    ...(typeof v.entry === 'string' ? { entry: v.entry } : {}),
  };
}
