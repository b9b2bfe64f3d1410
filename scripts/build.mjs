#!/usr/bin/env node
// Builds dist/ with tsc --noCheck: the emit of the whole program without its type check, because
// `npm run typecheck` (tsc --noEmit over src, test and scripts) is the one compile that checks types;
// checking src twice cost ~12 s of CPU on a clean clone against ~4 s for this, and the JavaScript is
// the same byte for byte. `--if-stale` (npm's `prepare` and `pretest`) builds only when a source is
// newer than dist/, so a clean clone builds once: `npm ci` builds, `npm test` then finds it fresh.
//
// Then each executable (dist/bin/*.js) is bundled with esbuild into dist/bundle/, split at its dynamic
// imports so a command still loads only what it uses. Node's ESM loader pays per file: execa is 106
// files and 80 ms to import, 23 ms as one; a run started 85 ms sooner. The bundle's inputs per output
// file are in dist/bundle/meta.json (the tests that prove a command stays light read them).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Written last: the build is whole when it is there and newer than every input.
const built = join(root, 'dist', 'bundle', 'meta.json');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const ifStale = process.argv.includes('--if-stale');
/** How long a chunk of an earlier build is kept for the runners still using it. */
const KEEP_EARLIER_CHUNKS_MS = 24 * 3600_000;
/** Left out of the bundle: the queue's (loaded by `--executor queue` and `worker` only) and handlebars. */
const EXTERNAL = ['bullmq', 'ioredis', 'handlebars', 'uplot'];

/** The newest modification time under `path` (directories too: a deleted file changes its directory). */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

function stale() {
  const output = statSync(built, { throwIfNoEntry: false });
  if (output === undefined) return true;
  const inputs = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
  return inputs.some((input) => newest(join(root, input)) > output.mtimeMs);
}

// An unpacked npm package ships dist/ without src/: there is nothing to build from.
if (!existsSync(join(root, 'src'))) process.exit(0);
if (ifStale && !stale()) process.exit(0);
if (!existsSync(tsc)) {
  process.stderr.write(
    `forge: cannot build dist/: TypeScript is not installed in ${root}.\n` +
      `Run \`npm ci\` there first (\`npm install -g .\` links the directory and installs none of its dependencies).\n`,
  );
  process.exit(1);
}
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--noCheck'], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) {
  // A syntax error still fails the build, after the other files were emitted: mark the output stale
  // so the next run builds again.
  if (existsSync(built)) utimesSync(built, 0, 0);
  process.exit(result.status ?? 1);
}
await bundle();

/**
 * zod's `z.locales` re-exports its error messages in 60-odd languages, 450 KB of the 755 KB zod chunk
 * every command loads, though Forge only ever reports in English (zod's default). Bundled, that index
 * holds English only; `z.locales.en` stays what it was.
 */
function englishZodOnly() {
  return {
    name: 'english-zod-only',
    setup(build) {
      build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
        /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
          ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-locales' }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
        contents: `export { default as en } from ${JSON.stringify(args.path)};`,
        resolveDir: dirname(args.path),
      }));
    },
  };
}

/** dist/bin/<name>.js, with what it imports, as dist/bundle/<name>.js and the chunks it shares. */
async function bundle() {
  const binDir = join(root, 'dist', 'bin');
  const entries = existsSync(binDir) ? readdirSync(binDir).filter((name) => name.endsWith('.js')) : [];
  const out = join(root, 'dist', 'bundle');
  const { build } = await import('esbuild');
  const made = await build({
    absWorkingDir: root,
    entryPoints: entries.map((name) => join('dist', 'bin', name)),
    outdir: out,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    metafile: true,
    logLevel: 'warning',
    // Loaded only by the commands that need them, and packages that find files beside their own code.
    external: EXTERNAL,
    plugins: [englishZodOnly()],
    // The CommonJS packages inside (commander, ndjson) call require for Node's own modules.
    banner: {
      js: "import { createRequire as __forgeRequire } from 'node:module';\nconst require = __forgeRequire(import.meta.url);",
    },
  });
  const inputs = Object.fromEntries(
    Object.entries(made.metafile.outputs).map(([file, output]) => [
      relative(out, join(root, file)),
      Object.keys(output.inputs),
    ]),
  );
  writeFileSync(built, `${JSON.stringify({ inputs }, null, 1)}\n`);
  // A runner started before this build still loads its chunks on demand (a command, the end-of-run
  // report): chunks are named by content, so the earlier build's stay a day before they go.
  const current = new Set([...Object.keys(inputs), 'meta.json']);
  for (const name of readdirSync(out)) {
    const path = join(out, name);
    if (!current.has(name) && Date.now() - statSync(path).mtimeMs > KEEP_EARLIER_CHUNKS_MS) rmSync(path);
  }
}
