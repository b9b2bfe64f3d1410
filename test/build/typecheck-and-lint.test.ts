// scripts/typecheck-and-lint.mjs (the type check and the lint of `npm run check`, over one program): on a
// copy of the project's configs with a small tree, it reports what tsc and ESLint each would.
import { execa } from 'execa';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'forge-static-'));
  for (const file of ['tsconfig.json', 'eslint.config.js', 'package.json'])
    await cp(join(ROOT, file), join(dir, file));
  await mkdir(join(dir, 'scripts'));
  await cp(join(ROOT, 'scripts', 'typecheck-and-lint.mjs'), join(dir, 'scripts', 'typecheck-and-lint.mjs'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  await mkdir(join(dir, 'src', 'infra'), { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function check(files: Record<string, string>) {
  await rm(join(dir, 'src', 'infra'), { recursive: true, force: true });
  await rm(join(dir, 'scripts', 'extra.mjs'), { force: true });
  await mkdir(join(dir, 'src', 'infra'), { recursive: true });
  for (const [path, text] of Object.entries(files)) await writeFile(join(dir, path), text);
  return execa(process.execPath, [join(dir, 'scripts', 'typecheck-and-lint.mjs')], {
    cwd: dir,
    reject: false,
    timeout: 90_000,
  });
}

describe('typecheck and lint in one process', () => {
  it('passes a clean tree, and reports a type error, a type-aware lint error and a JavaScript one', async () => {
    const clean = await check({ 'src/infra/a.ts': 'export const count: number = 3;\n' });
    expect(clean.stderr).toBe('');
    expect(clean.exitCode, clean.stdout).toBe(0);
    expect(clean.stdout).toMatch(/typecheck: \d+ files, no errors; lint: \d+ files, no problems/);

    const broken = await check({
      'src/infra/a.ts': [
        "export const count: number = 'three';",
        'async function later(): Promise<number> {',
        '  return 1;',
        '}',
        'export function go(): void {',
        '  later();',
        '}',
        '',
      ].join('\n'),
      'scripts/extra.mjs': 'export const x = 1;\nconst unused = 2;\n',
    });
    expect(broken.exitCode, broken.stderr).toBe(1);
    expect(broken.stdout).toContain("src/infra/a.ts(1,14): error TS2322: Type 'string' is not assignable");
    expect(broken.stdout).toContain('typecheck: 1 error(s)');
    // Only a rule with the program's types can tell a floating promise: the shared program reached ESLint.
    expect(broken.stdout).toMatch(/a\.ts\n\s+6:3\s+error\s+Promises must be awaited.*no-floating-promises/);
    expect(broken.stdout).toMatch(/extra\.mjs\n\s+2:7\s+error\s+'unused' is assigned a value/);
  });

  it('reports an error in tsconfig.json once, as tsc does', async () => {
    const config = join(dir, 'tsconfig.json');
    const original = await readFile(config, 'utf8');
    await writeFile(config, original.replace('"strict": true,', '"strict": true, "noSuchOption": true,'));
    try {
      const run = await check({ 'src/infra/a.ts': 'export const count: number = 3;\n' });
      expect(run.exitCode, run.stderr).toBe(1);
      expect(run.stdout.match(/error TS5023: Unknown compiler option 'noSuchOption'/g)).toHaveLength(1);
      expect(run.stdout).toContain('typecheck: 1 error(s)');
    } finally {
      await writeFile(config, original);
    }
  });
});
