// How the executables find the program the build made (src/cli/program.ts): program.json names it, and
// anything short of a whole pair sends them to the split build's modules, which are the same program.
import { execa } from 'execa';
import { cp, mkdir, mkdtemp, open, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtProgram, MANIFEST } from '../../src/cli/program.js';
import { assertBuilt, ROOT } from '../support/cli.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'forge-program-'));
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function manifestIn(name: string, text: string | undefined, files: string[] = []): Promise<string> {
  const at = join(dir, name);
  await mkdir(at, { recursive: true });
  if (text !== undefined) await writeFile(join(at, MANIFEST), text);
  for (const file of files) await writeFile(join(at, file), '');
  return at;
}

describe('builtProgram', () => {
  const sha256 = 'ab'.repeat(32);
  const cache_sha256 = 'cd'.repeat(32);

  // The manifest as written, the program file beside it, and what builtProgram makes of them.
  const read: [string, Record<string, string>, string, { file: string; cache: string; encoding: string }][] =
    [
      [
        'names the program and its cache beside the manifest, how to read it, and its hash',
        { file: 'program-ab.cjs', cache: 'program-ab.cjs.cache', encoding: 'latin1', sha256, cache_sha256 },
        'program-ab.cjs',
        { file: 'program-ab.cjs', cache: 'program-ab.cjs.cache', encoding: 'latin1' },
      ],
      [
        'reads only names from the manifest, and UTF-8 unless it says the program is ASCII',
        { file: '../../p.cjs', cache: '/etc/p.cache', sha256, cache_sha256 },
        'p.cjs',
        { file: 'p.cjs', cache: 'p.cache', encoding: 'utf8' },
      ],
    ];

  it.each(read)('%s', async (name, manifest, program, expected) => {
    const at = await manifestIn(name.split(' ')[0] ?? name, JSON.stringify(manifest), [program]);
    expect(builtProgram(at)).toEqual({
      file: join(at, expected.file),
      cache: join(at, expected.cache),
      encoding: expected.encoding,
      sha256,
      cacheSha256: cache_sha256,
    });
  });

  it('is undefined without a whole manifest naming a program that is there, and its hash', async () => {
    expect(builtProgram(await manifestIn('none', undefined))).toBeUndefined();
    expect(builtProgram(await manifestIn('torn', '{"file":"program-ab.cj'))).toBeUndefined();
    expect(builtProgram(await manifestIn('null', 'null'))).toBeUndefined();
    expect(builtProgram(await manifestIn('shape', '{"file":3,"cache":"c"}', ['3']))).toBeUndefined();
    const missing = JSON.stringify({
      file: 'program-gone.cjs',
      cache: 'program-gone.cjs.cache',
      sha256,
      cache_sha256,
    });
    expect(builtProgram(await manifestIn('missing', missing))).toBeUndefined();
    const unhashed = JSON.stringify({ file: 'program-ab.cjs', cache: 'program-ab.cjs.cache' });
    expect(builtProgram(await manifestIn('unhashed', unhashed, ['program-ab.cjs']))).toBeUndefined();
    const cacheUnhashed = JSON.stringify({ file: 'program-ab.cjs', cache: 'program-ab.cjs.cache', sha256 });
    expect(
      builtProgram(await manifestIn('cache-unhashed', cacheUnhashed, ['program-ab.cjs'])),
    ).toBeUndefined();
  });
});

