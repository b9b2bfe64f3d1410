// runProcess's sweep: what a child started outside its process group (setsid, nohup … &) is ended after it,
// and nothing that lacks the child's mark is ever touched.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  RUN_MARK_VAR,
  findMarkedProcesses,
  firstPidToScan,
  markEnv,
  readPidCounters,
  runProcess,
  sweepMarkedProcesses,
} from '../../src/infra/process.js';
import { MAX_LINE_CHARS, cutLineMark } from '../../src/infra/line-splitter.js';
import { TRUNCATED_MARK } from '../../src/infra/tail-buffer.js';
import { eventually, isGone } from '../support/fake-agents/harness.js';
import { goneNow } from '../support/pids.js';

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

describe('runProcess: a timeout longer than a timer holds', () => {
  it('is no timeout at all, not one that fires at once (a --timeout of 2,200,000 s)', async () => {
    const dir = await tempDir();
    const result = await runProcess(
      { file: 'sh', args: ['-c', 'sleep 0.2; echo done'] },
      { cwd: dir, env: ENV, timeoutMs: 2_200_000_000 },
    );
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'done\n' });
  });
});

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
    // Gone when the run returns, not some time after: what runs next must not share the tree with it.
    expect(await isGone(daemon)).toBe(true);
    expect(result.swept?.map((swept) => swept.pid)).toContain(daemon);
  });

  it('sweeps after a timeout too', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'watcher.pid');
    const result = await runProcess(
      { file: 'sh', args: ['-c', `${escape(pidFile)}; sleep 300`] },
      // The escape has written its pid long before this timeout, even on a loaded machine.
      { cwd: dir, env: ENV, sweep: true, timeoutMs: 3000, killGraceMs: 200 },
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

  it('has ended what it swept by the time it returns, each one that ignored SIGTERM too', async () => {
    // Many at once, so that some are still ending when the sweep first looks: a process killed outright
    // reads as without its mark a moment before it has ended (processStillRuns).
    const dir = await tempDir();
    const env = { ...ENV, [RUN_MARK_VAR]: 'stubborn-run' };
    const pidFiles = Array.from({ length: 24 }, (_, n) => join(dir, `stubborn-${n}.pid`));
    for (const pidFile of pidFiles) {
      // An ignored signal stays ignored across exec: the sleep ignores SIGTERM too.
      const script = `trap "" TERM; echo $$ > ${pidFile}; exec sleep 300`;
      const child = spawn('sh', ['-c', script], { env, detached: true, stdio: 'ignore' });
      child.unref();
      onTestFinished(() => killQuietly(child.pid!));
    }
    // Each one has set its trap once it has written its pid.
    const written = () => Promise.all(pidFiles.map((file) => readFile(file, 'utf8').catch(() => '')));
    expect(await eventually(async () => (await written()).every((pid) => pid.trim() !== ''))).toBe(true);
    const stubborn = (await written()).map(Number);

    const swept = await sweepMarkedProcesses('stubborn-run', { graceMs: 100 });
    expect(swept.map((process) => process.pid)).toEqual(expect.arrayContaining(stubborn));
    // Read all at once, as the caller would go on: gone, or a zombie its parent has not reaped yet.
    expect(stubborn.filter((pid) => !goneNow(pid))).toEqual([]);
  });

  it('follows what it found by pid, not by mark: one that execs without the mark on SIGTERM is still ended', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'changeling.pid');
    const changed = join(dir, 'changed');
    // On SIGTERM: ignore it from then on, say so, and become a program whose environment lacks the mark.
    const onTerm = `trap "" TERM; : > ${changed}; exec env -u ${RUN_MARK_VAR} sleep 300`;
    const script = `trap '${onTerm}' TERM; echo $$ > ${pidFile}; while :; do sleep 0.05; done`;
    const child = spawn('sh', ['-c', script], {
      env: { ...ENV, [RUN_MARK_VAR]: 'changeling-run' },
      detached: true,
      stdio: 'ignore',
    });
    child.unref();
    onTestFinished(() => killQuietly(child.pid!));
    expect(await eventually(async () => (await readFile(pidFile, 'utf8').catch(() => '')) !== '')).toBe(true);

    const swept = await sweepMarkedProcesses('changeling-run', { graceMs: 1000 });
    expect(swept.map((process) => process.pid)).toContain(child.pid);
    expect(existsSync(changed), 'the SIGTERM handler ran').toBe(true);
    expect(goneNow(child.pid!), 'it outlived the sweep').toBe(true);
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

describe('which pids a sweep reads', () => {
  const start = { pid: 5000, forks: 90_000 };

  it('from the child’s pid on while the forks since fit between it and the last pid given', () => {
    // 40 forks after the child's own, and the allocator 40 pids on: nothing can have wrapped.
    expect(firstPidToScan(start, { forks: 90_041, lastPid: 5040 })).toBe(5000);
    expect(firstPidToScan(start, { forks: 90_001, lastPid: 5000 })).toBe(5000);
  });

  it('every pid once the allocator may have wrapped, or forks elsewhere cannot be told apart', () => {
    // The last pid given is below the child's: the allocator went round.
    expect(firstPidToScan(start, { forks: 90_100, lastPid: 320 })).toBeUndefined();
    // More forks than pids handed out since: a wrap (or another namespace's forks) could explain them.
    expect(firstPidToScan(start, { forks: 90_042, lastPid: 5040 })).toBeUndefined();
    // Round the whole pid space and past the child's pid again: far more forks than the gap.
    expect(firstPidToScan(start, { forks: 90_000 + 32_768 + 41, lastPid: 5040 })).toBeUndefined();
  });

  it.runIf(linux)(
    'reads the counters from /proc, and a sweep from them still finds what escaped',
    async () => {
      const before = readPidCounters();
      expect(before).toEqual({ forks: expect.any(Number), lastPid: expect.any(Number) });
      const mark = `window-${process.pid}`;
      const pid = startSleeper({ ...ENV, [RUN_MARK_VAR]: mark });
      const after = readPidCounters()!;
      expect(after.forks).toBeGreaterThan(before!.forks);
      // Started after the counters were read: found whether or not the window could be used.
      const found = await findMarkedProcesses(mark, { startedAfter: { pid, forks: before!.forks } });
      expect(
        found.map((entry) => entry.pid),
        'scanned from before it started',
      ).toEqual([pid]);
      // Swept for a child given the next pid, the sleeper is older than the window. Whether the window
      // may be used depends on the counters at the scan; /proc's move under a busy machine (other
      // processes' forks, pids skipped because in use), so the scan is given them, both ways.
      const window = { pid: pid + 1, forks: after.forks };
      const usable = { forks: window.forks + 2, lastPid: window.pid + 1 };
      const wrapped = { forks: window.forks + 40, lastPid: window.pid + 1 };
      expect(firstPidToScan(window, usable)).toBe(window.pid);
      expect(firstPidToScan(window, wrapped)).toBeUndefined();
      const skipped = await findMarkedProcesses(mark, { startedAfter: window, counters: usable });
      expect(skipped.map((entry) => entry.pid)).toEqual([]);
      const scanned = await findMarkedProcesses(mark, { startedAfter: window, counters: wrapped });
      expect(scanned.map((entry) => entry.pid)).toEqual([pid]);
    },
  );
});

describe('runProcess: output lines', () => {
  it('passes on whole lines, a line with no newline cut at its bound, and keeps the tail whole', async () => {
    const dir = await tempDir();
    // 3 MiB on one line, written in many chunks, then two short lines, the last unterminated.
    const script =
      "const a = 'a'.repeat(64 * 1024); for (let i = 0; i < 48; i += 1) process.stdout.write(a);" +
      "process.stdout.write('\\r\\nnext\\r\\nlast');";
    const lines: string[] = [];
    const result = await runProcess(
      { file: process.execPath, args: ['-e', script] },
      { cwd: dir, env: ENV, onStdoutLine: (line) => lines.push(line), maxBufferChars: 100 },
    );
    expect(result.exitCode).toBe(0);
    const dropped = 48 * 64 * 1024 + 1 - MAX_LINE_CHARS;
    expect(lines).toEqual([`${'a'.repeat(MAX_LINE_CHARS)}${cutLineMark(dropped)}`, 'next', 'last']);
    // The kept tail is the stream's end as it came (how much of it depends on how the pipe chunked it).
    expect(result.stdout.startsWith(TRUNCATED_MARK)).toBe(true);
    expect(result.stdout.endsWith('\r\nnext\r\nlast')).toBe(true);
    expect(result.stdout.length).toBeLessThanOrEqual(TRUNCATED_MARK.length + 100);
  });
});
