// Who ended a Node process the loop's checks ran. A test runner counts a test file whose process exits
// 0 before its tests run as passed (node --test), and mocha's whole run ends with the exit code the
// caller chose, so code under test that calls `process.exit(0)` as it is loaded passes a failing suite
// (seen: kept, with the guard `node --test test/` green). No reading of the code tells that call from a
// CLI's honest exit; the stack at the call does. Every Node process a watched run starts loads a small
// preload (through NODE_OPTIONS) that writes one line per exit call, with the process's entry, whether
// it is a test process, and the files on the stack; exit-endings.ts says which were the doer's. In a
// test process it also freezes node:assert, which code the tests import could otherwise rewrite.
//
// The same folder holds a `sitecustomize.py` for the run's Python processes (python-watch.ts), which
// logs what they read outside the commit.
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { witnessAppends } from './append-witness.js';
import { writeFileAtomic } from './atomic-file.js';
import { parseJsonLines } from './json-object.js';
import { makeDir, makeTempDir, removePath } from './fs-ops.js';
import { NODE_READ_WATCH } from './node-read-watch.js';
import { ownTempPrefix, removeLeftTempsOnce } from './left-temp.js';
import { PYTHON_HOOK, withPythonPath } from './python-watch.js';
import {
  EXIT_ENTRIES_VAR,
  EXIT_LOG_VAR,
  EXIT_PARENT_VAR,
  NODE_HOOK_FILE,
  parseReadLog,
  PYTHON_HOOK_FOLDER,
  READ_LOG_VAR,
  WATCH_KEYS_VAR,
  WATCH_ROOTS_VAR,
  WATCH_VARS,
  type ReadLog,
} from './read-log.js';

export { EXIT_ENTRIES_VAR, EXIT_LOG_VAR, EXIT_PARENT_VAR };
const PREFIX = 'forge-exits-';
/** The most of the log read back: a run that starts more Node processes than this is rare. */
const MAX_LOG_CHARS = 4_000_000;

/** One call that ended (or was to end) a Node process. */
export interface ExitRecord {
  pid: number;
  /** The process's main script, as a real absolute path; null for `node -e` and the like. */
  entry: string | null;
  /**
   * A process that runs tests: node --test's runner or a test file's process under it, or a known
   * runner's CLI (mocha, jasmine, ava, tap, tape, uvu).
   */
  test: boolean;
  via: 'exit' | 'reallyExit';
  code: number | string | null;
  /**
   * Each frame of the stack at the call, innermost first: `/abs/file.mjs:12`, `node:internal/…:3`
   * (code run by eval or new Function is left out: its caller's frame follows).
   */
  frames: string[];
}