/** A copy of the built executables (the split build's files, and the program with its cache) under `name`. */
async function installCopy(
  name: string,
): Promise<{ root: string; bundle: string; program: string; cache: string }> {
  await assertBuilt();
  const root = join(dir, name);
  await cp(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  await cp(join(ROOT, 'package.json'), join(root, 'package.json'));
  const from = join(ROOT, 'dist', 'bundle');
  const bundle = join(root, 'dist', 'bundle');
  const meta = JSON.parse(await readFile(join(from, 'meta.json'), 'utf8')) as {
    inputs: Record<string, string[]>;
  };
  const built = JSON.parse(await readFile(join(from, MANIFEST), 'utf8')) as { file: string; cache: string };
  for (const file of [...Object.keys(meta.inputs), MANIFEST, built.file, built.cache]) {
    await cp(join(from, file), join(bundle, file));
  }
  await symlink(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return { root, bundle, program: join(bundle, built.file), cache: join(bundle, built.cache) };
}

const initHelp = (root: string) =>
  execa(process.execPath, [join(root, 'bin', 'forge-pack.js'), 'init', '--help'], { reject: false });

/**
 * The `program` line of `forge-pack doctor --json` run from `root`, under `nodeArgs`. The agent CLIs
 * are kept off PATH: doctor asks each installed one its version (~2 s of CPU for the four in
 * node_modules/.bin), and these tests read only the program's line.
 */
async function programCheckIn(
  root: string,
  nodeArgs: string[] = [],
): Promise<{ status: string; summary: string } | undefined> {
  const run = await execa(
    process.execPath,
    [...nodeArgs, join(root, 'bin', 'forge-pack.js'), 'doctor', '--json'],
    {
      cwd: dir,
      env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` },
      reject: false,
    },
  );
  const report = JSON.parse(run.stdout) as { checks: { name: string; status: string; summary: string }[] };
  return report.checks.find((check) => check.name === 'program');
}

describe('an install whose program.json is not whole', () => {
  it('runs from the split build, as the same program', async () => {
    const install = await installCopy('install');
    await writeFile(join(install.bundle, MANIFEST), '{"file":"program-');
    const half = await initHelp(install.root);
    const whole = await initHelp(ROOT);
    expect(half.exitCode, half.stderr).toBe(0);
    expect(half.stdout).toBe(whole.stdout);
    expect(half.stdout).toContain('Usage: forge-pack init');
  });
});

describe('an install whose program is not the one the build wrote', () => {
  // V8 takes a cache for any source of the right length, and compiles lazy functions from the file:
  // an edit that keeps the length, or blocks zeroed by a crash, would mix the two. Each start checks
  // the program's sha256 and runs the split build's modules when it differs.
  const damages: [string, (program: string) => Promise<void>][] = [
    ['cut short', async (program) => truncate(program, 100_000)],
    [
      'zeroed, at its length',
      async (program) => writeFile(program, Buffer.alloc((await stat(program)).size)),
    ],
    [
      'edited, at its length',
      async (program) => {
        const text = await readFile(program, 'latin1');
        expect(text).toContain('Usage:');
        await writeFile(program, text.replaceAll('Usage:', 'Usagf:'), 'latin1');
      },
    ],
  ];

  it.each(damages)('%s: runs from the split build, as the same program', async (name, damage) => {
    const install = await installCopy(`damaged-${name.replace(/\W+/g, '-')}`);
    await damage(install.program);
    const damaged = await initHelp(install.root);
    const whole = await initHelp(ROOT);
    expect(damaged.exitCode, damaged.stderr).toBe(0);
    expect(damaged.stdout).toBe(whole.stdout);
    if (name.startsWith('edited')) {
      // The case V8 alone would take: doctor says why commands start slower.
      expect(await programCheckIn(install.root)).toMatchObject({
        status: 'warn',
        summary: expect.stringContaining('is not whole'),
      });
    }
  });

  it('with its code cache damaged, compiles the program without it (V8 alone would crash on it)', async () => {
    // Release builds of V8 do not checksum a cache's payload: with a block of it zeroed, as a crash can
    // leave a file, every command died of a segmentation fault. Each start checks the cache's sha256.
    const install = await installCopy('damaged-cache');
    const handle = await open(install.cache, 'r+');
    try {
      await handle.write(Buffer.alloc(200_000), 0, 200_000, 300_000);
    } finally {
      await handle.close();
    }
    const damaged = await initHelp(install.root);
    expect(damaged.exitCode, damaged.stderr).toBe(0);
    expect(damaged.stdout).toBe((await initHelp(ROOT)).stdout);
    expect(await programCheckIn(install.root)).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('code cache in'),
    });
  });

  it('a whole copy starts from its cache (the damage above is what changes the answer)', async () => {
    const install = await installCopy('whole');
    expect(await programCheckIn(install.root)).toMatchObject({ status: 'ok' });
  });
});

describe('forge-pack doctor, as a process', () => {
  it("says the program started from the build's cache, and when V8 refused it (other flags)", async () => {
    await assertBuilt();
    expect(await programCheckIn(ROOT)).toMatchObject({ status: 'ok' });
    // The build's cache was made without --no-opt: V8 refuses it under that flag.
    expect(await programCheckIn(ROOT, ['--no-opt'])).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining("cannot use the program's code cache"),
    });
  });
});
