// runShortProcess, the runner of br and git calls: runProcess's result for a short command, and its
// guarantees (own process group, killed whole on a timeout, nothing left in the group once it exits).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  catchOutputIn,
  OUTPUT_ROOM_BYTES,
  outputCapBytes,
  runShortProcess,
} from '../../src/infra/short-process.js';
import { eventually, isGone } from '../support/fake-agents/harness.js';

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-short-process-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const sh = (script: string) => ({ file: 'sh', args: ['-c', script] });

/** The pid a script wrote to `file`, killed when the test ends whatever happens. */
async function pidIn(file: string): Promise<number> {
  const pid = Number((await readFile(file, 'utf8')).trim());
  expect(Number.isInteger(pid) && pid > 1).toBe(true);
  onTestFinished(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  });
  return pid;
}

describe('runShortProcess', () => {
  it('a timeout longer than a timer can hold is no timeout at all, not one that fires at once', async () => {
    const dir = await tempDir();
    // 2,200,000 s: past 2^31-1 ms, where Node fires a timer at once.
    const result = await runShortProcess(sh('sleep 0.2; echo done'), {
      cwd: dir,
      env: ENV,
      timeoutMs: 2_200_000_000,
    });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'done\n' });
  });

  it('gives the input on stdin and returns both streams and the exit code as they were', async () => {
    const result = await runShortProcess(sh('cat; printf "%s" "$GREETING" >&2; exit 3'), {
      cwd: tmpdir(),
      env: { ...ENV, GREETING: 'only what env says\n' },
      input: 'line one\nline two\n',
    });
    expect(result).toMatchObject({
      exitCode: 3,
      signal: undefined,
      stdout: 'line one\nline two\n',
      stderr: 'only what env says\n',
      timedOut: false,
      aborted: false,
      spawnError: undefined,
    });
  });

  it('passes only the environment it is given, and runs in the directory it is given', async () => {
    const dir = await tempDir();
    const result = await runShortProcess(sh('pwd; echo "${HOME-unset}"'), { cwd: dir, env: ENV });
    expect(result.stdout.split('\n').slice(0, 2)).toEqual([dir, 'unset']);
  });

  it('reports a command that cannot be started, and does not throw', async () => {
    const result = await runShortProcess(
      { file: '/nonexistent/forge-br', args: ['version'] },
      { cwd: tmpdir(), env: ENV },
    );
    expect(result.spawnError).toMatch(/ENOENT/);
    expect(result.exitCode).toBeUndefined();
  });

  it('names the signal that ended the command', async () => {
    const result = await runShortProcess(sh('kill -KILL $$'), { cwd: tmpdir(), env: ENV });
    expect(result).toMatchObject({ exitCode: undefined, signal: 'SIGKILL', timedOut: false });
  });

  it('on a timeout, kills the whole group, what the command started included', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'sleeper');
    const result = await runShortProcess(sh(`sleep 300 & echo $! > ${pidFile}; wait`), {
      cwd: dir,
      env: ENV,
      // Long enough that the sleeper's pid is written first, even on a loaded machine.
      timeoutMs: 3000,
      killGraceMs: 200,
    });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGTERM');
    const sleeper = await pidIn(pidFile);
    expect(await eventually(() => isGone(sleeper))).toBe(true);
  });

  it('ends what the command left running in its group, which would otherwise hold its output open', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'leftover');
    // The background sleep keeps stdout open: the call could only end when it does, in five minutes.
    const result = await runShortProcess(sh(`sleep 300 & echo $! > ${pidFile}; echo started`), {
      cwd: dir,
      env: ENV,
      killGraceMs: 200,
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'started\n', timedOut: false });
    const leftover = await pidIn(pidFile);
    expect(await eventually(() => isGone(leftover))).toBe(true);
  });

  it('keeps the tail of a stream longer than the limit, and says it was cut', async () => {
    const result = await runShortProcess(sh('seq 1 5000'), { cwd: tmpdir(), env: ENV, maxBufferChars: 100 });
    expect(result.stdout.startsWith('[…truncated…]\n')).toBe(true);
    expect(result.stdout.endsWith('4999\n5000\n')).toBe(true);
    expect(result.stdout.length).toBeLessThanOrEqual(100 + '[…truncated…]\n'.length);
  });

  it('keeps the last characters whole where the kept bytes start inside one', async () => {
    // 3-byte characters: the tail's bytes start mid-character; what is kept is whole characters only.
    const result = await runShortProcess(
      { file: process.execPath, args: ['-e', 'process.stdout.write("€".repeat(1000))'] },
      { cwd: tmpdir(), env: ENV, maxBufferChars: 100 },
    );
    expect(result.stdout).toBe(`[…truncated…]\n${'€'.repeat(100)}`);
  });
});

