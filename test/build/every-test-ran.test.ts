// The reporter `npm test` runs with: a skipped or todo test fails the run; a run narrowed by name does not.
import { execa } from 'execa';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ROOT } from '../support/cli.js';

const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const REPORTER = join(ROOT, 'test', 'support', 'every-test-ran.ts');

async function runSuite(source: string, extra: string[] = []) {
  const dir = await mkdtemp(join(tmpdir(), 'forge-reporter-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'suite.test.js'), source);
  // A config of its own, so the project's (its temp dir, its projects) stays out of it.
  await writeFile(join(dir, 'vitest.config.mjs'), 'export default { test: { globals: true } };\n');
  return execa(process.execPath, [VITEST, 'run', '--root', dir, '--reporter', REPORTER, ...extra], {
    cwd: dir,
    reject: false,
    env: { NO_COLOR: '1' },
  });
}

describe('the every-test-ran reporter', () => {
  it('fails a run with a skipped or a todo test, naming each', async () => {
    const run = await runSuite("it('runs', () => {});\nit.skip('left out', () => {});\nit.todo('later');\n");
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toContain('2 test(s) did not run to an end');
    expect(run.stderr).toContain('suite.test.js > left out: skipped');
    expect(run.stderr).toContain('suite.test.js > later');
  });

  it('passes a run where every test ran, and one narrowed with -t', async () => {
    const all = await runSuite("it('one', () => {});\nit('two', () => {});\n");
    expect(all.exitCode, all.stderr).toBe(0);
    const narrowed = await runSuite("it('one', () => {});\nit('two', () => {});\n", ['-t', 'one']);
    expect(narrowed.exitCode, narrowed.stderr).toBe(0);
  });
});
