#!/usr/bin/env node
// `npm run check`: the type check and the lint (one process, one TypeScript program:
// scripts/typecheck-and-lint.mjs), the format check and the tests, all at once.
//
// The static checks (~44 s of CPU on a clean clone; apart, the type check and the lint each built the
// same program, ~59 s) run beside the tests, which keep both cores busy; started together, a
// clean-clone check took 304 s here against 316 s with the tests waiting for the checks. A static
// check that fails still ends the run early: the tests are stopped then and there, so a type error is
// seen in well under a minute, not after the whole suite.
//
// While the tests run, their reporter owns the terminal; each static check's output is held and printed
// after them (or at once, for a check that failed, since the tests are being stopped anyway).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const STATIC = ['typecheck-and-lint', 'format:check'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** How long the stopped tests get to end after SIGTERM before their process group is killed. */
const STOP_GRACE_MS = 5000;
const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);

/** Whether any process of a child's group (each child leads one) is still alive. */
function groupAlive(child) {
  try {
    process.kill(-child.pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops a child's whole process group: SIGTERM, then SIGKILL to whatever is left after the grace
 * (vitest's workers included, whether or not npm passed the signal on). False when it was already gone.
 */
async function stopGroup(child) {
  if (child.pid === undefined || !groupAlive(child)) return false;
  process.kill(-child.pid, 'SIGTERM');
  const deadline = Date.now() + STOP_GRACE_MS;
  while (groupAlive(child) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(child)) process.kill(-child.pid, 'SIGKILL');
  return true;
}

/** Resolves to the exit code of a child (128 + n for a signal, 1 when it could not start). */
function exitOf(child) {
  return new Promise((resolve) => {
    child.once('error', () => resolve(1));
    child.once('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

const children = [];
function start(args, stdio) {
  // Its own process group, so stopping it stops what it started (vitest's workers, tsc under npm).
  const child = spawn(npm, args, { stdio, detached: process.platform !== 'win32' });
  children.push(child);
  return child;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const child of children)
      if (child.pid !== undefined && groupAlive(child)) process.kill(-child.pid, 'SIGTERM');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

const tests = start(['test'], 'inherit');
const testsEnded = exitOf(tests);
/** Set when a static check failed while the tests ran: resolves to true once they are stopped. */
let stopping;

const checks = STATIC.map(async (script) => {
  const child = start(['run', '--silent', script], ['ignore', 'pipe', 'pipe']);
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  const code = await exitOf(child);
  const text = Buffer.concat(output).toString('utf8');
  const report = `── ${script}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} at ${seconds()} s\n${
    text.trim() === '' ? '' : text.endsWith('\n') ? text : `${text}\n`
  }`;
  if (code !== 0) {
    process.stdout.write(report);
    if (stopping === undefined && tests.exitCode === null && tests.signalCode === null) {
      process.stderr.write(`check: ${script} failed; stopping the tests.\n`);
      stopping = stopGroup(tests);
    }
  }
  return { script, code, report };
});

const results = await Promise.all(checks);
const testCode = await testsEnded;
const testsStopped = (await stopping) === true;
for (const result of results) if (result.code === 0) process.stdout.write(result.report);
const failed = results.filter((result) => result.code !== 0).map((result) => result.script);
if (failed.length > 0) {
  const tested = testsStopped
    ? 'the tests were stopped'
    : `the tests ${testCode === 0 ? 'passed' : 'failed'}`;
  process.stderr.write(`check: ${failed.join(', ')} failed; ${tested}.\n`);
  process.exit(1);
}
process.stdout.write(
  `── tests: ${testCode === 0 ? 'passed' : `FAILED (exit ${testCode})`} at ${seconds()} s\n`,
);
process.exit(testCode);
