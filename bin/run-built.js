// Loads an executable's bundle from dist/bundle/, or says how to build it when it is not there.
//
// The executables are CommonJS (bin/package.json): an ES module entry starts Node's ES module loader,
// ~8 ms before anything of Forge's runs. `ralph-loop status` (polled while loops run) then needs none
// of it: its short path is one CommonJS file, required. Every other command imports its bundle.
'use strict';
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const bundle = join(__dirname, '..', 'dist', 'bundle');

/**
 * Runs the executable `name`; a failure to load is thrown (Node prints it and exits 1), a program
 * that is not built is said in two lines and exit 1, one out of file descriptors the same and exit 3.
 * @param {'ralph-loop' | 'forge-pack'} name
 */
async function runBuilt(name) {
  if (name === 'ralph-loop' && process.argv.includes('status') && (await shortStatus())) return;
  const entry = join(bundle, `${name}.js`);
  try {
    await import(pathToFileURL(entry).href);
  } catch (error) {
    const missing =
      error instanceof Error &&
      'code' in error &&
      error.code === 'ERR_MODULE_NOT_FOUND' &&
      error.message.includes(entry);
    // Out of file descriptors, Node cannot read the program's own files: said plainly, as an
    // environment failure (exit 3), not as a stack trace (fault injection: `ulimit -n 18`).
    const starved =
      error instanceof Error && 'code' in error && (error.code === 'EMFILE' || error.code === 'ENFILE');
    if (starved) {
      process.stderr.write(
        `${name}: could not load the program: this process is out of file descriptors (${error.code}).\n` +
          'hint: Raise the limit (ulimit -n; 1024 is plenty) and run again.\n',
      );
      process.exitCode = 3;
      return;
    }
    if (!missing) throw error;
    process.stderr.write(
      `${name}: the program is not built (${entry} is missing).\n` +
        'Run `npm ci` (or `npm run build`) in the Forge checkout first.\n',
    );
    process.exitCode = 1;
  }
}

/**
 * `ralph-loop status <epic>` with plain arguments, straight from its own file (each file Node loads on
 * the way costs it). False when that path does not take the command line, fails, or is not there (a
 * half-copied install): the full program runs it then, and nothing was printed.
 * @returns {Promise<boolean>}
 */
async function shortStatus() {
  let fast;
  try {
    fast = compileStatusFast().exports;
  } catch {
    return false;
  }
  return fast.runStatusShortcut(process.argv);
}

/** The short status path's file, and V8's code for it that the build made (scripts/build.mjs). */
const STATUS_FAST = join(bundle, 'status-fast.cjs');
const STATUS_CACHE = `${STATUS_FAST}.cache`;
/** The cache's first line: this, the build of the file it was made from (the file ends with the same), its length. */
const CACHE_HEAD = 'forge-status-cache ';
const FILE_TAIL = '\n//forge-build ';

/**
 * Compiles and runs status-fast.cjs, with the code the build cached for it: V8 compiles what it does
 * not find there as it goes. Compiling the file was ~7 ms of a status, about a third of its time past
 * Node's own start; with the cache a status ends ~5 ms sooner (bench figure 2b).
 *
 * The cache file is a first line naming the build and the cache's length, then the cache twice. It is
 * offered to V8 only when the build it names is the one the file ends with (a status racing a build
 * never takes the last build's code for this one's text), and its two copies are the same bytes: V8's
 * release builds check a cache's version, flags and source length but not its bytes, and one byte
 * changed in the cache made a status crash (SIGSEGV) or run on. A hash would tell that too, but
 * loading node:crypto (10 ms) or node:zlib (4 ms) costs more than the cache saves; comparing the
 * copies costs a read of 170 KB more.
 * @param {{ cache?: boolean }} [options] `cache: false` compiles from the text alone (the build does).
 * @returns {{ exports: { runStatusShortcut(argv: string[]): Promise<boolean> } & Record<string, unknown>, script: import('node:vm').Script, source: string, cache: 'used' | 'rejected' | 'stale' | 'damaged' | 'missing' }}
 */
function compileStatusFast({ cache = true } = {}) {
  const { readFileSync } = require('node:fs');
  const { Script } = require('node:vm');
  // ASCII (the build prints it so): read as Latin-1, one byte a character, no UTF-8 decoding.
  const source = readFileSync(STATUS_FAST, 'latin1');
  /** @type {Buffer | undefined} */
  let cachedData;
  /** @type {'stale' | 'damaged' | undefined} */
  let refused;
  if (cache) {
    try {
      const data = readFileSync(STATUS_CACHE);
      const end = data.indexOf(10);
      const head = end < 0 ? [] : data.toString('latin1', 0, end).split(' ');
      const [mark, build, bytes] = head;
      const length = Number(bytes);
      if (head.length !== 3 || `${mark} ` !== CACHE_HEAD || !source.endsWith(`${FILE_TAIL}${build}\n`)) {
        refused = 'stale';
      } else if (!Number.isSafeInteger(length) || length <= 0 || data.length !== end + 1 + 2 * length) {
        refused = 'damaged';
      } else {
        const first = data.subarray(end + 1, end + 1 + length);
        if (first.equals(data.subarray(end + 1 + length))) cachedData = first;
        else refused = 'damaged';
      }
    } catch {
      cachedData = undefined;
    }
  }
  // CommonJS's wrapper, with one more argument: how the file imports the split build's modules. Code
  // compiled by node:vm has no import() of its own (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), so this
  // module imports for it.
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname, __forgeImportLeaf) {${source}\n})`,
    { filename: STATUS_FAST, cachedData },
  );
  const module = { exports: {} };
  script.runInThisContext()(module.exports, require, module, STATUS_FAST, bundle, importLeaf);
  const used =
    refused !== undefined
      ? refused
      : cachedData === undefined
        ? 'missing'
        : script.cachedDataRejected === true
          ? 'rejected'
          : 'used';
  return { exports: module.exports, script, source, cache: used };
}

/**
 * A module of the split build, by its name beside status-fast.cjs.
 * @param {string} specifier
 */
function importLeaf(specifier) {
  return import(pathToFileURL(join(bundle, specifier)).href);
}

module.exports = { runBuilt, compileStatusFast, STATUS_CACHE, CACHE_HEAD, FILE_TAIL };
