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
//
// Last, the program behind both executables' first lines (dist/cli/main.js and all it imports) as one
// CommonJS file, with V8's code cache for it, which the executables load instead of main.js's chunks
// (src/cli/program.ts says why and how). Each module in it still runs only when first imported.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Written last: the build is whole when it is there and newer than every input.
const built = join(root, 'dist', 'bundle', 'meta.json');
const esbuildPackage = join(root, 'node_modules', 'esbuild', 'package.json');
const ifStale = process.argv.includes('--if-stale');
/**
 * `npm pack` and `npm publish` (their `prepare`): the package gets this build alone. Earlier builds'
 * files are kept a while for the runners still using them (KEEP_EARLIER_*), and would ship with it
 * (3,580 files, 39 MB, in a checkout built all day). A runner of this checkout started before its last
 * build may then miss a chunk it loads late (the end-of-run report): packing is not done mid-run.
 */
const packing = ['pack', 'publish'].includes(process.env.npm_command ?? '');
/** How long a chunk of an earlier build is kept for the runners still using it. */
const KEEP_EARLIER_CHUNKS_MS = 24 * 3600_000;
/**
 * How long an earlier build's program and cache are kept: a runner reads them whole as it starts, right
 * after program.json, so only a start racing the build needs them (they are 2.6 MB a build).
 */
const KEEP_EARLIER_PROGRAM_MS = 10 * 60_000;
/** Left out of the bundle: the queue's (loaded by `--executor queue` and `worker` only) and handlebars. */
const EXTERNAL = ['bullmq', 'ioredis', 'handlebars', 'uplot'];
/** The short status path's module: bundled into one file of its own, dist/bundle/status-fast.cjs. */
const STATUS_FAST = 'dist/cli/status-fast.js';
/** That file's name in dist/bundle/ (bin/run-built.js requires it). */
const STATUS_FAST_FILE = 'status-fast.cjs';
/** V8's code for status-fast.cjs, beside it (bin/run-built.js reads it; see bundleStatus). */
const STATUS_CACHE_FILE = `${STATUS_FAST_FILE}.cache`;
/** Makes that cache for the build, after a warm-up status. */
const STATUS_WARM_UP = 'dist/cli/status-warm-up.js';
/** What the status build takes for node:fs/promises (see syncFsPromises). */
const SYNC_FS_PROMISES = 'dist/infra/sync-fs-promises.js';
/** Names the split build's entries for what status-fast.js imports from it (see statusLeaves). */
const LEAF_PREFIX = 'status-leaf-';
/**
 * Leaves whatever they import: br's adapter (36 KB) serves a status on br only, and loads zod itself
 * when it first reads br's answer, so no package rule would make it one.
 */
const ALWAYS_LEAVES = ['dist/beads/br/index.js'];
/** Names the program and its cache (src/cli/program.ts reads it). */
const PROGRAM_MANIFEST = 'program.json';
/** How a child that writes a code cache marks the line saying how it went (see cacheChild). */
const CACHE_RESULT = 'forge-code-cache: ';
/** Loads the program, and makes its cache for the build. */
const PROGRAM_LOADER = 'dist/cli/program.js';
/**
 * The lines of esbuild's two helpers that run a bundled module the first time it is imported (ES
 * modules) or required (CommonJS). Each gets a call that reports the module's path to a tracer when one
 * is installed (globalThis.__forgeModuleInit: the tests that prove a command stays light). A helper is
 * in the output only when some module needs it.
 */
const MODULE_INITS = [
  [
    '__esm',
    'var __esm = (fn, res, err) => function __init() {\n',
    '  if (fn && globalThis.__forgeModuleInit) globalThis.__forgeModuleInit(__getOwnPropNames(fn)[0]);\n',
  ],
  [
    '__commonJS',
    'var __commonJS = (cb, mod) => function __require() {\n',
    '  if (!mod && globalThis.__forgeModuleInit) globalThis.__forgeModuleInit(__getOwnPropNames(cb)[0]);\n',
  ],
];

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

