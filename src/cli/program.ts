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
// Without program.json beside it (dist/ as emitted, before bundling) the program is imported as modules.
import { existsSync, readFileSync } from 'node:fs';
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
}

type ProgramEncoding = 'latin1' | 'utf8';

export interface BuiltProgram {
  file: string;
  cache?: string | undefined;
  encoding: ProgramEncoding;
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
  const { exports, script, cached } = compileProgram(built);
  record(!cached ? 'missing' : script.cachedDataRejected === true ? 'rejected' : 'used');
  return exports.load();
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
  const { file, cache, encoding } = manifest as Partial<Record<keyof ProgramManifest, unknown>>;
  if (typeof file !== 'string' || typeof cache !== 'string') return undefined;
  // Names only: the manifest points beside itself.
  const program = join(dir, basename(file));
  if (!existsSync(program)) return undefined;
  return {
    file: program,
    cache: join(dir, basename(cache)),
    encoding: encoding === 'latin1' ? 'latin1' : 'utf8',
  };
}

/** How this process's program started: from its cache (`used`), without it, or from the modules. */
export type ProgramCacheStatus = 'used' | 'rejected' | 'missing' | 'unbuilt';

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
    status: status === 'used' || status === 'rejected' || status === 'missing' ? status : 'unbuilt',
    dir: programDir(),
  };
}

/** Where the build put the program: beside this module's bundle file. */
function programDir(): string {
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * Compiles and runs the program's file: with its cache when `cache` is readable (V8 checks it was made
 * for this source, Node and flags, and otherwise compiles from the source).
 */
export function compileProgram(program: BuiltProgram): { exports: Exports; script: Script; cached: boolean } {
  const source = readFileSync(program.file, program.encoding);
  let cachedData: Buffer | undefined;
  if (program.cache !== undefined) {
    try {
      cachedData = readFileSync(program.cache);
    } catch {
      cachedData = undefined;
    }
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
  return { exports: module.exports, script, cached: cachedData !== undefined };
}

/**
 * The build's step: compiles the program, initialises what every command loads (main.js and what it
 * imports), and writes the code V8 made for it to `cacheFile`, whole or not at all.
 */
export async function writeProgramCache(
  file: string,
  cacheFile: string,
  encoding: ProgramEncoding,
): Promise<number> {
  const { exports, script } = compileProgram({ file, encoding });
  await exports.load();
  const data = script.createCachedData();
  const { writeFileAtomic } = await import('../infra/atomic-file.js');
  await writeFileAtomic(cacheFile, data);
  return data.length;
}

/**
 * CommonJS's own wrapper, strict as the ES modules the program is made of (and as the split build ran
 * them, packages included). The cache is for exactly this text around the source.
 */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) {'use strict';${source}\n})`;
}
