// The full program (main.js and everything it imports) as one CommonJS file, compiled from V8's code
// cache for it: scripts/build.mjs writes both into dist/bundle/, with program.json naming them. Node 20
// has no compile cache for ES modules, and a run parsed and compiled ~1 MB of JavaScript in ~80 files
// before its first bead, most of its start's CPU. From the cache that work is skipped: a one-bead run
// on the fake br reached its first claim ~45 ms sooner, on ~80 ms less CPU.
// - Only the build writes the cache, never a run: it is as trusted as the code beside it.
// - V8 refuses a cache made by another Node or under other flags, and the program then compiles from
//   its source as before (slower, the same). V8 checks a cache against its source's length only, so
//   both files are named by the program's content and never written again under that name.
// - Functions compiled from the cache cannot call import() on Node 20: the build makes every import in
//   the program a require, and fails on one it cannot.
// Without program.json beside it (dist/ as emitted, before bundling), or with a program that is not the
// one the build wrote (cut short, zeroed, edited: program.json holds its sha256), the program is imported
// as modules.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type * as Main from './main.js';

export type Program = typeof Main;

/** What the build wrote: the program's file and its cache's, both named by the program's content. */
export interface ProgramManifest {
  file: string;
  cache: string;
  /** latin1 when the program is all ASCII (read as one byte a character), else utf8. */
  encoding: ProgramEncoding;
  /**
   * The program's sha256 (hex). V8 checks a cache against its source's length only, and compiles lazy
   * functions from the source: a program changed in place (a same-length edit, blocks zeroed by a crash)
   * would run the cache's code mixed with the file's. Checked at each start (~1 ms for 1.5 MB).
   */
  sha256: string;
  /**
   * The cache's sha256 (hex). Release builds of V8 do not checksum a cache's payload: one with a block
   * zeroed by a crash was taken, and every command died of a segmentation fault. Checked at each start
   * (~0.7 ms); a cache that differs is not used.
   */
  cache_sha256: string;
  /** The Node that made the cache (`v20.20.2`): the build's `--if-stale` builds again under another. */
  node?: string;
  /** How the build's warm-up run went (program-warm-up.ts): `ran`, or `failed: …`; for people. */
  warm_up?: string;
}

type ProgramEncoding = 'latin1' | 'utf8';

export interface BuiltProgram {
  file: string;
  cache?: string | undefined;
  encoding: ProgramEncoding;
  /** Checked before the program is compiled, when known (the build's own compile has no manifest yet). */
  sha256?: string | undefined;
  /** Checked before the cache is handed to V8, when known. */
  cacheSha256?: string | undefined;
}

export const MANIFEST = 'program.json';

interface Exports {
  load(): Promise<Program>;
}

/** The program's functions, from the built program beside this module when there is one. */
export async function loadProgram(): Promise<Program> {
  const built = builtProgram(programDir());
  if (built === undefined) {
    record('unbuilt');
    return import('./main.js');
  }
  let compiled: ReturnType<typeof compileProgram>;
  try {
    compiled = compileProgram(built);
  } catch {
    // Cut short or otherwise not what the build wrote (an interrupted copy or upgrade): the split
    // build's modules beside it are the same program, only slower to start. Doctor says so.
    record('damaged');
    return import('./main.js');
  }
  record(compiled.cache === 'damaged' ? 'cache-damaged' : compiled.cache);
  return compiled.exports.load();
}

/**
 * The program and cache `dir` holds (by its program.json), or undefined when it holds none: no
 * manifest, one that is not the build's, or one naming a program that is not there (a half-copied
 * install). The executables then run the split build's modules, which are the same program.
 */
export function builtProgram(dir: string): BuiltProgram | undefined {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof manifest !== 'object' || manifest === null) return undefined;
  const { file, cache, encoding, sha256, cache_sha256 } = manifest as Partial<
    Record<keyof ProgramManifest, unknown>
  >;
  if (typeof file !== 'string' || typeof cache !== 'string') return undefined;
  if (typeof sha256 !== 'string' || typeof cache_sha256 !== 'string') return undefined;
  // Names only: the manifest points beside itself.
  const program = join(dir, basename(file));
  if (statSync(program, { throwIfNoEntry: false })?.isFile() !== true) return undefined;
  return {
    file: program,
    cache: join(dir, basename(cache)),
    encoding: encoding === 'latin1' ? 'latin1' : 'utf8',
    sha256,
    cacheSha256: cache_sha256,
  };
}

/**
 * How this process's program started: from its cache (`used`), without it (`rejected` by V8,
 * `missing`, `cache-damaged`), or from the modules: no built program (`unbuilt`), or one that is not
 * whole (`damaged`).
 */