/**
 * Whether dist/ must be built again: missing, older than a source, or its program's code cache made by
 * another Node than this one (V8 would refuse it: each command ~45 ms slower), so `npm ci`, `npm test`
 * and install.sh after switching Node make a cache this Node takes.
 */
function stale() {
  const output = statSync(built, { throwIfNoEntry: false });
  if (output === undefined) return true;
  const inputs = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
  if (inputs.some((input) => newest(join(root, input)) > output.mtimeMs)) return true;
  const node = cacheNode();
  return node !== undefined && node !== process.version;
}

/**
 * The Node that made the program's code cache, by program.json: undefined without a program (a split
 * build), '' when the manifest does not say (an earlier build: made again) or cannot be read.
 */
function cacheNode() {
  const path = join(root, 'dist', 'bundle', PROGRAM_MANIFEST);
  if (!existsSync(path)) return undefined;
  try {
    const { node } = JSON.parse(readFileSync(path, 'utf8'));
    return typeof node === 'string' ? node : '';
  } catch {
    return '';
  }
}

// An unpacked npm package ships dist/ without src/: there is nothing to build from.
if (!existsSync(join(root, 'src'))) process.exit(0);
if (ifStale && !stale()) {
  // A package of a checkout that has built many times would hold every earlier build still kept.
  const out = join(root, 'dist', 'bundle');
  const current = packing ? currentBuild(out) : undefined;
  if (current !== undefined) pruneEarlier(out, current);
  process.exit(0);
}
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
      // The module's name is relative to the root: esbuild writes it into the bundle, which is then
      // the same whichever directory it was built in.
      build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
        /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
          ? {
              path: relative(root, join(dirname(args.importer), '..', 'locales', 'en.js')),
              namespace: 'zod-locales',
            }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => {
        const file = join(root, args.path);
        return {
          contents: `export { default as en } from ${JSON.stringify(file)};`,
          resolveDir: dirname(file),
        };
      });
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
    plugins: [englishZodOnly()],
  });
  if (withStatus) await bundleStatus(build, common, out, leaves, made.metafile.outputs);
  const program = existsSync(join(root, PROGRAM_LOADER))
    ? await bundleProgram(build, common, out)
    : undefined;
  if (program !== undefined) Object.assign(made.metafile.outputs, program.outputs);
  const inputs = Object.fromEntries(
    Object.entries(made.metafile.outputs).map(([file, output]) => [
      relative(out, join(root, file)),
      Object.keys(output.inputs),
    ]),
  );
  writeFileSync(built, `${JSON.stringify({ inputs }, null, 1)}\n`);
  // A runner started before this build still loads its chunks on demand (a command, the end-of-run
  // report): chunks are named by content, so the earlier build's stay a day before they go.
  const current = new Set([
    ...Object.keys(inputs),
    'meta.json',
    STATUS_CACHE_FILE,
    ...(program === undefined ? [] : [PROGRAM_MANIFEST, program.cache]),
  ]);
  pruneEarlier(out, current);
}

/**
 * Removes from dist/bundle/ what the current build did not make, once it is older than what a runner
 * of an earlier build may still load; for a package (`packing`), at once, whatever its age.
 */
function pruneEarlier(out, current) {
  for (const name of readdirSync(out)) {
    const path = join(out, name);
    const keep = packing
      ? -Infinity
      : /^program-.*\.cjs(\.cache)?$/.test(name)
        ? KEEP_EARLIER_PROGRAM_MS
        : KEEP_EARLIER_CHUNKS_MS;
    if (!current.has(name) && Date.now() - statSync(path).mtimeMs > keep) rmSync(path);
  }
}

