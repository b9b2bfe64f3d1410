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
 * that is not built is said in two lines and exit 1.
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
    fast = require(join(bundle, 'status-fast.cjs'));
  } catch {
    return false;
  }
  return fast.runStatusShortcut(process.argv);
}

module.exports = { runBuilt };
