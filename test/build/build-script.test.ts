// scripts/build.mjs emits dist/ with `tsc --noCheck` (`npm run typecheck` is the one type check): a
// type error does not stop the build, a syntax error does and leaves dist/ marked stale.
import { execa } from 'execa';
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

let copy: string;

/** A project with the real build script and configs, one source file, and the repository's TypeScript. */
beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), 'forge-build-'));
  for (const entry of ['scripts/build.mjs', 'package.json', 'tsconfig.json', 'tsconfig.build.json'])
    await cp(join(ROOT, entry), join(copy, entry));
  await mkdir(join(copy, 'src', 'cli'), { recursive: true });
  await mkdir(join(copy, 'node_modules'));
  await symlink(join(ROOT, 'node_modules', 'typescript'), join(copy, 'node_modules', 'typescript'));
  await symlink(join(ROOT, 'node_modules', '@types'), join(copy, 'node_modules', '@types'));
});
afterAll(async () => {
  await rm(copy, { recursive: true, force: true });
});

const build = (...args: string[]) =>
  execa(process.execPath, [join(copy, 'scripts', 'build.mjs'), ...args], { cwd: copy, reject: false });

describe('scripts/build.mjs', () => {
  it('emits despite a type error (the type check is npm run typecheck), and not again while fresh', async () => {
    await writeFile(join(copy, 'src', 'cli', 'main.ts'), 'export const count: number = "three";\n');
    const built = await build('--if-stale');
    expect(built.exitCode, built.stderr + built.stdout).toBe(0);
    expect(await readFile(join(copy, 'dist', 'cli', 'main.js'), 'utf8')).toBe(
      'export const count = "three";\n',
    );
    const before = (await stat(join(copy, 'dist', 'cli', 'main.js'))).mtimeMs;
    expect((await build('--if-stale')).exitCode).toBe(0);
    expect((await stat(join(copy, 'dist', 'cli', 'main.js'))).mtimeMs).toBe(before);
  });

  it('fails on a syntax error, naming the file, and marks the build stale', async () => {
    await writeFile(join(copy, 'src', 'cli', 'broken.ts'), 'export const = ;\n');
    const failed = await build('--if-stale');
    expect(failed.exitCode).not.toBe(0);
    expect(failed.stdout + failed.stderr).toContain('broken.ts');
    expect((await stat(join(copy, 'dist', 'cli', 'main.js'))).mtimeMs).toBe(0);
  });
});
