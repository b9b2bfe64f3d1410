#!/usr/bin/env node
// Builds dist/: each source file of src/ transpiled on its own by esbuild (types stripped, nothing
// checked), because `npm run typecheck` (tsc --noEmit over src, test and scripts) is the one compile
// that checks types. The tsconfig asks for what makes that safe file by file (isolatedModules,
// verbatimModuleSyntax). On a clean clone this takes ~0.2 s against 2.5 s (4 s of CPU) for
// `tsc --noCheck`, and `npm ci` waits for it. `--if-stale` (npm's `prepare` and `pretest`) builds only
// when a source is newer than dist/, so a clean clone builds once: `npm ci` builds, `npm test` then
// finds it fresh.
//
// Then each executable (dist/bin/*.js) is bundled with esbuild into dist/bundle/, split at its dynamic
// imports so a command still loads only what it uses. Node's ESM loader pays per file: execa is 106
// files and 80 ms to import, 23 ms as one; a run started 85 ms sooner. The bundle's inputs per output
// file are in dist/bundle/meta.json (the tests that prove a command stays light read them).
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Written last: the build is whole when it is there and newer than every input.
const built = join(root, 'dist', 'bundle', 'meta.json');
const esbuildPackage = join(root, 'node_modules', 'esbuild', 'package.json');
const ifStale = process.argv.includes('--if-stale');
/** How long a chunk of an earlier build is kept for the runners still using it. */
const KEEP_EARLIER_CHUNKS_MS = 24 * 3600_000;
/** Left out of the bundle: the queue's (loaded by `--executor queue` and `worker` only) and handlebars. */
const EXTERNAL = ['bullmq', 'ioredis', 'handlebars', 'uplot'];
/** The short status path's module: bundled into one file of its own, dist/bundle/status-fast.js. */
const STATUS_FAST = 'dist/cli/status-fast.js';
/** Names the split build's entries for what status-fast.js imports from it (see statusLeaves). */
const LEAF_PREFIX = 'status-leaf-';
/**
 * Leaves whatever they import: br's adapter (36 KB) serves a status on br only, and loads zod itself
 * when it first reads br's answer, so no package rule would make it one.
 */
const ALWAYS_LEAVES = ['dist/beads/br/index.js'];
// The CommonJS packages inside (commander, ndjson) call require for Node's own modules.
const BANNER = {
  js: "import { createRequire as __forgeRequire } from 'node:module';\nconst require = __forgeRequire(import.meta.url);",
};

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
if (!existsSync(esbuildPackage)) {
  process.stderr.write(
    `forge: cannot build dist/: esbuild is not installed in ${root}.\n` +
      `Run \`npm ci\` there first (\`npm install -g .\` links the directory and installs none of its dependencies).\n`,
  );
  process.exit(1);
}
await emit();
await bundle();

/**
 * Each .ts file under src/ as the .js file at the same place under dist/, import paths as written. A
 * syntax error fails the build (esbuild names the file and line) and writes nothing; the output is then
 * marked stale, so the next run builds again.
 */
async function emit() {
  const { build } = await import('esbuild');
  const sources = readdirSync(join(root, 'src'), { recursive: true })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join('src', file));
  try {
    await build({
      absWorkingDir: root,
      entryPoints: sources,
      outdir: 'dist',
      outbase: 'src',
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      tsconfig: 'tsconfig.build.json',
      logLevel: 'error',
    });
  } catch {
    if (existsSync(built)) utimesSync(built, 0, 0);
    process.exit(1);
  }
}

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

/**
 * dist/bin/<name>.js, with what it imports, as dist/bundle/<name>.js and the chunks it shares. Then the
 * short status path as one file: a status loads that file instead of ~50 chunks (Node's loader pays
 * ~0.5 ms per file). What it imports lazily and that brings a package (zod) is a "leaf": an entry of the
 * split build, imported from there, so a status that needs no package loads none.
 */
