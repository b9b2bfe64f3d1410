// Loads an executable's bundle from dist/bundle/, or says how to build it when it is not there.
const here = new URL('../dist/bundle/', import.meta.url);

/** @param {'ralph-loop' | 'forge-pack'} name */
export async function runBuilt(name) {
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
