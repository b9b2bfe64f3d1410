// scripts/build.mjs emits dist/ with esbuild, file by file (`npm run typecheck` is the one type check):
// a type error does not stop the build, a syntax error does and leaves dist/ marked stale. Each
// executable is then bundled into dist/bundle/, split at its dynamic imports, with its inputs listed,
// and the program behind them is bundled as one file with its code cache (src/cli/program.ts).
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import {
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT } from '../support/cli.js';

let copy: string;

/** A project with the real build script and configs, a few source files, and the repository's esbuild. */
beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), 'forge-build-'));
  for (const entry of ['scripts/build.mjs', 'package.json', 'tsconfig.json', 'tsconfig.build.json'])
    await cp(join(ROOT, entry), join(copy, entry));
  await mkdir(join(copy, 'src', 'cli'), { recursive: true });
  await mkdir(join(copy, 'src', 'bin'), { recursive: true });
  await writeFile(
    join(copy, 'src', 'bin', 'tool.ts'),
    "import { count } from '../cli/main.js';\nconst { later } = await import('../cli/later.js');\nconsole.log(count, later);\n",
  );
  await writeFile(join(copy, 'src', 'cli', 'later.ts'), "export const later = 'loaded on demand';\n");
  // The short status path: one CommonJS file of its own (bin/run-built.js requires it), but what it loads
  // lazily and brings a package is left to the split build (a "leaf"), imported from there.
  await writeFile(
    join(copy, 'src', 'cli', 'status-fast.ts'),
    "import { near } from './near.js';\nexport async function runParsedStatus() {\n  const { far } = await import('./far.js');\n  const { plain } = await import('./plain.js');\n  return [near, far, plain].join(' ');\n}\n",
  );
  await writeFile(join(copy, 'src', 'cli', 'near.ts'), "export const near = 'near';\n");
  await writeFile(join(copy, 'src', 'cli', 'plain.ts'), "export const plain = 'plain';\n");
  await writeFile(
    join(copy, 'src', 'cli', 'far.ts'),
    "// @ts-nocheck\nimport { tiny } from 'tiny-pkg';\nexport const far = `far ${tiny}`;\n",
  );
  await mkdir(join(copy, 'node_modules', 'tiny-pkg'), { recursive: true });
  await writeFile(
    join(copy, 'node_modules', 'tiny-pkg', 'package.json'),
    '{"name":"tiny-pkg","type":"module","main":"index.js"}\n',
  );
  await writeFile(join(copy, 'node_modules', 'tiny-pkg', 'index.js'), "export const tiny = 'tiny';\n");
  // esbuild alone: the build needs no TypeScript.
  await symlink(join(ROOT, 'node_modules', 'esbuild'), join(copy, 'node_modules', 'esbuild'));
});
afterAll(async () => {
  await rm(copy, { recursive: true, force: true });
});

const build = (...args: string[]) =>
  execa(process.execPath, [join(copy, 'scripts', 'build.mjs'), ...args], { cwd: copy, reject: false });

/** Builds with `source` edited, expects the build to fail saying `message`, then builds it as it was. */
async function expectBuildToFail(source: string, edit: (before: string) => string, message: string) {
  const before = await readFile(source, 'utf8');
  await writeFile(source, edit(before));
  try {
    const failed = await build();
    expect(failed.exitCode).not.toBe(0);
    expect(failed.stderr).toContain(message);
  } finally {
    await writeFile(source, before);
    expect((await build()).exitCode).toBe(0);
  }
}

