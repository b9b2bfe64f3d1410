// The runner's lock file: a live holder is refused, a gone one taken over, and a pid that now belongs
// to a later, unrelated process (a reboot, a container) is told apart from the runner that wrote it.
import { execa } from 'execa';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import {
  mkdir,
  mkdtemp,
  open,
  readdir,
  realpath,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { claimHost, hostClaimName } from '../../src/infra/host-claim.js';
import { pidNamespace } from '../../src/infra/pid.js';
import { createFileLock, lockRefusalHint, readLockFile, type LockRecord } from '../../src/infra/lock-file.js';
import { isProcessAlive, processStartTicks } from '../../src/infra/pid.js';
import { findMarkedProcesses, RUN_MARK_VAR, sweepMarkedProcesses } from '../../src/infra/process.js';
import { eventually, isGone } from '../support/fake-agents/harness.js';
import { zombiePid } from '../support/pids.js';

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

  it('takes over a lock whose holder has ended but was never reaped (a zombie)', async () => {
    const zombie = await zombiePid();
    const start = processStartTicks(zombie);
    expect(start).toBeTypeOf('number');
    expect(isProcessAlive(zombie), 'kill(pid, 0) still answers for a zombie').toBe(true);

    const path = await lockPath();
    await writeFile(path, JSON.stringify(record(zombie, { pid_start: start! })));
    const taken = await createFileLock({ path, host: hostname() }).acquire(record(process.pid));
    expect(taken).toMatchObject({ ok: true, tookOverFrom: { pid: zombie } });
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

describe('lock file: what a takeover signals, from a lock any agent can write', () => {
  /** A live process whose environment carries `mark` as an agent of that run would. */
  async function marked(mark: string | undefined): Promise<number> {
    const { [RUN_MARK_VAR]: _inherited, ...rest } = process.env;
    const env = mark === undefined ? rest : { ...rest, [RUN_MARK_VAR]: mark };
    const child = execa(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      reject: false,
      env,
      extendEnv: false,
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    const pid = child.pid!;
    for (let i = 0; i < 100 && processStartTicks(pid) === undefined; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return pid;
  }

  it.runIf(onLinux)(
    'signals the agent a dead holder left only when its run started it (the run’s mark), never pid 1',
    async () => {
      const dead = 999_999_999;
      const runId = `run-${dead}`;
      const cases: [string, number, number | undefined][] = [];
      const agent = await marked(runId);
      cases.push(['the holder’s own agent', agent, processStartTicks(agent)]);
      const user = await marked(undefined);
      // Named with its real start: an agent can read /proc/<pid>/stat as well as the runner.
      cases.push(['a process of the user', user, processStartTicks(user)]);
      const other = await marked('another-run');
      cases.push(['an agent of another run', other, processStartTicks(other)]);
      cases.push(['pid 1 (kill(-1) ends every process the user may signal)', 1, undefined]);
      cases.push(['this process', process.pid, processStartTicks(process.pid)]);
      const killed: string[] = [];
      for (const [name, pid, start] of cases) {
        const path = await lockPath();
        await writeFile(
          path,
          JSON.stringify(
            record(dead, { agent_pid: pid, ...(start === undefined ? {} : { agent_pid_start: start }) }),
          ),
        );
        const lock = createFileLock({ path, host: hostname(), killGroup: () => killed.push(name) });
        expect((await lock.acquire(record(process.pid))).ok, name).toBe(true);
      }
      expect(killed).toEqual(['the holder’s own agent']);
    },
  );
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

describe('lock file: a new agent’s pid', () => {
  it('is on disk when update(…, { now }) returns, and no write queued before it puts an older record back', async () => {
    const path = await lockPath();
    const lock = createFileLock({ path, host: hostname() });
    expect(await lock.acquire(record(process.pid))).toMatchObject({ ok: true });
    // The bead's start is queued (not awaited, as the runner does); the agent is spawned right after.
    const started = lock.update({ bead: 'bd-1', bead_started_at: new Date().toISOString() });
    const spawned = lock.update({ agent_pid: process.pid }, { now: true });
    // Read synchronously: nothing queued has run yet, and the pid is already there.
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ bead: 'bd-1', agent_pid: process.pid });
    // The write queued first lands after the one made now: it carries the newest record.
    await started;
    expect(await readLockFile(path)).toMatchObject({ bead: 'bd-1', agent_pid: process.pid });
    await spawned;
    expect((await readdir(dirname(path))).sort()).toEqual(['ralph-loop.lock']);
    await lock.release();
  });
});

describe('lock file: a new agent’s pid, while a write is under way', () => {
  it('is not put back by a queued write that began before it', async () => {
    const path = await lockPath();
    const lock = createFileLock({ path, host: hostname() });
    expect(await lock.acquire(record(process.pid))).toMatchObject({ ok: true });
    const started = lock.update({ bead: 'bd-1' });
    // That write is under way (its record taken, its file being written) when the agent is spawned.
    await new Promise((resolve) => setImmediate(resolve));
    const spawned = lock.update({ agent_pid: process.pid }, { now: true });
    await started;
    expect(await readLockFile(path)).toMatchObject({ bead: 'bd-1', agent_pid: process.pid });
    await spawned;
    expect(await readLockFile(path)).toMatchObject({ bead: 'bd-1', agent_pid: process.pid });
    expect((await readdir(dirname(path))).sort()).toEqual(['ralph-loop.lock']);
    await lock.release();
  });
});

describe('lock file: progress written soon', () => {
  const soonLock = async (soonQuietMs: number, soonMaxMs: number) => {
    const path = await lockPath();
    const lock = createFileLock({ path, host: hostname(), soonQuietMs, soonMaxMs });
    expect(await lock.acquire(record(process.pid))).toMatchObject({ ok: true });
    return { path, lock };
  };
  const onDisk = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as LockRecord;

  it('is recorded at once and written later, once, with every update made meanwhile', async () => {
    const { path, lock } = await soonLock(150, 1000);
    const started = lock.update({ bead: 'bd-1' }, { soon: true });
    const since = lock.update({ bead_started_at: '2026-11-30T00:00:00.000Z' }, { soon: true });
    // Not yet: a queued write would have landed by now, this one waits for 150 ms of quiet.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(onDisk(path).bead).toBeUndefined();
    await started;
    // The first update's write carried the second: one write for both.
    expect(onDisk(path)).toMatchObject({ bead: 'bd-1', bead_started_at: '2026-11-30T00:00:00.000Z' });
    await since;
    expect((await readdir(dirname(path))).sort()).toEqual(['ralph-loop.lock']);
    await lock.release();
  });

  it('is written within its longest wait while updates keep coming', async () => {
    const { path, lock } = await soonLock(100, 300);
    let made = 0;
    const first = lock.update({ bead: 'bd-0' }, { soon: true });
    const more = (async () => {
      for (made = 1; made <= 15; made += 1) {
        await new Promise((resolve) => setTimeout(resolve, 40));
        void lock.update({ bead: `bd-${made}` }, { soon: true });
      }
    })();
    await first;
    // Updates 40 ms apart never leave the 100 ms of quiet; the 300 ms bound wrote the lock anyway.
    expect(made).toBeLessThan(15);
    expect(onDisk(path).bead).toMatch(/^bd-\d+$/);
    await more;
    await lock.release();
  });

  it('is carried by a `now` write, after which it writes nothing', async () => {
    const { path, lock } = await soonLock(50, 1000);
    const started = lock.update({ bead: 'bd-1' }, { soon: true });
    await lock.update({ agent_pid: process.pid }, { now: true });
    expect(onDisk(path)).toMatchObject({ bead: 'bd-1', agent_pid: process.pid });
    const written = (await stat(path)).ino;
    await started;
    // Not replaced again: the record the `now` write put there was already the newest.
    expect((await stat(path)).ino).toBe(written);
    await lock.release();
  });

  it('is dropped by a release, which settles it at once and removes the lock', async () => {
    const { path, lock } = await soonLock(60_000, 60_000);
    const started = lock.update({ bead: 'bd-1' }, { soon: true });
    await lock.release();
    // Settled by the release, not a minute later by its timer.
    await started;
    expect(await readdir(dirname(path))).toEqual([]);
  });

  it('reports a write that failed to the update that asked for it', async () => {
    const { path, lock } = await soonLock(20, 100);
    await rm(dirname(path), { recursive: true, force: true });
    await writeFile(dirname(path), 'not a directory');
    await expect(lock.update({ bead: 'bd-1' }, { soon: true })).rejects.toThrow();
    await rm(dirname(path));
  });
});

describe('lock file: who may take it', () => {
  const dead = () => false;

  it('flushes the lock it takes, and replaces it whole but unflushed on each progress update', async () => {
    const path = await lockPath();
    // FileHandle is not exported: its prototype is reached through a handle.
    const probe = await open(join(dirname(path), 'probe'), 'w');
    const handleProto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const sync = vi.spyOn(handleProto, 'sync');
    onTestFinished(() => sync.mockRestore());
    const lock = createFileLock({ path, host: hostname() });
    expect(await lock.acquire(record(process.pid, { run_id: 'a' }))).toEqual({ ok: true });
    expect(sync).toHaveBeenCalledTimes(1);
    await lock.update({ bead: 'bd-1', bead_started_at: new Date().toISOString() });
    await lock.update({ agent_pid: process.pid });
    expect(sync).toHaveBeenCalledTimes(1);
    expect(await readLockFile(path)).toMatchObject({ run_id: 'a', bead: 'bd-1', agent_pid: process.pid });
    // Replaced by rename: no temp file is left beside it.
    expect((await readdir(dirname(path))).sort()).toEqual(['probe', 'ralph-loop.lock']);
  });

  it('acquires a free lock, writes the record, and refuses a second run while the first holds it', async () => {
    const path = await lockPath();
    const first = createFileLock({ path, host: hostname() });
    expect(await first.acquire(record(process.pid, { run_id: 'a' }))).toEqual({ ok: true });
    expect(await readLockFile(path)).toMatchObject({ pid: process.pid, run_id: 'a', epic: 'bd-e' });
    const second = await createFileLock({ path, host: hostname() }).acquire(
      record(process.pid, { run_id: 'b' }),
    );
    expect(second).toMatchObject({ ok: false, holder: { run_id: 'a' } });
    expect(await readLockFile(path)).toMatchObject({ run_id: 'a' });
  });

  it('takes over a lock whose holder on this host is dead, and says whose it was', async () => {
    const path = await lockPath();
    await writeFile(path, JSON.stringify(record(4_000_001, { run_id: 'crashed' })));
    const lock = createFileLock({ path, host: hostname(), isAlive: dead, killGroup: () => undefined });
    const taken = await lock.acquire(record(process.pid, { run_id: 'next' }));
    expect(taken).toMatchObject({ ok: true, tookOverFrom: { pid: 4_000_001, run_id: 'crashed' } });
    expect(await readLockFile(path)).toMatchObject({ run_id: 'next' });
  });

  it('ends what the dead holder’s run left by its mark, though no agent pid was recorded', async () => {
    const path = await lockPath();
    // A runner killed between spawning its agent and recording the pid: the lock names no agent.
    await writeFile(path, JSON.stringify(record(4_000_001, { run_id: 'crashed-run', bead: 'bd-1' })));
    const leftover = spawn('sleep', ['300'], {
      env: { PATH: process.env.PATH, [RUN_MARK_VAR]: 'crashed-run:attempt-1' },
      detached: true,
      stdio: 'ignore',
    });
    leftover.unref();
    onTestFinished(() => void leftover.kill('SIGKILL'));
    // Once it runs `sleep`: until its exec the child still has this process's environment, without the
    // mark (a real leftover has long since started when a rerun takes over).
    await vi.waitFor(
      async () => {
        const marked = await findMarkedProcesses('crashed-run');
        if (!marked.some((found) => found.pid === leftover.pid)) throw new Error('not marked yet');
      },
      { timeout: 10_000, interval: 20 },
    );
    const bystander = await stranger();
    const ended: string[] = [];
    const lock = createFileLock({
      path,
      host: hostname(),
      isAlive: (pid) => pid !== 4_000_001 && isProcessAlive(pid),
      endRun: async (runId) => {
        ended.push(runId);
        await sweepMarkedProcesses(runId, { graceMs: 0 });
      },
    });
    expect(await lock.acquire(record(process.pid, { run_id: 'next' }))).toMatchObject({ ok: true });
    expect(ended).toEqual(['crashed-run']);
    // SIGKILL was sent (grace 0); the kernel ends the process a moment later, later still on a busy
    // machine: seen alive right after it once in a full suite.
    expect(await eventually(() => isGone(leftover.pid!))).toBe(true);
    expect(await isGone(bystander)).toBe(false);
  });

  it('asks nothing to be ended when the holder lives, or holds the lock on another host', async () => {
    const path = await lockPath();
    await writeFile(path, JSON.stringify(record(process.pid, { run_id: 'live' })));
    const ended: string[] = [];
    const endRun = async (runId: string): Promise<void> => void ended.push(runId);
    const lock = createFileLock({ path, host: hostname(), endRun });
    expect(await lock.acquire(record(process.pid, { run_id: 'second' }))).toMatchObject({ ok: false });
    await writeFile(
      path,
      JSON.stringify(record(4_000_001, { host: 'other-host.example', run_id: 'theirs' })),
    );
    const elsewhere = createFileLock({ path, host: hostname(), isAlive: dead, endRun });
    expect(await elsewhere.acquire(record(process.pid, { run_id: 'third' }))).toMatchObject({ ok: false });
    expect(ended).toEqual([]);
  });

  it('never takes over a lock held on another host, however old and whatever its pid', async () => {
    const path = await lockPath();
    const foreign = record(4_000_001, { host: 'other-host.example', run_id: 'theirs' });
    await writeFile(path, JSON.stringify(foreign));
    const old = new Date(Date.now() - 7 * 24 * 3_600_000);
    await utimes(path, old, old);
    const lock = createFileLock({
      path,
      host: hostname(),
      isAlive: dead,
      now: () => Date.now() + 86_400_000,
    });
    expect(await lock.acquire(record(process.pid))).toEqual({ ok: false, holder: foreign });
    expect(await readLockFile(path)).toEqual(foreign);
  });

  it('a corrupt lock file is left alone while young, taken over once old', async () => {
    const path = await lockPath();
    await writeFile(path, '{"pid": 12, "host": "h", "run');
    const young = createFileLock({ path, host: hostname() });
    await expect(young.acquire(record(process.pid))).rejects.toThrow(/cannot be read/);
    const later = createFileLock({ path, host: hostname(), now: () => Date.now() + 60_000 });
    expect(await later.acquire(record(process.pid, { run_id: 'fresh' }))).toEqual({ ok: true });
    expect(await readLockFile(path)).toMatchObject({ run_id: 'fresh' });
  });

  it('a corrupt lock file dated in the future is taken over, not refused until that date', async () => {
    const path = await lockPath();
    await writeFile(path, '{"pid": 12, "host": "h", "run');
    const future = new Date(Date.now() + 10 * 365 * 24 * 3_600_000);
    await utimes(path, future, future);
    const lock = createFileLock({ path, host: hostname() });
    expect(await lock.acquire(record(process.pid, { run_id: 'fresh' }))).toEqual({ ok: true });
    expect(await readLockFile(path)).toMatchObject({ run_id: 'fresh' });
  });

  it('JSON that is not a lock record reads as no record, and is judged by age like a corrupt file', async () => {
    const path = await lockPath();
    await writeFile(path, JSON.stringify({ pid: '12', host: hostname(), run_id: 'r', epic: 'e' }));
    expect(await readLockFile(path)).toBeUndefined();
    await expect(createFileLock({ path, host: hostname() }).acquire(record(process.pid))).rejects.toThrow(
      /cannot be read/,
    );
  });

  it('refuses a directory, a FIFO or a link to a directory at its path, young or old, and leaves it as it was', async () => {
    const path = await lockPath();
    const old = new Date(Date.now() - 3_600_000);
    const refused = async (kind: RegExp) => {
      for (const now of [Date.now, () => Date.now() + 3_600_000]) {
        const lock = createFileLock({ path, host: hostname(), now });
        const error = await lock.acquire(record(process.pid)).then(
          () => undefined,
          (e: unknown) => e as { message: string; hint?: string; exitCode?: number },
        );
        expect(error?.message).toMatch(kind);
        expect(error?.hint).toMatch(/Nothing was changed/);
        expect(error?.exitCode).toBe(3);
      }
      expect(await readdir(dirname(path))).toEqual([basename(path)]);
    };
    // A folder someone made there, with a file in it: neither moved aside nor removed.
    await mkdir(path);
    await writeFile(join(path, 'notes.md'), 'mine\n');
    await utimes(path, old, old);
    await refused(/is a directory, not a lock file/);
    expect(readFileSync(join(path, 'notes.md'), 'utf8')).toBe('mine\n');
    await rm(path, { recursive: true });

    // A link to a folder elsewhere.
    const elsewhere = await mkdtemp(join(tmpdir(), 'forge-lock-target-'));
    onTestFinished(() => rm(elsewhere, { recursive: true, force: true }));
    await symlink(elsewhere, path);
    await refused(/is a directory, not a lock file/);
    await rm(path);

    // A named pipe: never opened to be read, which would wait for a writer.
    await execa('mkfifo', [path]);
    await refused(/is a FIFO \(named pipe\), not a lock file/);
  });

  it('releases only its own lock: one taken over meanwhile by another run stays', async () => {
    const path = await lockPath();
    const mine = createFileLock({ path, host: hostname() });
    await mine.acquire(record(process.pid, { run_id: 'mine' }));
    const theirs = record(process.pid, { run_id: 'theirs' });
    await writeFile(path, JSON.stringify(theirs));
    await mine.release();
    expect(await readLockFile(path)).toEqual(theirs);

    const again = createFileLock({ path: await lockPath(), host: hostname() });
    await again.release(); // never acquired: nothing to remove, no error
    const own = createFileLock({ path, host: hostname(), isAlive: dead, killGroup: () => undefined });
    expect(await own.acquire(record(process.pid, { run_id: 'own' }))).toMatchObject({ ok: true });
    await own.release();
    expect(await readLockFile(path)).toBeUndefined();
  });
});

describe('what a refused run is told about the lock', () => {
  const wait = 'Wait for it, or stop it with: ralph-loop stop bd-e';

  it.runIf(onLinux)(
    'a live pid that runs something else: an agent may have written it; delete the file',
    async () => {
      const path = await lockPath();
      const pid = await stranger();
      const hint = lockRefusalHint(path, record(pid), hostname(), wait);
      expect(hint).toBe(
        `pid ${pid} runs ${process.execPath}, not ralph-loop: ${path} was written by something else (an agent can write it). If no ralph-loop holds it, delete that file and run again.`,
      );
    },
  );

  it.runIf(onLinux)('a live runner: wait or stop it, and where its lock is', async () => {
    const path = await lockPath();
    // As a runner started through its npm shim shows in the process table.
    const child = spawn('sleep', ['300'], { argv0: '/usr/local/bin/ralph-loop', stdio: 'ignore' });
    onTestFinished(() => void child.kill('SIGKILL'));
    expect(
      await eventually(async () => readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').includes('ralph-loop')),
    ).toBe(true);
    expect(lockRefusalHint(path, record(child.pid!), hostname(), wait)).toBe(`${wait}. Its lock: ${path}`);
  });

  it.runIf(onLinux)('a kernel thread (no command line) is no runner either', async () => {
    const path = await lockPath();
    // Pid 2 is kthreadd where the host's pids are seen; in a PID namespace of its own it is whatever
    // started second, a program with a command line.
    const program = readFileSync('/proc/2/cmdline', 'utf8').split('\0')[0];
    const runs = program === '' ? 'is a kernel thread' : `runs ${program}`;
    expect(lockRefusalHint(path, record(2), hostname(), wait)).toBe(
      `pid 2 ${runs}, not ralph-loop: ${path} was written by something else (an agent can write it). If no ralph-loop holds it, delete that file and run again.`,
    );
  });

  it('a runner on another host cannot be checked from here: delete the file if none is live there', async () => {
    const path = await lockPath();
    const hint = lockRefusalHint(path, record(4242, { host: 'elsewhere' }), hostname(), wait);
    expect(hint).toBe(
      `${wait}. It runs on elsewhere, which cannot be checked from here: if no runner is live there, delete ${path} and run again.`,
    );
  });
});

describe.runIf(onLinux)('lock file: the claim on this host', () => {
  it('refuses a second holder while the first lives, with the file deleted, and says who holds it', async () => {
    const path = await lockPath();
    const first = createFileLock({ path, host: hostname(), claimHost });
    expect(await first.acquire(record(process.pid, { run_id: 'first' }))).toEqual({ ok: true });
    await first.update({ bead: 'bd-1' });
    await rm(path);

    const second = createFileLock({ path, host: hostname(), claimHost });
    const refused = await second.acquire(record(process.pid, { run_id: 'second' }));
    expect(refused).toMatchObject({ ok: false, holder: { run_id: 'first', bead: 'bd-1' } });
    // The refused one wrote nothing: the first's next update puts its own record back.
    expect(existsSync(path)).toBe(false);
    await first.update({ bead: 'bd-2' });
    expect(await readLockFile(path)).toMatchObject({ run_id: 'first', bead: 'bd-2' });

    await first.release();
    expect((await second.acquire(record(process.pid, { run_id: 'second' }))).ok).toBe(true);
    await second.release();
  });

  it('a holder from another PID namespace here: refused while its claim lives, taken over once it is gone', async () => {
    // A ralph-loop an agent ran in its own PID namespace: its pid (1 there) names init here.
    const path = await lockPath();
    const nested = { ...record(1, { run_id: 'nested' }), pid_ns: 'pid:[4026599999]' };
    const real = join(await realpath(dirname(path)), basename(path));
    const live = await claimHost(real, () => `${JSON.stringify(nested)}\n`);
    expect(live.kind).toBe('held');
    await writeFile(path, JSON.stringify(nested));
    const lock = createFileLock({ path, host: hostname(), claimHost, endRun: async () => [] });
    expect(await lock.acquire(record(process.pid, { run_id: 'next' }))).toMatchObject({
      ok: false,
      holder: { run_id: 'nested' },
    });
    if (live.kind === 'held') await live.claim.release();
    const taken = await lock.acquire(record(process.pid, { run_id: 'next' }));
    expect(taken).toMatchObject({ ok: true, tookOverFrom: { run_id: 'nested', pid_ns: 'pid:[4026599999]' } });
    // The taker records its own namespace, for whoever reads the lock from another.
    expect(await readLockFile(path)).toMatchObject({ run_id: 'next', pid_ns: pidNamespace() });
    await lock.release();
  });

  it('names the same lock by its real path, through a symlinked directory', async () => {
    const path = await lockPath();
    const linked = join(dirname(dirname(path)), `${basename(dirname(path))}-link`);
    await symlink(dirname(path), linked);
    onTestFinished(() => rm(linked, { force: true }));
    const first = createFileLock({ path, host: hostname(), claimHost });
    expect((await first.acquire(record(process.pid))).ok).toBe(true);
    await rm(path);
    const through = createFileLock({ path: join(linked, basename(path)), host: hostname(), claimHost });
    expect((await through.acquire(record(process.pid, { run_id: 'b' }))).ok).toBe(false);
    await first.release();
  });

  it('a holder that answers no lock record is refused with the socket named, not taken as free', async () => {
    const path = await lockPath();
    const squatter = await claimHost(join(await realpath(dirname(path)), basename(path)), () => 'not json');
    expect(squatter.kind).toBe('held');
    onTestFinished(() => (squatter.kind === 'held' ? squatter.claim.release() : undefined));
    const lock = createFileLock({ path, host: hostname(), claimHost });
    await expect(lock.acquire(record(process.pid))).rejects.toThrow(/does not say who it is/);
    expect(existsSync(path)).toBe(false);
  });

  it('a holder that ends (killed) frees its claim with it', async () => {
    const path = await lockPath();
    const real = join(await realpath(dirname(path)), basename(path));
    const child = spawn(
      process.execPath,
      [
        '-e',
        `require('net').createServer(s => s.end('x')).listen('\\0' + ${JSON.stringify(hostClaimName(real))}, () => console.log('up'))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    onTestFinished(() => void child.kill('SIGKILL'));
    await new Promise((resolve) => child.stdout.once('data', resolve));
    const lock = createFileLock({ path, host: hostname(), claimHost });
    await expect(lock.acquire(record(process.pid))).rejects.toThrow(/does not say who it is/);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect((await lock.acquire(record(process.pid))).ok).toBe(true);
    await lock.release();
  });
});
