// `npm run demo`, the command the README gives first: a whole scripted autoresearch loop in a temp repo
// of its own, on the embedded store, with no br on PATH and no key, and the temp repo gone after.
import { execa } from 'execa';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, ROOT } from '../support/cli.js';

beforeAll(async () => {
  await assertBuilt();
});

/** Runs the demo as the README says, in an empty temp dir, with node and the system's git on PATH only. */
async function runDemo(temp: string, args: string[] = []) {
  const demo = await execa(process.execPath, [join(ROOT, 'scripts', 'demo.mjs'), ...args], {
    cwd: temp,
    // No br, no agent CLI, no key.
    env: { PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(':'), HOME: temp, TMPDIR: temp },
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: 120_000,
  });
  return { ...demo, output: `${demo.stdout}\n${demo.stderr}` };
}

it('runs the loop to its target (three kept, one reverted), prints its status and history, and removes its repo', async () => {
  const temp = await mkdtemp(join(tmpdir(), 'forge-demo-test-'));
  onTestFinished(() => rm(temp, { recursive: true, force: true }));
  const { exitCode, stderr, output } = await runDemo(temp);
  expect(exitCode, output).toBe(0);
  expect(output, output).toMatch(/phase\s+terminated: goal_reached \(best 8\)/);
  expect(output, output).toMatch(/iters\s+4 decided: 3 kept, 1 reverted, 0 crashed/);
  expect(output, output).toMatch(/score\s+1 \(baseline\) → 8 \(best, iter 4\)/);
  // The revert is a commit of its own, after the doer's.
  expect(output, output).toMatch(
    /autoresearch iter 2: arbiter\n[0-9a-f]+ autoresearch iter 2: doer-2: slugify/,
  );
  expect(output, output).toContain('The temp repo was removed');
  // Not a terminal: plain headings, no escape codes in a log.
  expect(stderr).not.toContain('\u001b[');
  expect(await readdir(temp)).toEqual([]);
});

it('--pipeline runs its three stages (loop, epic, loop) to the end and removes its repo', async () => {
  const temp = await mkdtemp(join(tmpdir(), 'forge-demo-test-'));
  onTestFinished(() => rm(temp, { recursive: true, force: true }));
  const { exitCode, stderr, output } = await runDemo(temp, ['--pipeline']);
  expect(exitCode, output).toBe(0);
  expect(output, output).toMatch(/pipeline limiter \(\S+\): done\n/);
  expect(output, output).toMatch(/1\. spec \[loop\] \S+ → \S+: passed; score 3 → 9 → 9 \(target 8\)/);
  expect(output, output).toMatch(/2\. build \[epic\] \S+ → \S+: passed; beads 1\/1 closed/);
  expect(output, output).toMatch(/3\. qa \[loop\] \S+ → \S+: passed; score 10 → 12 → 12 \(target 12\)/);
  expect(output, output).toContain('The temp repo was removed');
  expect(stderr).not.toContain('\u001b[');
  expect(await readdir(temp)).toEqual([]);
});