describe('scripts/build.mjs', () => {
  it('emits despite a type error (the type check is npm run typecheck), and not again while fresh', async () => {
    await writeFile(join(copy, 'src', 'cli', 'main.ts'), 'export const count: number = "three";\n');
    const built = await build('--if-stale');
    expect(built.exitCode, built.stderr + built.stdout).toBe(0);
    // Emitted as JavaScript with the type gone, and the value as written.
    const main = join(copy, 'dist', 'cli', 'main.js');
    expect(await readFile(main, 'utf8')).not.toContain('number');
    const loaded = (await import(`${pathToFileURL(main).href}?${Date.now()}`)) as { count: unknown };
    expect(loaded.count).toBe('three');
    const before = (await stat(join(copy, 'dist', 'cli', 'main.js'))).mtimeMs;
    expect((await build('--if-stale')).exitCode).toBe(0);
    expect((await stat(join(copy, 'dist', 'cli', 'main.js'))).mtimeMs).toBe(before);
  });

  it('bundles each executable, split where it imports on demand, and lists what each file holds', async () => {
    const run = await execa(process.execPath, [join(copy, 'dist', 'bundle', 'tool.js')], { reject: false });
    expect(run.stdout).toBe('three loaded on demand');
    const meta = JSON.parse(await readFile(join(copy, 'dist', 'bundle', 'meta.json'), 'utf8')) as {
      inputs: Record<string, string[]>;
    };
    expect(meta.inputs['tool.js']).toEqual(['dist/cli/main.js', 'dist/bin/tool.js']);
    const later = Object.entries(meta.inputs).filter(([, inputs]) => inputs.includes('dist/cli/later.js'));
    expect(later.map(([file]) => file)).toEqual([expect.stringMatching(/^later-.+\.js$/)]);
  });

  it('builds the short status path as one file, leaving what brings a package to the split build', async () => {
    const fastFile = join(copy, 'dist', 'bundle', 'status-fast.cjs');
    const run = await execa(
      process.execPath,
      ['-e', `require(${JSON.stringify(fastFile)}).runParsedStatus().then(console.log)`],
      { reject: false },
    );
    expect(run.stdout, run.stderr).toBe('near far tiny plain');
    const meta = JSON.parse(await readFile(join(copy, 'dist', 'bundle', 'meta.json'), 'utf8')) as {
      inputs: Record<string, string[]>;
    };
    expect([...(meta.inputs['status-fast.cjs'] ?? [])].sort()).toEqual([
      'dist/cli/near.js',
      'dist/cli/plain.js',
      'dist/cli/status-fast.js',
    ]);
    expect([...(meta.inputs['status-leaf-cli-far.js'] ?? [])].sort()).toEqual([
      'dist/cli/far.js',
      'node_modules/tiny-pkg/index.js',
    ]);
    // Through the loader's import (bin/run-built.js): code V8 gives from a cache cannot call import().
    const fast = await readFile(fastFile, 'utf8');
    expect(fast).toContain('__forgeImport("./status-leaf-cli-far.js")');
    expect(fast).not.toMatch(/\bimport\("/);
  });

  it('fails when the short status path would load a package whatever status it shows', async () => {
    await expectBuildToFail(
      join(copy, 'src', 'cli', 'status-fast.ts'),
      (before) => `// @ts-nocheck\nimport 'tiny-pkg';\n${before}`,
      'dist/bundle/status-fast.cjs imports tiny-pkg (require-call)',
    );
  });

  it("leaves zod's messages in other languages out of the repository's bundle", async () => {
    await assertBuilt();
    const meta = JSON.parse(await readFile(join(ROOT, 'dist', 'bundle', 'meta.json'), 'utf8')) as {
      inputs: Record<string, string[]>;
    };
    const inputs = Object.values(meta.inputs).flat();
    expect(inputs).toContain('node_modules/zod/v4/classic/schemas.js');
    const locales = inputs
      .filter((input) => /zod\/v4\/locales\/[^/]+\.js$/.test(input))
      .map((input) => input.replace(/^.*\//, ''));
    expect([...new Set(locales)]).toEqual(['en.js']);
  });

  it('writes no path of the directory it was built in into the bundle or the program', async () => {
    // A package packed on one machine would carry the packer's paths, and two checkouts would build
    // different programs. (The code cache holds its program's path: it is V8's, for this install only.)
    await assertBuilt();
    const dir = join(ROOT, 'dist', 'bundle');
    const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as {
      inputs: Record<string, string[]>;
    };
    const { file } = JSON.parse(await readFile(join(dir, 'program.json'), 'utf8')) as { file: string };
    const written = [...new Set([...Object.keys(meta.inputs), file])].map((name) => join(dir, name));
    expect(written.length).toBeGreaterThan(10);
    const naming: string[] = [];
    for (const path of written) if ((await readFile(path, 'latin1')).includes(ROOT)) naming.push(path);
    expect(naming).toEqual([]);
  });

  it('fails on a syntax error, naming the file, and marks the build stale', async () => {
    await writeFile(join(copy, 'src', 'cli', 'broken.ts'), 'export const = ;\n');
    const failed = await build('--if-stale');
    expect(failed.exitCode).not.toBe(0);
    expect(failed.stdout + failed.stderr).toContain('broken.ts');
    expect((await stat(join(copy, 'dist', 'bundle', 'meta.json'))).mtimeMs).toBe(0);
    await rm(join(copy, 'src', 'cli', 'broken.ts'));
    expect((await build('--if-stale')).exitCode).toBe(0);
    expect((await stat(join(copy, 'dist', 'bundle', 'meta.json'))).mtimeMs).toBeGreaterThan(0);
  });

  it("keeps an earlier build's chunks a day, for runners still loading them, then removes them", async () => {
    const bundle = join(copy, 'dist', 'bundle');
    await writeFile(join(bundle, 'chunk-EARLIER1.js'), 'export {};\n');
    await writeFile(join(bundle, 'chunk-EARLIER2.js'), 'export {};\n');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    await utimes(join(bundle, 'chunk-EARLIER2.js'), twoDaysAgo, twoDaysAgo);
    // An earlier program is read whole as a runner starts: it goes after minutes, not a day.
    const program = (name: string) => join(bundle, `program-${name}.cjs`);
    await writeFile(program('0000000000000001'), '');
    await writeFile(`${program('0000000000000001')}.cache`, '');
    await writeFile(program('0000000000000002'), '');
    await writeFile(`${program('0000000000000002')}.cache`, '');
    const twentyMinutesAgo = new Date(Date.now() - 20 * 60_000);
    await utimes(program('0000000000000002'), twentyMinutesAgo, twentyMinutesAgo);
    await utimes(`${program('0000000000000002')}.cache`, twentyMinutesAgo, twentyMinutesAgo);
    expect((await build()).exitCode).toBe(0);
    const files = await readdir(bundle);
    expect(files).toContain('chunk-EARLIER1.js');
    expect(files).not.toContain('chunk-EARLIER2.js');
    expect(files).toContain('tool.js');
    expect(files).toEqual(
      expect.arrayContaining(['program-0000000000000001.cjs', 'program-0000000000000001.cjs.cache']),
    );
    expect(files).not.toContain('program-0000000000000002.cjs');
    expect(files).not.toContain('program-0000000000000002.cjs.cache');
  });

  describe('the program', () => {
    // What a child Node does with the copy's program, through its own loader: whether V8 took the cache,
    // which modules ran (the build's tracer), and what the program's functions return.
    const probe = async (nodeArgs: string[] = []) => {
      const script = `
const inits = [];
globalThis.__forgeModuleInit = (key) => inits.push(key);
const { builtProgram, compileProgram } = await import(${JSON.stringify(pathToFileURL(join(copy, 'dist', 'cli', 'program.js')).href)});
const { exports, script, cache } = compileProgram(builtProgram(${JSON.stringify(join(copy, 'dist', 'bundle'))}));
const main = await exports.load();
const loaded = [...inits];
const results = [main.count, await main.platform(), await main.later()];
console.log(JSON.stringify({ cache, rejected: script.cachedDataRejected, loaded, results, after: inits }));`;
      const run = await execa(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], {
        reject: false,
      });
      expect(run.exitCode, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as {
        cache: 'used' | 'rejected' | 'missing' | 'damaged';
        rejected: boolean | undefined;
        loaded: string[];
        results: string[];
        after: string[];
      };
    };
    const manifest = async () =>
      JSON.parse(await readFile(join(copy, 'dist', 'bundle', 'program.json'), 'utf8')) as {
        file: string;
        cache: string;
        encoding: string;
        sha256: string;
        cache_sha256: string;
        node?: string;
        warm_up?: string;
      };

    beforeAll(async () => {
      // atomic-file.ts and what it imports: program.ts writes its code cache through it.
      for (const file of [
        'src/cli/program.ts',
        'src/cli/program-warm-up.ts',
        'src/infra/atomic-file.ts',
        'src/infra/errors.ts',
      ]) {
        await mkdir(join(copy, file, '..'), { recursive: true });
        await cp(join(ROOT, file), join(copy, file));
      }
      await writeFile(
        join(copy, 'src', 'cli', 'main.ts'),
        [
          'export const count: number = "three";',
          // Node's own modules imported lazily: from the cache, only as a require.
          "export const platform = async () => (await import('node:os')).platform();",
          "export const later = async () => (await import('./later.js')).later;",
          '',
        ].join('\n'),
      );
      const built = await build();
      expect(built.exitCode, built.stderr).toBe(0);
    });

    it('is one CommonJS file named by its content, with its code cache, both named in program.json', async () => {
      const { file, cache, encoding, sha256, cache_sha256 } = await manifest();
      expect(file).toMatch(/^program-[0-9a-f]{16}\.cjs$/);
      // The whole hash, which each start checks the program against (V8 checks the cache by length only).
      const bytes = await readFile(join(copy, 'dist', 'bundle', file));
      expect(sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(file).toBe(`program-${sha256.slice(0, 16)}.cjs`);
      // And the cache's, which V8 itself does not checksum in a release build.
      const cacheBytes = await readFile(join(copy, 'dist', 'bundle', cache));
      expect(cache_sha256).toBe(createHash('sha256').update(cacheBytes).digest('hex'));
      expect(cache).toBe(`${file}.cache`);
      // No comments or spaces: ASCII, read as one byte a character.
      expect(encoding).toBe('latin1');
      const text = await readFile(join(copy, 'dist', 'bundle', file), 'utf8');
      expect(text).not.toMatch(/[\u0080-\uffff]/);
      expect((await stat(join(copy, 'dist', 'bundle', cache))).size).toBeGreaterThan(0);
    });

    it("is built again --if-stale when its cache is another Node's, and not otherwise", async () => {
      // V8 refuses a cache another Node made: `npm ci` or `npm test` after switching Node makes one.
      expect((await manifest()).node).toBe(process.version);
      const meta = join(copy, 'dist', 'bundle', 'meta.json');
      const before = (await stat(meta)).mtimeMs;
      expect((await build('--if-stale')).exitCode).toBe(0);
      expect((await stat(meta)).mtimeMs).toBe(before);
      const { node: _made, ...rest } = await manifest();
      for (const node of ['v0.0.0', undefined]) {
        const written = node === undefined ? rest : { ...rest, node };
        await writeFile(join(copy, 'dist', 'bundle', 'program.json'), `${JSON.stringify(written)}\n`);
        const since = (await stat(meta)).mtimeMs;
        const rebuilt = await build('--if-stale');
        expect(rebuilt.exitCode, rebuilt.stderr).toBe(0);
        expect((await stat(meta)).mtimeMs).toBeGreaterThan(since);
        expect((await manifest()).node).toBe(process.version);
      }
    });

    it('runs from its cache, each module when first imported, and imports Node lazily without import()', async () => {
      const run = await probe();
      expect(run).toMatchObject({ cache: 'used', rejected: false });
      expect(run.results).toEqual(['three', process.platform, 'loaded on demand']);
      expect(run.loaded).toContain('dist/cli/main.js');
      expect(run.loaded).not.toContain('dist/cli/later.js');
      expect(run.after).toContain('dist/cli/later.js');
    });

    it('runs the same from its source when V8 refuses the cache (made under other flags)', async () => {
      const run = await probe(['--no-opt']);
      expect(run).toMatchObject({ cache: 'rejected', rejected: true });
      expect(run.results).toEqual(['three', process.platform, 'loaded on demand']);
    });

    it("runs the same from its source, without handing it to V8, when the cache is not the build's", async () => {
      const { cache } = await manifest();
      const path = join(copy, 'dist', 'bundle', cache);
      const kept = await readFile(path);
      await writeFile(path, Buffer.from('not a code cache, just bytes of the same kind'.repeat(50)));
      try {
        const run = await probe();
        expect(run.cache).toBe('damaged');
        // V8 was never asked (it would have taken a payload it does not checksum).
        expect(run.rejected).toBeUndefined();
        expect(run.results).toEqual(['three', process.platform, 'loaded on demand']);
      } finally {
        await writeFile(path, kept);
      }
    });

    it('is built all the same when its warm-up run fails, saying so, and its cache still serves', async () => {
      // A program with both entry points is warmed up before its cache is taken (program-warm-up.ts);
      // these fail their first command.
      const main = join(copy, 'src', 'cli', 'main.ts');
      const before = await readFile(main, 'utf8');
      await writeFile(
        main,
        `${before}export async function runForgePack(argv: string[], deps: { stderr: { write(t: string): void } }) {
  console.log('printed by the program itself');
  deps.stderr.write('forge-pack: no store here\\n');
  process.exitCode = 5;
}
export async function runRalphLoop() {}
`,
      );
      try {
        const built = await build();
        expect(built.exitCode, built.stderr).toBe(0);
        // What the program printed on its own stdout is passed on, not taken for the child's answer.
        expect(built.stdout).toContain('printed by the program itself');
        expect(built.stderr).toContain(
          "the program's warm-up run failed (beads init exited 5: forge-pack: no store here)",
        );
        expect((await manifest()).warm_up).toBe('failed: beads init exited 5: forge-pack: no store here');
        const run = await probe();
        expect(run).toMatchObject({ cache: 'used', rejected: false });
        expect(run.results).toEqual(['three', process.platform, 'loaded on demand']);
      } finally {
        await writeFile(main, before);
        expect((await build()).exitCode).toBe(0);
      }
      // A program without them (as this one) is not warmed up, and the manifest says nothing of it.
      expect((await manifest()).warm_up).toBeUndefined();
    });

    it('fails the build on an import() the program would keep (code from the cache cannot run it)', async () => {
      // uplot is left out of the bundle (scripts/build.mjs EXTERNAL), so its import() would stay.
      await expectBuildToFail(
        join(copy, 'src', 'cli', 'main.ts'),
        (before) => `${before}// @ts-nocheck\nexport const chart = () => import('uplot');\n`,
        'the program imports uplot with import()',
      );
    });
  });

  it("the repository's program is ASCII, warmed up by a run, and this Node takes its cache", async () => {
    await assertBuilt();
    const dir = join(ROOT, 'dist', 'bundle');
    const { encoding, warm_up, cache } = JSON.parse(await readFile(join(dir, 'program.json'), 'utf8')) as {
      encoding: string;
      warm_up: string;
      cache: string;
    };
    expect(encoding).toBe('latin1');
    expect(warm_up).toBe('ran');
    // What loading main.js alone would cache, against the build's cache: the warm-up's run compiled the
    // functions a run calls (about twice as much code), so runs do not compile them again.
    const script = `
const { builtProgram, compileProgram } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'cli', 'program.js')).href)});
const built = builtProgram(${JSON.stringify(dir)});
const { exports, script } = compileProgram(process.argv[1] === 'cold' ? { ...built, cache: undefined } : built);
const main = await exports.load();
console.log(JSON.stringify({ rejected: script.cachedDataRejected, exported: Object.keys(main).sort(), bytes: script.createCachedData().length }));`;
    const probeRepository = async (how: string) => {
      const run = await execa(process.execPath, ['--input-type=module', '-e', script, how], {
        reject: false,
      });
      expect(run.exitCode, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as { rejected: boolean | undefined; exported: string[]; bytes: number };
    };
    const warm = await probeRepository('warm');
    expect(warm).toMatchObject({ rejected: false, exported: ['runForgePack', 'runProgram', 'runRalphLoop'] });
    const cold = await probeRepository('cold');
    const warmBytes = (await stat(join(dir, cache))).size;
    expect(warmBytes).toBeGreaterThan(cold.bytes * 1.5);
  });

  it('an executable run before any build says how to build, not a module-not-found trace', async () => {
    const bare = await mkdtemp(join(tmpdir(), 'forge-bare-'));
    try {
      await cp(join(ROOT, 'bin'), join(bare, 'bin'), { recursive: true });
      await writeFile(join(bare, 'package.json'), '{"type":"module"}\n');
      const run = await execa(process.execPath, [join(bare, 'bin', 'ralph-loop.js'), '--version'], {
        reject: false,
      });
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain('ralph-loop: the program is not built');
      expect(run.stderr).toContain('npm ci');
      expect(run.stderr).not.toContain('ERR_MODULE_NOT_FOUND');
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });

  it('an executable that cannot load its program for want of file descriptors says so, exit 3, no trace', async () => {
    const bare = await mkdtemp(join(tmpdir(), 'forge-starved-'));
    try {
      await cp(join(ROOT, 'bin'), join(bare, 'bin'), { recursive: true });
      await writeFile(join(bare, 'package.json'), '{"type":"module"}\n');
      // What Node's loader throws when a chunk of the bundle cannot be opened (seen under ulimit -n 18).
      await mkdir(join(bare, 'dist', 'bundle'), { recursive: true });
      await writeFile(
        join(bare, 'dist', 'bundle', 'ralph-loop.js'),
        "throw Object.assign(new Error('EMFILE: too many open files, open chunk.js'), { code: 'EMFILE' });\n",
      );
      const run = await execa(process.execPath, [join(bare, 'bin', 'ralph-loop.js'), '--version'], {
        reject: false,
      });
      expect(run.exitCode).toBe(3);
      expect(run.stderr).toContain(
        'ralph-loop: could not load the program: this process is out of file descriptors (EMFILE)',
      );
      expect(run.stderr).toContain('ulimit -n');
      expect(run.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });
});