describe('runShortProcess: where the output is caught', () => {
  const onLinux = process.platform === 'linux';

  it.runIf(onLinux)('in files in memory, unlinked while the command runs, none left after', async () => {
    const dir = await tempDir();
    catchOutputIn(dir);
    onTestFinished(() => catchOutputIn('/dev/shm', OUTPUT_ROOM_BYTES));
    // What the command's stdout and stderr are: a file already deleted, in the directory given.
    const result = await runShortProcess(
      sh('readlink /proc/self/fd/1; readlink /proc/self/fd/2 >&2; ls -A "$DIR"'),
      {
        cwd: tmpdir(),
        env: { ...ENV, DIR: dir },
      },
    );
    const [out, listed] = result.stdout.split('\n');
    expect(out).toMatch(new RegExp(`^${dir}/forge-out-${process.pid}-\\d+-\\w+ \\(deleted\\)$`));
    expect(result.stderr).toMatch(new RegExp(`^${dir}/forge-out-.* \\(deleted\\)\\n$`));
    expect(listed).toBe('');
    expect(await readdir(dir)).toEqual([]);
  });

  it.runIf(onLinux)('stops a command whose output passes what can be kept of it, and says so', async () => {
    const dir = await tempDir();
    catchOutputIn(dir);
    onTestFinished(() => catchOutputIn('/dev/shm', OUTPUT_ROOM_BYTES));
    // `yes` writes for ever: through a file, nothing would end it until the memory it lives in is full.
    const endless = await runShortProcess(
      { file: 'yes', args: [] },
      { cwd: tmpdir(), env: ENV, maxBufferChars: 1000 },
    );
    expect(endless.outputError).toMatch(
      /^its stdout passed 1 MiB, more than the 1,000 characters kept of it/,
    );
    expect(endless.signal).toBe('SIGTERM');
    expect(endless.stdout).toMatch(/^\[…truncated…\]\n(y\n){500}$/);
    expect(await readdir(dir)).toEqual([]);

    // Up to the cap, a long output is kept as a pipe keeps it: its tail, marked, and the exit code. It
    // is written in four parts over ~0.5 s, so the cap is looked at while the command runs.
    const part = Math.floor((outputCapBytes(1000) - 4096) / 4);
    const slowly = `for i in 1 2 3 4; do head -c ${part} /dev/zero | tr '\\0' x >&2; sleep 0.15; done; echo done`;
    const long = await runShortProcess(sh(slowly), { cwd: tmpdir(), env: ENV, maxBufferChars: 1000 });
    expect(long).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    expect(long.outputError).toBeUndefined();
    expect(long.stderr).toBe(`[…truncated…]\n${'x'.repeat(1000)}`);
  });

  it.runIf(onLinux)('in pipes when the place has less room free than a call needs', async () => {
    const dir = await tempDir();
    const fdOne = sh('readlink /proc/self/fd/1');
    catchOutputIn(dir, 1);
    onTestFinished(() => catchOutputIn('/dev/shm', OUTPUT_ROOM_BYTES));
    expect((await runShortProcess(fdOne, { cwd: tmpdir(), env: ENV })).stdout).toMatch(/\(deleted\)$/m);
    // More than any machine has: the room is asked again for this call, and pipes serve.
    catchOutputIn(dir, 2 ** 60);
    expect((await runShortProcess(fdOne, { cwd: tmpdir(), env: ENV })).stdout).toMatch(/^socket:|^pipe:/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('in pipes where no file can be made, with the same results', async () => {
    catchOutputIn(join(await tempDir(), 'no-such-dir'));
    onTestFinished(() => catchOutputIn('/dev/shm', OUTPUT_ROOM_BYTES));
    const result = await runShortProcess(sh('cat; printf err >&2; exit 3'), {
      cwd: tmpdir(),
      env: ENV,
      input: 'in\n',
    });
    expect(result).toMatchObject({ exitCode: 3, stdout: 'in\n', stderr: 'err', spawnError: undefined });
    if (onLinux) {
      const piped = await runShortProcess(sh('readlink /proc/self/fd/1'), { cwd: tmpdir(), env: ENV });
      expect(piped.stdout).toMatch(/^socket:|^pipe:/);
    }
  });
});
