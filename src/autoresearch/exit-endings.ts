// Which of the exit calls a watched run logged (infra/exit-watch.ts) were the doer's code ending a
// process that decides a check: a test process, or one whose program is a file the loop's commands name
// (the metric's or a guard's script). A program of the doer's own (a CLI a test spawns) ends itself as
// programs do, and is left alone. So is a test runner ending its run: its frames are its own.
import { isAbsolute, relative, sep } from 'node:path';
import type { ExitRecord } from '../infra/exit-watch.js';
import { isPathInScope } from './keep-revert.js';

export interface EndingRules {
  /** The tree's root, and its real path where that differs: frames carry real paths. */
  roots: readonly string[];
  /** The doer's scope (`scope.doer_paths`). */
  scope: readonly string[];
  /** The files the loop's commands name (its metric, guard and track scripts), relative to the root. */
  commandFiles: readonly string[];
}

/** Each exit call of the doer's in a process that decides a check, as a phrase for the ledger's reason. */
export function doerEndings(records: readonly ExitRecord[], rules: EndingRules): string[] {
  const out: string[] = [];
  for (const record of records) {
    const phrase = doerEnding(record, rules);
    if (phrase !== undefined && !out.includes(phrase)) out.push(phrase);
  }
  return out;
}

function doerEnding(record: ExitRecord, rules: EndingRules): string | undefined {
  const entry = record.entry === null ? undefined : inTree(record.entry, rules.roots);
  const decides = record.test || (entry !== undefined && rules.commandFiles.includes(entry));
  if (!decides) return undefined;
  const call = `${record.via === 'exit' ? 'process.exit' : 'process.reallyExit'}(${String(record.code ?? '')})`;
  const whose = entry === undefined ? 'a test process' : `the process of ${entry}`;
  const frames = record.frames.map((frame) => splitFrame(frame));
  // The innermost code that is neither Node's nor an installed package's made the call: a closure of
  // the metric's that the doer's library calls back is the metric's exit, and a package's `exit()` the
  // doer's code calls is the doer's.
  const caller = frames.find((frame) => !isNodeOwn(frame.file) && !isInstalled(frame.file));
  const path = caller === undefined ? undefined : inTree(caller.file, rules.roots);
  if (caller !== undefined && path !== undefined && isPathInScope(path, rules.scope)) {
    return `ended ${whose} with ${call}, called from ${path}:${caller.line}`;
  }
  // Called by the test runner itself, as a test or a hook: the exit was handed to it as one (seen:
  // `before(process.exit.bind(process, 0))` under mocha, whose run then ends 0 before a failing test).
  // The runner's own exit comes from elsewhere (mocha's lib/cli/run-helpers.js).
  const first = frames.find((frame) => !isNodeOwn(frame.file));
  if (record.test && first !== undefined && RUNS_TESTS.some((runner) => runner.test(first.file))) {
    return `ended ${whose} with ${call}, handed to the test runner as a test or a hook so that no code called it`;
  }
  // Called by no code at all, only by Node's timers or events: the exit was handed to them as a value
  // (`setTimeout(process.exit)`, `queueMicrotask(process.exit.bind(process, 0))`). In a test process
  // nobody honest does that; the test runner's own calls carry its frames.
  if (record.test && frames.every((frame) => isNodeOwn(frame.file))) {
    return `ended ${whose} with ${call}, handed to Node's timers or events so that no code called it`;
  }
  return undefined;
}

/** The code of a test runner that calls each test and hook. */
const RUNS_TESTS = [
  /[\\/]node_modules[\\/]mocha[\\/]lib[\\/]runnable\.js$/,
  /^node:internal\/test_runner\/test$/,
];

/** A frame's file and line (`/a/b.mjs:12`, `node:internal/timers:573`). */
export function splitFrame(frame: string): { file: string; line: string } {
  const at = frame.lastIndexOf(':');
  return at <= 0 ? { file: frame, line: '0' } : { file: frame.slice(0, at), line: frame.slice(at + 1) };
}

/** Node's own code, but not its test runner's: `node:events`, `node:internal/timers`. */
function isNodeOwn(file: string): boolean {
  return file.startsWith('node:') && !file.startsWith('node:internal/test_runner');
}

/** `file` relative to the first root it lies in, with `/`; undefined outside them all. */
export function inTree(file: string, roots: readonly string[]): string | undefined {
  if (!isAbsolute(file)) return undefined;
  for (const root of roots) {
    const path = relative(root, file);
    if (path === '' || path.startsWith('..') || isAbsolute(path)) continue;
    return path.split(sep).join('/');
  }
  return undefined;
}

/** An installed package's file (a scope of the whole tree holds node_modules, which is not the doer's). */
function isInstalled(file: string): boolean {
  return /[\\/]node_modules[\\/]/.test(file);
}
