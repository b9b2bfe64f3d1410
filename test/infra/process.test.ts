// runProcess's sweep: what a child started outside its process group (setsid, nohup … &) is ended after it,
// and nothing that lacks the child's mark is ever touched.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  RUN_MARK_VAR,
  findMarkedProcesses,
  markEnv,
  runProcess,
  sweepMarkedProcesses,
} from '../../src/infra/process.js';
import { eventually, isGone } from '../support/fake-agents/harness.js';

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const linux = process.platform === 'linux';

/**
 * Shell code that starts `sleep 300` in a session of its own and waits until it is there (its pid in
 * `pidFile`): the child must not end before, or the group kill at its exit would catch it still in the group.
 */
function escape(pidFile: string, body = 'exec sleep 300'): string {
  return `setsid sh -c 'echo $$ > ${pidFile}; ${body}' >/dev/null 2>&1 & while [ ! -s ${pidFile} ]; do sleep 0.05; done`;
}

/** A `sleep 300` in a session of its own, killed when the test ends whatever happens. */
function startSleeper(env: NodeJS.ProcessEnv): number {
  const child = spawn('sleep', ['300'], { env, detached: true, stdio: 'ignore' });
  child.unref();
  const pid = child.pid!;
  onTestFinished(() => killQuietly(pid));
  return pid;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-process-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe.runIf(linux)('runProcess: sweeping what escaped the group', () => {
  it('ends a setsid/nohup background process that outlived the child, and reports it', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'server.pid');
    const result = await runProcess(
      { file: 'sh', args: ['-c', escape(pidFile)] },
      { cwd: dir, env: ENV, sweep: true },
    );
    const escaped = Number(await readFile(pidFile, 'utf8'));
    onTestFinished(() => killQuietly(escaped));
    expect(result.exitCode).toBe(0);
    expect(await isGone(escaped)).toBe(true);
    expect(result.swept).toEqual([{ pid: escaped, command: 'sleep 300' }]);
  });

  it('does not end the run late when the escaped process holds stdout and ignores SIGTERM', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'daemon.pid');
    const holdStdout = `setsid sh -c 'trap "" TERM; echo $$ > ${pidFile}; while :; do sleep 1; done' &`;
    const script = `${holdStdout} while [ ! -s ${pidFile} ]; do sleep 0.05; done`;
    const result = await runProcess(
      { file: 'sh', args: ['-c', script] },
      { cwd: dir, env: ENV, sweep: true, killGraceMs: 300, timeoutMs: 30_000 },
    );
    const daemon = Number(await readFile(pidFile, 'utf8'));
    onTestFinished(() => killQuietly(daemon));
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(result.durationMs).toBeLessThan(10_000);
    expect(await eventually(() => isGone(daemon))).toBe(true);
    expect(result.swept?.map((swept) => swept.pid)).toContain(daemon);
  });

  it('sweeps after a timeout too', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'watcher.pid');
    const result = await runProcess(
      { file: 'sh', args: ['-c', `${escape(pidFile)}; sleep 300`] },
      { cwd: dir, env: ENV, sweep: true, timeoutMs: 500, killGraceMs: 200 },
    );
    const escaped = Number(await readFile(pidFile, 'utf8'));
    onTestFinished(() => killQuietly(escaped));
    expect(result.timedOut).toBe(true);
    expect(await isGone(escaped)).toBe(true);
  });

  it('leaves what escaped alone without `sweep` (what the sweep is for)', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'server.pid');
    const result = await runProcess({ file: 'sh', args: ['-c', escape(pidFile)] }, { cwd: dir, env: ENV });
    const escaped = Number(await readFile(pidFile, 'utf8'));
    onTestFinished(() => killQuietly(escaped));
    expect(result.swept).toBeUndefined();
    expect(await isGone(escaped)).toBe(false);
  });

  it('never touches a process without the mark, or with another run’s mark', async () => {
    const unmarked = startSleeper(ENV);
    const otherRun = startSleeper({ ...ENV, [RUN_MARK_VAR]: 'another-run' });
    const ours = startSleeper({ ...ENV, [RUN_MARK_VAR]: 'outer-run:this-run' });
    const swept = await sweepMarkedProcesses('this-run', { graceMs: 500 });
    expect(swept.map((process) => process.pid)).toEqual([ours]);
    expect(await isGone(ours)).toBe(true);
    expect(await isGone(unmarked)).toBe(false);
    expect(await isGone(otherRun)).toBe(false);
  });

  it('finds a nested run’s processes by the outer mark: marks add up', async () => {
    const nested = markEnv(markEnv(ENV, 'outer'), 'inner');
    expect(nested[RUN_MARK_VAR]).toBe('outer:inner');
    const pid = startSleeper(nested);
    expect((await findMarkedProcesses('outer')).map((process) => process.pid)).toEqual([pid]);
    expect((await findMarkedProcesses('inner')).map((process) => process.pid)).toEqual([pid]);
    expect(await findMarkedProcesses('out')).toEqual([]);
  });

  it('never ends the process that sweeps, or its parents, even when they carry the mark', async () => {
    // A node process carrying the mark sweeps it: its sibling goes (and tsx's esbuild service, its own
    // child), it and its parents stay.
    const dir = await tempDir();
    const processModule = fileURLToPath(new URL('../../src/infra/process.ts', import.meta.url));
    const script = join(dir, 'sweeper.mts');
    await writeFile(
      script,
      [
        `import { sweepMarkedProcesses } from ${JSON.stringify(processModule)};`,
        `const swept = await sweepMarkedProcesses('self-run', { graceMs: 500 });`,
        `console.log(JSON.stringify({ self: process.pid, parent: process.ppid, swept: swept.map((entry) => entry.pid) }));`,
      ].join('\n'),
    );
    const env = { ...ENV, [RUN_MARK_VAR]: 'self-run' };
    const sibling = startSleeper(env);
    const result = await runProcess(
      { file: process.execPath, args: ['--import', 'tsx', script] },
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), env, timeoutMs: 30_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as { self: number; parent: number; swept: number[] };
    expect(report.swept).toContain(sibling);
    expect(report.swept).not.toContain(report.self);
    expect(report.swept).not.toContain(report.parent);
    expect(await isGone(sibling)).toBe(true);
  });
});
