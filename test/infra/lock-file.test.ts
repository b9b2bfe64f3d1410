// The runner's lock file: a live holder is refused, a gone one taken over, and a pid that now belongs
// to a later, unrelated process (a reboot, a container) is told apart from the runner that wrote it.
import { execa } from 'execa';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createFileLock, readLockFile, type LockRecord } from '../../src/infra/lock-file.js';
import { processStartTicks } from '../../src/infra/pid.js';

const onLinux = process.platform === 'linux';

async function lockPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-lock-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'ralph-loop.lock');
}

/** A live process that is not a runner, killed when the test ends. */
async function stranger(): Promise<number> {
  const child = execa(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { reject: false });
  onTestFinished(() => void child.kill('SIGKILL'));
  const pid = child.pid!;
  for (let i = 0; i < 100 && processStartTicks(pid) === undefined; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return pid;
}

const record = (pid: number, extra: Partial<LockRecord> = {}): LockRecord => ({
  pid,
  host: hostname(),
  started_at: new Date().toISOString(),
  epic: 'bd-e',
  run_id: `run-${pid}`,
  ...extra,
});

describe.runIf(onLinux)('lock file: whose pid is it', () => {
  it('records the holder’s process start, and refuses a second runner while that process lives', async () => {
    const path = await lockPath();
    const first = createFileLock({ path, host: hostname() });
    expect(await first.acquire(record(process.pid))).toEqual({ ok: true });
    expect((await readLockFile(path))?.pid_start).toBe(processStartTicks(process.pid));
    const second = await createFileLock({ path, host: hostname() }).acquire(
      record(process.pid, { run_id: 'b' }),
    );
    expect(second.ok).toBe(false);
  });

  it('takes over a lock whose pid now belongs to a process with another start time', async () => {
    const path = await lockPath();
    const pid = await stranger();
    await writeFile(path, JSON.stringify(record(pid, { pid_start: processStartTicks(pid)! - 1 })));
    const taken = await createFileLock({ path, host: hostname() }).acquire(record(process.pid));
    expect(taken).toMatchObject({ ok: true, tookOverFrom: { pid } });
  });

  it('for an older lock with no start recorded, a process younger than the lock is not its holder', async () => {
    const path = await lockPath();
    const pid = await stranger();
    await writeFile(path, JSON.stringify(record(pid)));
    // Written now, after the process started: it may be the holder, so the lock holds.
    expect((await createFileLock({ path, host: hostname() }).acquire(record(process.pid))).ok).toBe(false);
    // Written an hour ago: a process that started since cannot have written it.
    const earlier = new Date(Date.now() - 3_600_000);
    await utimes(path, earlier, earlier);
    expect((await createFileLock({ path, host: hostname() }).acquire(record(process.pid))).ok).toBe(true);
  });

  it('never kills an agent pid that now belongs to someone else when it takes over', async () => {
    const path = await lockPath();
    const pid = await stranger();
    const killed: number[] = [];
    await writeFile(
      path,
      JSON.stringify(record(999_999_999, { agent_pid: pid, agent_pid_start: processStartTicks(pid)! - 1 })),
    );
    const lock = createFileLock({ path, host: hostname(), killGroup: (group) => killed.push(group) });
    expect((await lock.acquire(record(process.pid))).ok).toBe(true);
    expect(killed).toEqual([]);
  });
});

describe('lock file: writes after a failed one', () => {
  it('a failed write does not make the later ones fail', async () => {
    const path = await lockPath();
    const lock = createFileLock({ path, host: hostname() });
    expect(await lock.acquire(record(process.pid))).toMatchObject({ ok: true });
    // A file where the lock's directory was: the write cannot land.
    await rm(dirname(path), { recursive: true, force: true });
    await writeFile(dirname(path), 'not a directory');
    await expect(lock.update({ bead: 'bd-1' })).rejects.toThrow();
    await rm(dirname(path));
    await mkdir(dirname(path));
    await lock.update({ bead: 'bd-2' });
    expect(await readLockFile(path)).toMatchObject({ bead: 'bd-2', run_id: `run-${process.pid}` });
    await lock.release();
    expect(await readLockFile(path)).toBeUndefined();
  });
});