/** The files of the build in dist/bundle/, by meta.json and program.json; undefined when unreadable. */
function currentBuild(out) {
  try {
    const { inputs } = JSON.parse(readFileSync(built, 'utf8'));
    const current = new Set([...Object.keys(inputs), 'meta.json', STATUS_CACHE_FILE]);
    const manifest = join(out, PROGRAM_MANIFEST);
    if (existsSync(manifest)) {
      const { file, cache } = JSON.parse(readFileSync(manifest, 'utf8'));
      for (const name of [PROGRAM_MANIFEST, file, cache]) current.add(name);
    }
    return current;
  } catch {
    return undefined;
  }
}

/**
 * dist/cli/main.js and everything it imports as dist/bundle/program-<hash>.cjs, with its code cache
 * beside it and program.json naming both (written last, so a runner reads a whole pair or the one
 * before). The entry imports main.js lazily, so every module is wrapped and runs when first imported,
 * as it did from the split build. Returns the metafile's outputs and the cache's file name.
 */
async function bundleProgram(build, common, out) {
  const made = await build({
    ...common,
    stdin: {
      contents: "export const load = () => import('./dist/cli/main.js');",
      resolveDir: root,
      sourcefile: 'program-entry.js',
    },
    format: 'cjs',
    write: false,
    outfile: join(out, 'program.cjs'),
    splitting: false,
    external: EXTERNAL,
    plugins: [englishZodOnly(), builtinsRequired()],
    // Bundled, every module's import.meta.url is the program's own file's (dist/bundle/), as in the
    // split build, where the paths beside it are found from.
    define: { 'import.meta.url': '__forgeMetaUrl' },
    banner: { js: 'var __forgeMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
  const output = made.metafile.outputs[relative(root, join(out, 'program.cjs'))];
  const dynamic = output.imports.filter((i) => i.kind === 'dynamic-import');
  if (dynamic.length > 0) {
    throw new Error(
      `the program imports ${dynamic.map((i) => i.path).join(', ')} with import(): code from V8's cache cannot (Node 20). Bundle it, or require it.`,
    );
  }
  let text = made.outputFiles[0].text;
  for (const [helper, line, traced] of MODULE_INITS) {
    if (!text.includes(`${helper}(`)) continue;
    if (!text.includes(line)) {
      throw new Error(
        `esbuild's output has no \`${line.trim()}\`: update MODULE_INITS in scripts/build.mjs for this esbuild.`,
      );
    }
    text = text.replace(line, line + traced);
  }
  // Printed again without comments or spaces: a quarter smaller, and ASCII (Forge's comments and its
  // packages' are not), which Node reads as one byte a character. From the cache that is ~7 ms sooner
  // than the program as bundled, read as UTF-8. Names stay, so a stack trace still names functions.
  const { transform } = await import('esbuild');
  text = (await transform(text, { loader: 'js', format: 'cjs', charset: 'ascii', minifyWhitespace: true }))
    .code;
  const encoding = /[\u0080-\uffff]/.test(text) ? 'utf8' : 'latin1';
  const sha256 = createHash('sha256').update(text).digest('hex');
  const file = `program-${sha256.slice(0, 16)}.cjs`;
  const cache = `${file}.cache`;
  // Whole or not at all: a runner may be reading the same file, when a build makes it again.
  writeFileSync(join(out, `${file}.tmp`), text);
  renameSync(join(out, `${file}.tmp`), join(out, file));
  // The cache is made by a Node of its own after a warm-up run of the program (src/cli/program-warm-up.ts).
  const { warmUp } = cacheChild(
    "the program's code cache",
    PROGRAM_LOADER,
    `writeProgramCache(${JSON.stringify(join(out, file))}, ${JSON.stringify(join(out, cache))}, ${JSON.stringify(encoding)})`,
  );
  if (warmUp !== undefined && !warmUp.ok) {
    // Not a reason to fail the build: commands run the same, and compile on their way what the cache lacks.
    console.warn(`build: the program's warm-up run failed (${warmUp.detail}); its code cache holds less`);
  }
  const manifest = join(out, PROGRAM_MANIFEST);
  const warm_up = warmUp === undefined ? undefined : warmUp.ok ? 'ran' : `failed: ${warmUp.detail}`;
  // Release builds of V8 do not checksum a cache: a start checks it against this before using it.
  const cache_sha256 = createHash('sha256')
    .update(readFileSync(join(out, cache)))
    .digest('hex');
  // The Node that made the cache (the child is this Node): V8 refuses it under another, so a build
  // --if-stale under another Node builds again (stale()).
  const fields = { file, cache, encoding, sha256, cache_sha256, node: process.version, warm_up };
  writeFileSync(`${manifest}.tmp`, `${JSON.stringify(fields)}\n`);
  renameSync(`${manifest}.tmp`, manifest);
  const outputs = { [relative(root, join(out, file))]: output };
  return { outputs, cache };
}

/**
 * In the program, a lazy `await import('node:…')` of Node's own modules becomes a require: functions
 * compiled from V8's code cache cannot call import() on Node 20 (it throws ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING).
 */
function builtinsRequired() {
  return {
    name: 'builtins-required',
    setup(build) {
      build.onResolve({ filter: /^node:/ }, (args) =>
        args.kind === 'dynamic-import' ? { path: args.path, namespace: 'node-builtin' } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(args.path)});`,
        loader: 'js',
      }));
    },
  };
}

/**
 * status-fast.js as one CommonJS file, dist/bundle/status-fast.cjs, its lazy imports of `leaves` left to
 * the split build; adds to `outputs`. bin/run-built.js compiles it: no ES module loader for a status, and
 * Node's own modules come through `require`, not an ES module facade (node:fs's facade reads
 * fs.ReadStream, which loads the stream modules). Printed again as the program is: ASCII, without
 * comments or spaces (see bundleProgram). Then V8's code for it, made by a warm-up status (see
 * writeStatusCache).
 *
 * Code compiled by node:vm has no import() of its own, so each import() of a leaf becomes a call of
 * `__forgeImport`: the loader's import (its sixth argument), or import() when the file is required.
 */
async function bundleStatus(build, common, out, leaves, outputs) {
  const fast = await build({
    ...common,
    entryPoints: [STATUS_FAST],
    outfile: join(out, STATUS_FAST_FILE),
    format: 'cjs',
    splitting: false,
    packages: 'external',
    write: false,
    plugins: [leavesFromSplitBuild(leaves), ownRequire(), syncFsPromises(), builtinsRequired()],
    // Bundled, a module's import.meta.url is the status file's own (dist/bundle/), as in the split build;
    // and strict, as ES modules are (CommonJS is not unless it says so first).
    define: { 'import.meta.url': '__forgeMetaUrl' },
    banner: { js: '"use strict";\nvar __forgeMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
  checkStatusFast(fast.metafile.outputs, leaves);
  if (fast.outputFiles.length !== 1)
    throw new Error(`the status build made ${fast.outputFiles.length} files, not 1`);
  const { transform } = await import('esbuild');
  const path = join(out, STATUS_FAST_FILE);
  let text = (
    await transform(fast.outputFiles[0].text, {
      loader: 'js',
      format: 'cjs',
      charset: 'ascii',
      minifyWhitespace: true,
    })
  ).code;
  text = leafImportsThroughLoader(text, leaves);
  // The loader offers the cache only to the file whose last line names the build it was made for.
  text += `\n//forge-build ${createHash('sha256').update(text).digest('hex').slice(0, 16)}\n`;
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
  Object.assign(outputs, fast.metafile.outputs);
  writeStatusCache();
}

/** Each `import("./<leaf>.js")` in the status file's text as `__forgeImport(…)`; any other import() fails the build. */
function leafImportsThroughLoader(text, leaves) {
  const names = new Set([...leaves.values()].map((name) => `./${name}.js`));
  let rewritten = 0;
  const out = text.replace(/\bimport\(("[^"]*")\)/g, (call, quoted) => {
    const specifier = JSON.parse(quoted);
    if (!names.has(specifier)) {
      throw new Error(`status-fast.cjs calls ${call}: only the split build's leaves may be imported lazily`);
    }
    rewritten += 1;
    return `__forgeImport(${quoted})`;
  });
  if (/\bimport\s*\(/.test(out)) {
    throw new Error(
      'status-fast.cjs calls import() with something the build cannot rewrite (see leafImportsThroughLoader)',
    );
  }
  if (rewritten === 0 && names.size > 0) {
    throw new Error("status-fast.cjs imports no leaf by esbuild's spelling: update leafImportsThroughLoader");
  }
  const head = '"use strict";';
  if (!out.startsWith(head)) throw new Error('status-fast.cjs does not begin with its banner');
  return `${head}var __forgeImport=typeof __forgeImportLeaf==="function"?__forgeImportLeaf:(s)=>import(s);\n${out.slice(head.length)}`;
}

/**
 * V8's code for status-fast.cjs, dist/bundle/status-fast.cjs.cache, made by a Node of its own started
 * as the executables are, after a warm-up status (src/cli/status-warm-up.ts). A warm-up that fails
 * leaves a cache with less in it, and says so: a status is slower to start, never different.
 */
function writeStatusCache() {
  if (!existsSync(join(root, STATUS_WARM_UP))) return;
  const { warmUp } = cacheChild('the status code cache', STATUS_WARM_UP, 'writeStatusCache()');
  if (!warmUp.ok)
    console.warn(`build: the status warm-up failed (${warmUp.detail}); its code cache holds less`);
}

/**
 * Awaits `call`, a function of the module at `modulePath` (relative to the root) that writes a code
 * cache, in a Node of its own started as the executables are (V8 refuses a cache made under other
 * flags), and returns what it answered. The child says it on a line of its own, marked, and leaves at
 * once (a warm-up run may leave a handle open); anything else it printed is passed on.
 */
function cacheChild(what, modulePath, call) {
  const child = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const made = await (await import(${JSON.stringify(pathToFileURL(join(root, modulePath)).href)})).${call};
(await import('node:fs')).writeSync(1, '\\n${CACHE_RESULT}' + JSON.stringify(made) + '\\n');
process.exit(0);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
  );
  if (child.status !== 0) throw new Error(`could not write ${what} (${child.status ?? child.signal})`);
  const lines = child.stdout.split('\n');
  const marked = lines.findLast((line) => line.startsWith(CACHE_RESULT));
  const others = lines.filter((line) => line !== marked && line.trim() !== '');
  if (others.length > 0) console.log(others.join('\n'));
  if (marked === undefined) throw new Error(`the child that wrote ${what} did not say how it went`);
  return JSON.parse(marked.slice(CACHE_RESULT.length));
}

/**
 * In the status build, node:fs/promises is src/infra/sync-fs-promises.ts: the same promises, done
 * synchronously (that file says why). A name it does not export fails the build.
 */
function syncFsPromises() {
  return {
    name: 'sync-fs-promises',
    setup(build) {
      build.onResolve({ filter: /^node:fs\/promises$/ }, () => ({ path: join(root, SYNC_FS_PROMISES) }));
    },
  };
}

/**
 * In the status build, `createRequire` (from node:module) gives the file's own `require`: the one
 * thing on that path that asks for it loads Node's own modules with it (the embedded store's hash of a
 * new id), and requiring node:module loads Node's ES module loader, ~3 ms of a status. Any other name
 * imported from node:module fails the build.
 */
function ownRequire() {
  return {
    name: 'own-require',
    setup(build) {
      build.onResolve({ filter: /^node:module$/ }, (args) =>
        args.kind === 'import-statement' ? { path: args.path, namespace: 'own-require' } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'own-require' }, () => ({
        contents: 'export const createRequire = () => require;\n',
        loader: 'js',
      }));
    },
  };
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

/** status-fast.cjs may require Node's own modules and import the leaves lazily: anything else fails the build. */
function checkStatusFast(outputs, leaves) {
  const names = new Set([...leaves.values()].map((name) => `./${name}.js`));
  for (const [file, output] of Object.entries(outputs)) {
    if (!file.endsWith('.cjs')) continue;
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