export type ProgramCacheStatus = 'used' | 'rejected' | 'missing' | 'cache-damaged' | 'unbuilt' | 'damaged';

const STATUSES: readonly ProgramCacheStatus[] = [
  'used',
  'rejected',
  'missing',
  'cache-damaged',
  'unbuilt',
  'damaged',
];

/** Where loadProgram leaves how it started, for `forge-pack doctor` inside the program (another copy of this module). */
const STARTED = Symbol.for('forge.program.started');

function record(status: ProgramCacheStatus): void {
  (globalThis as Record<symbol, unknown>)[STARTED] = status;
}

/**
 * How this process's program started, and where the build puts the program. A second compile cannot
 * tell: V8 answers it from the copy it already holds, taking the cache or not.
 */
export function programCacheStatus(): { status: ProgramCacheStatus; dir: string } {
  const status = (globalThis as Record<symbol, unknown>)[STARTED];
  return {
    status: STATUSES.find((known) => known === status) ?? 'unbuilt',
    dir: programDir(),
  };
}

/** Where the build put the program: beside this module's bundle file. */
function programDir(): string {
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * Compiles and runs the program's file: with its cache when `cache` is readable (V8 checks it was made
 * for this source, Node and flags, and otherwise compiles from the source). Throws, before any of
 * the program's modules has run, when the file is not the one the build wrote (by its sha256), does not
 * compile, or its top level leaves no `load`. A cache that is not the one the build wrote is never
 * handed to V8 (`cache: 'damaged'`).
 */
export function compileProgram(program: BuiltProgram): {
  exports: Exports;
  script: Script;
  /** What became of the cache: taken, refused by V8, absent, or not the build's (so not offered). */
  cache: 'used' | 'rejected' | 'missing' | 'damaged';
} {
  const source = readSource(program);
  let cachedData: Buffer | undefined;
  let damaged = false;
  if (program.cache !== undefined) {
    try {
      cachedData = readFileSync(program.cache);
    } catch {
      cachedData = undefined;
    }
  }
  if (
    cachedData !== undefined &&
    program.cacheSha256 !== undefined &&
    sha256Of(cachedData) !== program.cacheSha256
  ) {
    cachedData = undefined;
    damaged = true;
  }
  const script = new Script(wrap(source), {
    filename: program.file,
    cachedData,
  });
  const module = { exports: {} as Exports };
  const run = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: object,
    filename: string,
    dirname: string,
  ) => void;
  run(module.exports, createRequire(program.file), module, program.file, dirname(program.file));
  if (typeof module.exports.load !== 'function') throw new Error(`${program.file} exports no load()`);
  const cache = damaged
    ? 'damaged'
    : cachedData === undefined
      ? 'missing'
      : script.cachedDataRejected === true
        ? 'rejected'
        : 'used';
  return { exports: module.exports, script, cache };
}

/**
 * The build's step: compiles the program, initialises what every command loads (main.js and what it
 * imports), warms it up with one small run (program-warm-up.ts) when it is the whole program, and
 * writes the code V8 made for it to `cacheFile`, whole or not at all. A warm-up that fails leaves the
 * cache with what was compiled by then: a run is slower to start, never different.
 */
export async function writeProgramCache(
  file: string,
  cacheFile: string,
  encoding: ProgramEncoding,
): Promise<{ bytes: number; warmUp: { ok: boolean; detail: string } | undefined }> {
  const { exports, script } = compileProgram({ file, encoding });
  const program = (await exports.load()) as Partial<Program>;
  let warmUp: { ok: boolean; detail: string } | undefined;
  if (typeof program.runRalphLoop === 'function' && typeof program.runForgePack === 'function') {
    const { warmUpProgram } = await import('./program-warm-up.js');
    warmUp = await warmUpProgram(program);
  }
  const data = script.createCachedData();
  const { writeFileAtomic } = await import('../infra/atomic-file.js');
  await writeFileAtomic(cacheFile, data);
  return { bytes: data.length, warmUp };
}

/** The program's text, once its bytes are the ones the build wrote (when the manifest says which). */
function readSource(program: BuiltProgram): string {
  if (program.sha256 === undefined) return readFileSync(program.file, program.encoding);
  const bytes = readFileSync(program.file);
  const sha256 = sha256Of(bytes);
  if (sha256 !== program.sha256) {
    throw new Error(`${program.file} is not the program the build wrote (sha256 ${sha256.slice(0, 16)}…)`);
  }
  return bytes.toString(program.encoding);
}

function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * CommonJS's own wrapper, strict as the ES modules the program is made of (and as the split build ran
 * them, packages included). The cache is for exactly this text around the source.
 */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) {'use strict';${source}\n})`;
}