async function bundle() {
  const binDir = join(root, 'dist', 'bin');
  const entries = existsSync(binDir) ? readdirSync(binDir).filter((name) => name.endsWith('.js')) : [];
  const out = join(root, 'dist', 'bundle');
  const { build } = await import('esbuild');
  const common = {
    absWorkingDir: root,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    metafile: true,
    logLevel: 'warning',
    banner: BANNER,
  };
  const withStatus = existsSync(join(root, STATUS_FAST));
  const leaves = withStatus ? await statusLeaves(build, common) : new Map();
  const made = await build({
    ...common,
    entryPoints: [
      ...entries.map((name) => ({ in: join('dist', 'bin', name), out: name.replace(/\.js$/, '') })),
      ...[...leaves].map(([path, name]) => ({ in: path, out: name })),
    ],
    outdir: out,
    splitting: true,
    // Loaded only by the commands that need them, and packages that find files beside their own code.
    external: EXTERNAL,
    plugins: [englishZodOnly(), ...(withStatus ? [importedAsBuilt(STATUS_FAST, './status-fast.js')] : [])],
  });
  if (withStatus) await bundleStatus(build, common, out, leaves, made.metafile.outputs);
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

/** status-fast.js as one file, its lazy imports of `leaves` left to the split build; adds to `outputs`. */
async function bundleStatus(build, common, out, leaves, outputs) {
  const fast = await build({
    ...common,
    entryPoints: [STATUS_FAST],
    outfile: join(out, 'status-fast.js'),
    splitting: false,
    packages: 'external',
    plugins: [leavesFromSplitBuild(leaves)],
  });
  checkStatusFast(fast.metafile.outputs, leaves);
  Object.assign(outputs, fast.metafile.outputs);
}

/** Static imports (and requires) of each input of a metafile, and its dynamic ones. */
function importGraph(inputs) {
  const edges = new Map();
  for (const [path, input] of Object.entries(inputs)) {
    edges.set(path, {
      static: input.imports.filter((i) => i.kind !== 'dynamic-import'),
      dynamic: input.imports.filter((i) => i.kind === 'dynamic-import' && i.external !== true),
    });
  }
  return edges;
}

/**
 * The leaves of the short status path: modules it imports lazily whose static imports reach a package.
 * Found from a build of status-fast.js that writes nothing; each gets an entry name in the split build.
 */
async function statusLeaves(build, common) {
  const probe = await build({
    ...common,
    entryPoints: [STATUS_FAST],
    outfile: join(root, 'dist', 'status-probe.js'),
    splitting: false,
    packages: 'external',
    write: false,
  });
  const graph = importGraph(probe.metafile.inputs);
  const bringsPackage = (start) => {
    const seen = new Set();
    const queue = [start];
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      if (seen.has(path)) continue;
      seen.add(path);
      for (const edge of graph.get(path)?.static ?? []) {
        if (edge.external === true) {
          if (!edge.path.startsWith('node:')) return true;
        } else queue.push(edge.path);
      }
    }
    return false;
  };
  const leaves = new Map();
  for (const { dynamic } of graph.values()) {
    for (const edge of dynamic) {
      if (leaves.has(edge.path) || !(ALWAYS_LEAVES.includes(edge.path) || bringsPackage(edge.path))) continue;
      leaves.set(
        edge.path,
        LEAF_PREFIX +
          edge.path
            .replace(/^dist\//, '')
            .replace(/\.js$/, '')
            .replaceAll('/', '-'),
      );
    }
  }
  return leaves;
}

/** In the split build, `path` is imported as the file the status build writes beside it. */
function importedAsBuilt(path, as) {
  return {
    name: 'imported-as-built',
    setup(build) {
      build.onResolve({ filter: /\.js$/ }, (args) =>
        args.kind !== 'entry-point' && relative(root, join(args.resolveDir, args.path)) === path
          ? { path: as, external: true }
          : undefined,
      );
    },
  };
}

/** In the status build, a lazy import of a leaf loads the split build's entry for it. */
function leavesFromSplitBuild(leaves) {
  return {
    name: 'leaves-from-split-build',
    setup(build) {
      build.onResolve({ filter: /\.js$/ }, (args) => {
        if (args.kind !== 'dynamic-import') return undefined;
        const name = leaves.get(relative(root, join(args.resolveDir, args.path)));
        return name === undefined ? undefined : { path: `./${name}.js`, external: true };
      });
    },
  };
}

/** status-fast.js may import Node's own modules and, lazily, the leaves: anything else fails the build. */
function checkStatusFast(outputs, leaves) {
  const names = new Set([...leaves.values()].map((name) => `./${name}.js`));
  for (const [file, output] of Object.entries(outputs)) {
    if (!file.endsWith('.js')) continue;
    const wrong = output.imports.filter(
      (i) => !i.path.startsWith('node:') && !(i.kind === 'dynamic-import' && names.has(i.path)),
    );
    if (wrong.length > 0) {
      throw new Error(
        `${file} imports ${wrong.map((i) => `${i.path} (${i.kind})`).join(', ')}: the short status path ` +
          'must load no package. Import what brings one lazily (await import) from the module that needs it.',
      );
    }
  }
}