// CommonJS, for `--require`, in any project (ESM or not) and any Node from 18. Everything it uses is
// taken when the process starts, before the code under test runs; nothing it does may throw.
const HOOK = `'use strict';
(function forgeExitWatch() {
  var env = process.env;
  var log = env.${EXIT_LOG_VAR};
  if (!log) return;
  try {
    var fs = require('fs');
    var path = require('path');
    var url = require('url');
    var openSync = fs.openSync, writeSync = fs.writeSync, closeSync = fs.closeSync;
    var realpathSync = fs.realpathSync, resolve = path.resolve, toPath = url.fileURLToPath;
    var capture = Error.captureStackTrace, stringify = JSON.stringify, apply = Reflect.apply;
    var isArray = Array.isArray;
    var entry = null;
    if (typeof process.argv[1] === 'string' && process.argv[1] !== '') {
      entry = resolve(process.argv[1]);
      try { entry = realpathSync(entry); } catch (_) {}
    }
    var execArgv = process.execArgv;
    var runner = false;
    for (var i = 0; i < execArgv.length; i += 1) if (execArgv[i] === '--test') runner = true;
    var parent = env.${EXIT_PARENT_VAR};
    var test = runner ||
      (parent === 'node-test' && env.NODE_TEST_CONTEXT !== undefined) ||
      (entry !== null && /[\\\\/]node_modules[\\\\/](?:mocha|jasmine|ava|tap|tape|uvu)[\\\\/]/.test(entry));
    env.${EXIT_PARENT_VAR} = runner ? 'node-test' : 'other';
    // The tests' assertions are not the code under test's to change (seen: \`assert.equal = () => {}\`
    // in a module the tests import, kept with a wrong result): frozen, an assignment fails. So are a
    // metric script's, which may check what it measures before it scores it.
    var named = false;
    try {
      var entries = JSON.parse(env.${EXIT_ENTRIES_VAR} || '[]');
      if (isArray(entries)) for (var k = 0; k < entries.length; k += 1) if (entries[k] === entry) named = true;
    } catch (_) {}
    if (test || named) {
      try {
        var assert = require('assert');
        Object.freeze(assert);
        if (assert.strict) Object.freeze(assert.strict);
      } catch (_) {}
    }
    // Above 0 while a watched \`fs\` call runs, or the watch's own: the read watch's wrappers pass them.
    var depth = 0;
    // The stack above the function "above" as V8 call sites (the read watch takes them too); [] if none.
    var callSites = function (above) {
      var prepare = Error.prepareStackTrace, limit = Error.stackTraceLimit, sites = [];
      try {
        Error.prepareStackTrace = function (_, s) { return s; };
        Error.stackTraceLimit = 64;
        var holder = {};
        capture(holder, above);
        sites = holder.stack;
      } catch (_) {
      } finally {
        Error.prepareStackTrace = prepare;
        Error.stackTraceLimit = limit;
      }
      return isArray(sites) ? sites : [];
    };
    var record = function (via, code, above) {
      var sites = callSites(above);
      var frames = [];
      for (var j = 0; j < sites.length; j += 1) {
        try {
          var site = sites[j];
          // Code run by eval or new Function: its caller is the next frame.
          if (site.isEval()) continue;
          var file = site.getFileName();
          if (typeof file !== 'string' || file === '') continue;
          if (file.indexOf('file://') === 0) file = toPath(file);
          frames[frames.length] = file + ':' + (site.getLineNumber() || 0);
        } catch (_) {}
      }
      if (code === undefined) code = process.exitCode === undefined ? 0 : process.exitCode;
      if (typeof code !== 'number' && typeof code !== 'string') code = null;
      var line = stringify({ pid: process.pid, entry: entry, test: test, via: via, code: code, frames: frames });
      depth += 1;
      try {
        var fd = openSync(log, 'a');
        try { writeSync(fd, line + '\\n'); } finally { closeSync(fd); }
      } finally {
        depth -= 1;
      }
    };
    // Every call is logged, one made in an 'exit' listener too (it sets the code the process ends
    // with); process.exit's own call of reallyExit is not a second.
    var exit = process.exit, reallyExit = process.reallyExit, exiting = 0;
    process.exit = function exit_(code) {
      try { record('exit', code, exit_); } catch (_) {}
      exiting += 1;
      try { return apply(exit, this, arguments); } finally { exiting -= 1; }
    };
    if (typeof reallyExit === 'function') {
      process.reallyExit = function reallyExit_(code) {
        if (exiting === 0) try { record('reallyExit', code, reallyExit_); } catch (_) {}
        return apply(reallyExit, this, arguments);
      };
    }
    // What a child needs to be watched as this process is, taken before the code under test runs: a
    // child started with an environment of its own (\`{ env: { PATH } }\`), or with the watch's variables
    // changed, would run unwatched (node-read-watch.ts's spawn wrappers call this on each one's env).
    // Another watch's preload in its NODE_OPTIONS is Forge run under Forge: that watch's to set.
    var hookFile = __filename;
    var pythonFolder = path.join(path.dirname(hookFile), '${PYTHON_HOOK_FOLDER}');
    var requireHook = '--require "' + hookFile.replace(/["\\\\]/g, function (c) { return '\\\\' + c; }) + '"';
    var watchValues = [];
    ${JSON.stringify(WATCH_VARS)}.forEach(function (name) {
      if (typeof env[name] === 'string') watchValues.push([name, env[name]]);
    });
    var keepWatched = function (pairs) {
      var at = Object.create(null);
      for (var i = 0; i < pairs.length; i += 1) {
        var pair = String(pairs[i]), eq = pair.indexOf('=');
        if (eq > 0) at[pair.slice(0, eq)] = i;
      }
      var value = function (name) { return at[name] === undefined ? undefined : String(pairs[at[name]]).slice(name.length + 1); };
      var put = function (name, v) {
        if (at[name] === undefined) { at[name] = pairs.length; pairs.push(name + '=' + v); } else pairs[at[name]] = name + '=' + v;
      };
      var options = value('NODE_OPTIONS') || '';
      if (options.split(hookFile).join('').indexOf('${NODE_HOOK_FILE}') >= 0) return;
      if (options.indexOf(hookFile) < 0) put('NODE_OPTIONS', (options + ' ' + requireHook).trim());
      for (var k = 0; k < watchValues.length; k += 1) put(watchValues[k][0], watchValues[k][1]);
      if (value('${EXIT_PARENT_VAR}') === undefined && typeof env.${EXIT_PARENT_VAR} === 'string') put('${EXIT_PARENT_VAR}', env.${EXIT_PARENT_VAR});
      if (typeof env.${READ_LOG_VAR} === 'string') {
        var pythonPath = value('PYTHONPATH') || '';
        if (pythonPath.split(path.delimiter).indexOf(pythonFolder) < 0) put('PYTHONPATH', pythonPath === '' ? pythonFolder : pythonFolder + path.delimiter + pythonPath);
      }
    };
    try {${NODE_READ_WATCH}} catch (_) {}
  } catch (_) {}
})();
`;

