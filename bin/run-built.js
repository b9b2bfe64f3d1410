// Loads an executable's bundle from dist/bundle/, or says how to build it when it is not there.
const here = new URL('../dist/bundle/', import.meta.url);

/** @param {'ralph-loop' | 'forge-pack'} name */
export async function runBuilt(name) {
  if (name === 'ralph-loop' && process.argv.includes('status') && (await shortStatus())) return;
  const entry = new URL(`${name}.js`, here);
  try {
    await import(entry.href);
  } catch (error) {
    const missing =
      error instanceof Error &&
      'code' in error &&
      error.code === 'ERR_MODULE_NOT_FOUND' &&
      error.message.includes(entry.pathname);
    if (!missing) throw error;
    process.stderr.write(
      `${name}: the program is not built (${entry.pathname} is missing).\n` +
        'Run `npm ci` (or `npm run build`) in the Forge checkout first.\n',
    );
    process.exitCode = 1;
  }
}

/**
 * `ralph-loop status <epic>` with plain arguments, straight from its own file (polled while loops
 * run: each file Node loads on the way costs it). False when that path does not take the command line,
 * fails, or is not there (a half-copied install): the full program runs it then, and nothing was printed.
 */
async function shortStatus() {
  const fast = await import(new URL('status-fast.js', here).href).catch(() => undefined);
  return fast === undefined ? false : fast.runStatusShortcut(process.argv);
}
