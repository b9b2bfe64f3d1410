// scripts/check.mjs (`npm run check`, what CI runs): the three static checks run side by side, each
// one's output printed whole under its name; the tests run only when all three passed, and their exit
// code is the check's.
import { execa } from 'execa';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// Each static check marks that it started, then waits until all three have: run one after another,
// the first would wait alone and give up (exit 9) after its deadline.
const LATCH = `
import { existsSync, writeFileSync } from 'node:fs';
const [name, exitCode, say] = process.argv.slice(2);
writeFileSync('started-' + name, '');
const deadline = Date.now() + 20000;
while (!['typecheck', 'lint', 'format'].every((other) => existsSync('started-' + other))) {
  if (Date.now() > deadline) { console.error(name + ' waited alone'); process.exit(9); }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
if (say) console.log(say);
process.exit(Number(exitCode));
`;

let dir = '';
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

/** A project whose checks are the latch above, exiting with the codes given, and whose tests exit `test`. */
async function project(codes: { typecheck: number; lint: number; format: number; test: number }) {
  dir = await mkdtemp(join(tmpdir(), 'forge-check-'));
  await mkdir(join(dir, 'scripts'));
  await cp(join(ROOT, 'scripts', 'check.mjs'), join(dir, 'scripts', 'check.mjs'));
  await writeFile(join(dir, 'latch.mjs'), LATCH);
  const scripts = {
    typecheck: `node latch.mjs typecheck ${codes.typecheck} "types are fine"`,
    lint: `node latch.mjs lint ${codes.lint} "lint: no-unused-vars in a.ts"`,
    'format:check': `node latch.mjs format ${codes.format}`,
    test: `node -e "require('fs').writeFileSync('tests-ran', ''); process.exit(${codes.test})"`,
  };
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', scripts }));
  return execa(process.execPath, [join(dir, 'scripts', 'check.mjs')], {
    cwd: dir,
    reject: false,
    env: { npm_config_update_notifier: 'false' },
  });
}

describe('npm run check', () => {
  it('runs the three static checks at once, then the tests, and exits with their code', async () => {
    const run = await project({ typecheck: 0, lint: 0, format: 0, test: 3 });
    expect(run.stdout).toMatch(/── typecheck: passed in [\d.]+ s\ntypes are fine/);
    expect(run.stdout).toMatch(/── lint: passed in [\d.]+ s\nlint: no-unused-vars in a\.ts/);
    expect(run.stdout).toMatch(/── format:check: passed in [\d.]+ s/);
    expect(run.stderr).not.toContain('waited alone');
    expect(await readdir(dir)).toContain('tests-ran');
    expect(run.exitCode).toBe(3);
  });

  it('does not run the tests when a static check fails, and names it', async () => {
    const run = await project({ typecheck: 0, lint: 2, format: 0, test: 0 });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/── lint: FAILED \(exit 2\) in [\d.]+ s\nlint: no-unused-vars in a\.ts/);
    expect(run.stdout).toMatch(/── typecheck: passed/);
    expect(run.stderr).toContain('check: lint failed; the tests were not run.');
    expect(await readdir(dir)).not.toContain('tests-ran');
  });
});
