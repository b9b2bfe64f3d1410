// scripts/check.mjs (`npm run check`, what CI runs): the two static checks and the tests start at
// once; each check's output is printed whole under its name; a failing check stops the tests (their
// whole process group) and fails the run, else the tests' exit code is the check's.
import { execa } from 'execa';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// Each static check and the tests mark that they started, then wait until all three have: run one after
// another, the first would wait alone and give up (exit 9) after its deadline.
const LATCH = `
import { existsSync, writeFileSync } from 'node:fs';
const [name, exitCode, say, after, afterMs] = process.argv.slice(2);
writeFileSync('started-' + name, '');
const deadline = Date.now() + 20000;
while (!['types', 'format', 'test'].every((other) => existsSync('started-' + other))) {
  if (Date.now() > deadline) { console.error(name + ' waited alone'); process.exit(9); }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
while (after && !existsSync(after)) await new Promise((resolve) => setTimeout(resolve, 20));
await new Promise((resolve) => setTimeout(resolve, Number(afterMs ?? 0)));
if (say) console.log(say);
process.exit(Number(exitCode));
`;

// The tests: exit with the code given at once, or `hold`: start a grandchild that would outlive them,
// then take 30 s before they finish (a check that fails in the meantime has to stop both).
const TESTS = `
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const [code] = process.argv.slice(2);
if (code !== 'hold') {
  writeFileSync('tests-ran', '');
  process.exit(Number(code));
}
const grandchild = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
writeFileSync('grandchild.pid', String(grandchild.pid));
setTimeout(() => {
  writeFileSync('tests-ran', '');
  process.exit(0);
}, 30000);
`;

let dir = '';
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

/** A project whose checks are the latch above, exiting with the codes given, and whose tests are TESTS. */
async function project(
  codes: { types: number; format: number; test: number | 'hold' },
  /** A file the type check and lint waits for before it ends, and how long it waits after it appears. */
  after?: [string, number],
) {
  const wait = after === undefined ? '' : ` ${after.join(' ')}`;
  dir = await mkdtemp(join(tmpdir(), 'forge-check-'));
  await mkdir(join(dir, 'scripts'));
  await cp(join(ROOT, 'scripts', 'check.mjs'), join(dir, 'scripts', 'check.mjs'));
  await writeFile(join(dir, 'latch.mjs'), LATCH);
  await writeFile(join(dir, 'tests.mjs'), TESTS);
  const scripts = {
    'typecheck-and-lint': `node latch.mjs types ${codes.types} "lint: no-unused-vars in a.ts"${wait}`,
    'format:check': `node latch.mjs format ${codes.format}`,
    test: `node latch.mjs test 0 && node tests.mjs ${codes.test}`,
  };
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', scripts }));
  return execa(process.execPath, [join(dir, 'scripts', 'check.mjs')], {
    cwd: dir,
    reject: false,
    timeout: 25_000,
    env: { npm_config_update_notifier: 'false' },
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm run check', () => {
  it('runs the static checks and the tests at once, and exits with the tests’ code', async () => {
    const run = await project({ types: 0, format: 0, test: 3 });
    expect(run.stderr).not.toContain('waited alone');
    expect(run.stdout).toMatch(/── typecheck-and-lint: passed at [\d.]+ s\nlint: no-unused-vars in a\.ts/);
    expect(run.stdout).toMatch(/── format:check: passed at [\d.]+ s/);
    expect(run.stdout).toMatch(/── tests: FAILED \(exit 3\) at [\d.]+ s$/);
    expect(await readdir(dir)).toContain('tests-ran');
    expect(run.exitCode).toBe(3);
  });

  it('stops the running tests, grandchildren too, when a static check fails, and names the check', async () => {
    const run = await project({ types: 2, format: 0, test: 'hold' }, ['grandchild.pid', 0]);
    expect(run.timedOut, run.stderr).toBe(false);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /── typecheck-and-lint: FAILED \(exit 2\) at [\d.]+ s\nlint: no-unused-vars in a\.ts/,
    );
    expect(run.stdout).toMatch(/── format:check: passed/);
    expect(run.stderr).toContain('check: typecheck-and-lint failed; stopping the tests.');
    expect(run.stderr).toContain('check: typecheck-and-lint failed; the tests were stopped.');
    expect(await readdir(dir)).not.toContain('tests-ran');
    const grandchild = Number(await readFile(join(dir, 'grandchild.pid'), 'utf8'));
    expect(alive(grandchild), `the tests' grandchild ${grandchild} outlived the check`).toBe(false);
  });

  it('says the tests passed, not that they were stopped, when a check fails after them', async () => {
    // The type check fails 1.5 s after the tests wrote their last file: they have ended by then.
    const run = await project({ types: 7, format: 0, test: 0 }, ['tests-ran', 1500]);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(await readdir(dir)).toContain('tests-ran');
    expect(run.stderr).toContain('check: typecheck-and-lint failed; the tests passed.');
    expect(run.stderr).not.toContain('stopping');
  });
});
