// The status path's code cache (scripts/build.mjs writes it, bin/run-built.js reads it): the build's
// cache names the build it was made for and V8 takes it; a cache of another build, a damaged one, one
// V8 refuses, or none at all leaves the status the same, compiled from the text. Each case runs an install holding
// the executables and the status file alone: a status that fell to the full program would fail there.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import { assertBuilt, BIN, ROOT } from '../support/cli.js';

const BUNDLE = join(ROOT, 'dist', 'bundle');
const FAST = join(BUNDLE, 'status-fast.cjs');
const CACHE = `${FAST}.cache`;

let base: string;
let repo: string;
let epic: string;

beforeAll(async () => {
  await assertBuilt();
  base = await mkdtemp(join(tmpdir(), 'forge-status-code-cache-'));
  repo = join(base, 'repo');
  await mkdir(repo);
  const store = createEmbeddedStore({ cwd: repo, actor: 'test' });
  await store.init({ prefix: 'cc' });
  epic = (await store.create({ title: 'cached code', type: 'epic' })).id;
  const first = await store.create({ title: 'first', parent: epic });
  await store.create({ title: 'second', parent: epic, dependsOn: [first.id] });
  await store.close(first.id, 'done');
}, 60_000);

afterAll(async () => {
  if (base !== undefined) await rm(base, { recursive: true, force: true });
});

/** bin/ and dist/bundle/status-fast.cjs in a directory of their own, with `cache` as the code cache. */
async function install(name: string, cache: Buffer | undefined): Promise<string> {
  const dir = join(base, name);
  await cp(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  await cp(join(ROOT, 'package.json'), join(dir, 'package.json'));
  await mkdir(join(dir, 'dist', 'bundle'), { recursive: true });
  await cp(FAST, join(dir, 'dist', 'bundle', 'status-fast.cjs'));
  if (cache !== undefined) await writeFile(join(dir, 'dist', 'bundle', 'status-fast.cjs.cache'), cache);
  return dir;
}

/** What compileStatusFast says of the install's cache, in a Node of its own (V8 keeps a compiled script). */
async function cacheState(dir: string): Promise<string> {
  const runBuilt = join(dir, 'bin', 'run-built.js');
  const child = await execa(process.execPath, [
    '-e',
    `process.stdout.write(require(${JSON.stringify(runBuilt)}).compileStatusFast().cache)`,
  ]);
  return child.stdout;
}

async function status(bin: string, args: string[]) {
  const child = await execa(process.execPath, [bin, ...args], {
    cwd: repo,
    env: { NO_COLOR: '1', LANG: 'C.UTF-8' },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  return { exitCode: child.exitCode, stdout: child.stdout, stderr: child.stderr };
}

describe('the status code cache', () => {
  it('is made by the build for the file it is beside, and taken', async () => {
    expect(existsSync(CACHE)).toBe(true);
    const data = await readFile(CACHE);
    const head = data.toString('latin1', 0, data.indexOf(10));
    const [, build, length] = /^forge-status-cache ([0-9a-f]{16}) (\d+)$/.exec(head) ?? [];
    expect(build, head).toBeDefined();
    const text = await readFile(FAST, 'latin1');
    expect(text.endsWith(`\n//forge-build ${build}\n`)).toBe(true);
    // The cache twice, the same bytes.
    const start = head.length + 1;
    expect(data.length).toBe(start + 2 * Number(length));
    expect(data.subarray(start, start + Number(length)).equals(data.subarray(start + Number(length)))).toBe(
      true,
    );
    expect(await cacheState(ROOT)).toBe('used');
    // More than the file's top level: the build's warm-up statuses ran before the cache was taken, so
    // it holds the functions a status calls too (here half as much again at least).
    const topLevel = await execa(process.execPath, [
      '-e',
      `const { script } = require(${JSON.stringify(join(ROOT, 'bin', 'run-built.js'))}).compileStatusFast({ cache: false });
process.stdout.write(String(script.createCachedData().length));`,
    ]);
    expect(Number(length)).toBeGreaterThan(Number(topLevel.stdout) * 1.5);
  });

  it('prints the same status with the cache, without it, from another build, damaged, and refused by V8', async () => {
    const data = await readFile(CACHE);
    const end = data.indexOf(10) + 1;
    const length = (data.length - end) / 2;
    const copy = data.subarray(end, end + length);
    // One byte changed in the first copy, where V8 crashed on it (SIGSEGV) with no copy to compare.
    const flipped = Buffer.from(copy);
    flipped[Math.floor(length / 2)]! ^= 0xff;
    const cases = [
      { name: 'kept', cache: data, state: 'used' },
      { name: 'none', cache: undefined, state: 'missing' },
      {
        name: 'another-build',
        cache: Buffer.concat([Buffer.from(`forge-status-cache 0123456789abcdef ${length}\n`), copy, copy]),
        state: 'stale',
      },
      { name: 'damaged', cache: Buffer.concat([data.subarray(0, end), flipped, copy]), state: 'damaged' },
      { name: 'cut-short', cache: data.subarray(0, data.length - 1), state: 'damaged' },
      {
        // Both copies the same and not V8's: its own checks refuse it.
        name: 'refused',
        cache: Buffer.concat([data.subarray(0, end), Buffer.alloc(2 * length, 7)]),
        state: 'rejected',
      },
    ];
    const expected = await status(BIN['ralph-loop'], ['status', epic]);
    expect(expected.exitCode, expected.stderr).toBe(0);
    expect(expected.stdout).toContain('2 in all: 1 done, 1 open');
    const expectedJson = await status(BIN['ralph-loop'], ['status', epic, '--json']);
    for (const each of cases) {
      const dir = await install(each.name, each.cache);
      expect(await cacheState(dir), each.name).toBe(each.state);
      const bin = join(dir, 'bin', 'ralph-loop.js');
      expect(await status(bin, ['status', epic]), each.name).toEqual(expected);
      expect(await status(bin, ['status', epic, '--json']), each.name).toEqual(expectedJson);
    }
    // The install has no full program: a status the short path gave up on says so.
    const dir = join(base, 'none');
    const bogus = await status(join(dir, 'bin', 'ralph-loop.js'), ['status', epic, '--bogus']);
    expect(bogus.exitCode).toBe(1);
    expect(bogus.stderr).toContain('the program is not built');
  });
});
