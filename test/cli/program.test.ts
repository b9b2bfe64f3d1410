// How the executables find the program the build made (src/cli/program.ts): program.json names it, and
// anything short of a whole pair sends them to the split build's modules, which are the same program.
import { execa } from 'execa';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  it('names the program and its cache beside the manifest, and how to read the program', async () => {
    const at = await manifestIn(
      'whole',
      JSON.stringify({ file: 'program-ab.cjs', cache: 'program-ab.cjs.cache', encoding: 'latin1' }),
      ['program-ab.cjs'],
    );
    expect(builtProgram(at)).toEqual({
      file: join(at, 'program-ab.cjs'),
      cache: join(at, 'program-ab.cjs.cache'),
      encoding: 'latin1',
    });
  });

  it('reads only names from the manifest, and UTF-8 unless it says the program is ASCII', async () => {
    const at = await manifestIn('names', JSON.stringify({ file: '../../p.cjs', cache: '/etc/p.cache' }), [
      'p.cjs',
    ]);
    expect(builtProgram(at)).toEqual({
      file: join(at, 'p.cjs'),
      cache: join(at, 'p.cache'),
      encoding: 'utf8',
    });
  });

  it('is undefined without a whole manifest naming a program that is there', async () => {
    expect(builtProgram(await manifestIn('none', undefined))).toBeUndefined();
    expect(builtProgram(await manifestIn('torn', '{"file":"program-ab.cj'))).toBeUndefined();
    expect(builtProgram(await manifestIn('null', 'null'))).toBeUndefined();
    expect(builtProgram(await manifestIn('shape', '{"file":3,"cache":"c"}', ['3']))).toBeUndefined();
    const missing = JSON.stringify({ file: 'program-gone.cjs', cache: 'program-gone.cjs.cache' });
    expect(builtProgram(await manifestIn('missing', missing))).toBeUndefined();
  });
});

describe('an install whose program.json is not whole', () => {
  it('runs from the split build, as the same program', async () => {
    await assertBuilt();
    const install = join(dir, 'install');
    await cp(join(ROOT, 'bin'), join(install, 'bin'), { recursive: true });
    await cp(join(ROOT, 'package.json'), join(install, 'package.json'));
    const bundle = join(ROOT, 'dist', 'bundle');
    const meta = JSON.parse(await readFile(join(bundle, 'meta.json'), 'utf8')) as {
      inputs: Record<string, string[]>;
    };
    for (const file of Object.keys(meta.inputs)) {
      await cp(join(bundle, file), join(install, 'dist', 'bundle', file));
    }
    await symlink(join(ROOT, 'node_modules'), join(install, 'node_modules'));
    await writeFile(join(install, 'dist', 'bundle', MANIFEST), '{"file":"program-');
    const run = (root: string) =>
      execa(process.execPath, [join(root, 'bin', 'forge-pack.js'), 'init', '--help'], { reject: false });
    const half = await run(install);
    const whole = await run(ROOT);
    expect(half.exitCode, half.stderr).toBe(0);
    expect(half.stdout).toBe(whole.stdout);
    expect(half.stdout).toContain('Usage: forge-pack init');
  });
});

describe('forge-pack doctor, as a process', () => {
  const programCheckOf = async (nodeArgs: string[]) => {
    const run = await execa(
      process.execPath,
      [...nodeArgs, join(ROOT, 'bin', 'forge-pack.js'), 'doctor', '--json'],
      {
        cwd: dir,
        reject: false,
      },
    );
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string }[] };
    return report.checks.find((check) => check.name === 'program');
  };

  it("says the program started from the build's cache, and when V8 refused it (other flags)", async () => {
    await assertBuilt();
    expect(await programCheckOf([])).toMatchObject({ status: 'ok' });
    // The build's cache was made without --no-opt: V8 refuses it under that flag.
    expect(await programCheckOf(['--no-opt'])).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining("cannot use the program's code cache"),
    });
  });
});