export interface ExitWatch {
  /**
   * `env` with the preload added to NODE_OPTIONS (after the user's own) and the log named; `entries`
   * are the real paths of the scripts the loop's commands name, whose processes freeze node:assert as
   * a test's do. `keys` are the metric's own folders in those trees (python-watch.ts's WATCH_KEYS_VAR).
   */
  env: (
    env: Readonly<Record<string, string | undefined>>,
    entries?: readonly string[],
    roots?: readonly string[],
    keys?: readonly string[],
  ) => Record<string, string | undefined>;
  /**
   * The exit calls logged so far (a line that is not one is left out); undefined when the log is gone,
   * which only code of the run can have done.
   */
  read(): Promise<ExitRecord[] | undefined>;
  /**
   * What the run's Python processes read and wrote outside the commit (python-watch.ts), when `env`
   * was given the trees it measures; undefined when the log is gone.
   */
  reads(): Promise<ReadLog | undefined>;
  /** Removes the preload and its log. */
  remove(): Promise<void>;
}

/**
 * A preload and an empty log in a directory of their own under this process's temp directory (not the
 * run's: that one is the measured code's to write). Undefined when none could be made: the run goes
 * on unwatched rather than not at all.
 */
export async function startExitWatch(base: string = tmpdir()): Promise<ExitWatch | undefined> {
  let dir: string;
  try {
    await removeLeftTempsOnce(base, PREFIX);
    dir = await makeTempDir(ownTempPrefix(PREFIX), base);
    await writeFileAtomic(join(dir, NODE_HOOK_FILE), HOOK);
    await writeFileAtomic(join(dir, 'exits.jsonl'), '');
    await makeDir(join(dir, PYTHON_HOOK_FOLDER));
    await writeFileAtomic(join(dir, PYTHON_HOOK_FOLDER, 'sitecustomize.py'), PYTHON_HOOK);
    await writeFileAtomic(join(dir, 'reads.jsonl'), '');
  } catch {
    return undefined;
  }
  const hook = join(dir, NODE_HOOK_FILE);
  const log = join(dir, 'exits.jsonl');
  const readLog = join(dir, 'reads.jsonl');
  const exitCopy = witnessAppends(log, MAX_LOG_CHARS);
  const readCopy = witnessAppends(readLog, MAX_LOG_CHARS);
  return {
    env: (env, entries = [], roots = [], keys = []) => ({
      ...env,
      NODE_OPTIONS: withRequire(env.NODE_OPTIONS, hook),
      [EXIT_LOG_VAR]: log,
      [EXIT_PARENT_VAR]: undefined,
      [EXIT_ENTRIES_VAR]: entries.length === 0 ? undefined : JSON.stringify(entries),
      ...(roots.length === 0
        ? {}
        : {
            PYTHONPATH: withPythonPath(env.PYTHONPATH, join(dir, PYTHON_HOOK_FOLDER), delimiter),
            [READ_LOG_VAR]: readLog,
            [WATCH_ROOTS_VAR]: roots.join(delimiter),
            [WATCH_KEYS_VAR]: keys.length === 0 ? undefined : keys.join(delimiter),
          }),
    }),
    async read() {
      const settled = await exitCopy.settle();
      return settled === undefined ? undefined : parseExitLog(settled.text.slice(0, MAX_LOG_CHARS));
    },
    async reads() {
      const settled = await readCopy.settle();
      if (settled === undefined) return undefined;
      const { text } = settled;
      const cut = settled.cut || (await exitCopy.settle())?.cut === true;
      return {
        records: parseReadLog(text.slice(0, MAX_LOG_CHARS)),
        complete: text.length <= MAX_LOG_CHARS,
        ...(cut ? { cut } : {}),
      };
    },
    remove: () => {
      exitCopy.close();
      readCopy.close();
      return removePath(dir, { recursive: true }).catch(() => undefined);
    },
  };
}

/** NODE_OPTIONS with `--require <file>` after what it held; the path quoted as Node reads it. */
export function withRequire(options: string | undefined, file: string): string {
  const quoted = `"${file.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return [options?.trim() ?? '', `--require ${quoted}`].filter((part) => part !== '').join(' ');
}

/** The log's lines that are exit records. */
export function parseExitLog(text: string): ExitRecord[] {
  return parseJsonLines(text, asExitRecord);
}

function asExitRecord(value: unknown): ExitRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.pid !== 'number' || typeof v.test !== 'boolean') return undefined;
  if (v.via !== 'exit' && v.via !== 'reallyExit') return undefined;
  if (!Array.isArray(v.frames) || !v.frames.every((frame) => typeof frame === 'string')) return undefined;
  return {
    pid: v.pid,
    entry: typeof v.entry === 'string' ? v.entry : null,
    test: v.test,
    via: v.via,
    code: typeof v.code === 'number' || typeof v.code === 'string' ? v.code : null,
    frames: v.frames,
  };
}
