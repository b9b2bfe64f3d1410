// Containment: a child run with `contain` is process 2 of a PID namespace of its own, so everything it
// starts dies with it, even a process in its own session with an empty environment (which the sweep
// cannot find). The suite runs with FORGE_CONTAINMENT=off (vitest.config.ts); these tests turn it on.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTAINMENT_ENV,
  containCommand,
  containmentCandidates,
  containmentSetting,
  containmentStatus,
  refuseUncontainedRun,
} from '../../src/infra/containment.js';
import { EnvironmentError, UsageError } from '../../src/infra/errors.js';
import { runProcess } from '../../src/infra/process.js';
import { hiddenProcessScript, killTagged, taggedProcesses } from '../support/tagged-processes.js';

const saved = process.env[CONTAINMENT_ENV];
let dir = '';
const tags: string[] = [];

beforeAll(async () => {
  process.env[CONTAINMENT_ENV] = 'auto';
  dir = await mkdtemp(join(tmpdir(), 'forge-contain-'));
});
afterAll(async () => {
  if (saved === undefined) delete process.env[CONTAINMENT_ENV];
  else process.env[CONTAINMENT_ENV] = saved;
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  for (const tag of tags.splice(0)) killTagged(tag);
});

function newTag(): string {
  const tag = `forge-hidden-${process.pid}-${Math.random().toString(36).slice(2)}`;
  tags.push(tag);
  return tag;
}

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir() };

describe('containment', () => {
  it('is available on this machine (Linux with util-linux unshare)', async () => {
    const status = await containmentStatus();
    expect(status, status.kind === 'none' ? status.why : '').toMatchObject({ kind: 'pid-namespace' });
  });

  it('ends a process hidden from the sweep (setsid, empty environment) when the child exits', async () => {
    const tag = newTag();
    const result = await runProcess(
      { file: '/bin/sh', args: ['-c', hiddenProcessScript(tag, join(dir, `${tag}.ready`))] },
      { cwd: dir, env, sweep: true, contain: true },
    );
    expect(result).toMatchObject({ exitCode: 0, contained: true, swept: [] });
    expect(taggedProcesses(tag)).toEqual([]);
  });

  it('without it, the same process outlives the child: the sweep cannot find it', async () => {
    process.env[CONTAINMENT_ENV] = 'off';
    try {
      const tag = newTag();
      const result = await runProcess(
        { file: '/bin/sh', args: ['-c', hiddenProcessScript(tag, join(dir, `${tag}.ready`))] },
        { cwd: dir, env, sweep: true, contain: true },
      );
      expect(result).toMatchObject({ exitCode: 0, contained: false, swept: [] });
      // Alive (its setsid parent may still be on its way out, with the same command line).
      expect(taggedProcesses(tag)).not.toEqual([]);
    } finally {
      process.env[CONTAINMENT_ENV] = 'auto';
    }
  });

  it('passes stdin, stdout and the exit code through, and shows the child its own pids', async () => {
    const result = await runProcess(
      { file: 'sh', args: ['-c', 'read line; echo "got $line as $$"; ls /proc | grep -c "^[0-9]"; exit 3'] },
      { cwd: dir, env, input: 'hello\n', sweep: true, contain: true },
    );
    // The child is process 2 (process 1 is the shell that waits for it); its /proc shows the namespace.
    expect(result).toMatchObject({ exitCode: 3, contained: true });
    expect(result.stdout).toMatch(/^got hello as 2\n[2-4]\n$/);
  });

  it('lets the runner’s SIGTERM reach a child that has no handler for it (a timeout ends it at once)', async () => {
    // As process 1 of the namespace the child would ignore SIGTERM and wait out the grace for SIGKILL.
    const result = await runProcess(
      { file: process.execPath, args: ['-e', 'setTimeout(() => {}, 60_000)'] },
      { cwd: dir, env, timeoutMs: 300, killGraceMs: 30_000, sweep: true, contain: true },
    );
    // Its shell reports the death as exit 143; the result says SIGTERM, as it would uncontained.
    expect(result).toMatchObject({ timedOut: true, contained: true, exitCode: undefined, signal: 'SIGTERM' });
  });

  it('reports a child killed by a signal as that signal, contained or not, and an exit code as itself', async () => {
    // A metric that printed its score and was then killed (OOM, a kill -9 from what it ran) did not
    // finish: uncontained that is a signal, and its shell's "exit 137" must not turn it into an exit.
    const killed = { file: 'sh', args: ['-c', 'echo "Score: 9"; kill -9 $$'] };
    for (const setting of ['auto', 'off']) {
      process.env[CONTAINMENT_ENV] = setting;
      try {
        const result = await runProcess(killed, { cwd: dir, env, sweep: true, contain: true });
        expect(result).toMatchObject({
          contained: setting === 'auto',
          exitCode: undefined,
          signal: 'SIGKILL',
          stdout: 'Score: 9\n',
        });
      } finally {
        process.env[CONTAINMENT_ENV] = 'auto';
      }
    }
    const exited = await runProcess(
      { file: 'sh', args: ['-c', 'exit 127'] },
      { cwd: dir, env, sweep: true, contain: true },
    );
    expect(exited).toMatchObject({ contained: true, exitCode: 127, signal: undefined });
  });

  it('leaves a command that is not on PATH as it is, so it fails to start as before', async () => {
    const result = await runProcess(
      { file: 'no-such-agent-binary', args: [] },
      { cwd: dir, env, sweep: true, contain: true },
    );
    expect(result.contained).toBe(false);
    expect(result.spawnError).toMatch(/ENOENT/);
  });

  it('is off with FORGE_CONTAINMENT=off, and says why', async () => {
    expect(await containmentStatus({ [CONTAINMENT_ENV]: 'off' })).toEqual({
      kind: 'none',
      why: 'FORGE_CONTAINMENT=off',
    });
    const wrapped = await containCommand({ file: 'sh', args: ['-c', 'true'] }, env, dir);
    expect(wrapped.contained).toBe(true);
    const args = wrapped.command.args;
    expect(args.slice(-4, -3)).toEqual(['forge-contained']);
    expect(args.at(-3)).toMatch(/^\/.*\/sh$/);
    expect(args.slice(-2)).toEqual(['-c', 'true']);
  });

  it('reads off, auto (also unset or empty) and required; anything else is not a setting', async () => {
    const of = (value: string | undefined) => containmentSetting({ [CONTAINMENT_ENV]: value });
    expect([of(undefined), of(''), of('auto'), of('off'), of('required'), of('on')]).toEqual([
      'auto',
      'auto',
      'auto',
      'off',
      'required',
      undefined,
    ]);
    expect(await containmentStatus({ [CONTAINMENT_ENV]: 'on' })).toEqual({
      kind: 'none',
      why: 'FORGE_CONTAINMENT=on is not a setting (off, auto or required)',
    });
  });

  it('refuses a run when the setting is not one, and when it is required but not available', async () => {
    await expect(refuseUncontainedRun({ [CONTAINMENT_ENV]: 'yes' })).rejects.toThrow(UsageError);
    await expect(refuseUncontainedRun({ [CONTAINMENT_ENV]: 'yes' })).rejects.toThrow(
      'FORGE_CONTAINMENT=yes is not a setting: use off, auto (the default) or required.',
    );
    const unavailable = () =>
      Promise.resolve({ kind: 'none' as const, why: 'util-linux `unshare` was not found' });
    const required = { [CONTAINMENT_ENV]: 'required' };
    await expect(refuseUncontainedRun(required, unavailable)).rejects.toThrow(EnvironmentError);
    await expect(refuseUncontainedRun(required, unavailable)).rejects.toThrow(
      'FORGE_CONTAINMENT=required, and agents cannot get a PID namespace here: util-linux `unshare` was not found.',
    );
    // Available here; and neither auto nor off ever refuses.
    await expect(refuseUncontainedRun(required)).resolves.toBeUndefined();
    await expect(refuseUncontainedRun({}, unavailable)).resolves.toBeUndefined();
    await expect(refuseUncontainedRun({ [CONTAINMENT_ENV]: 'off' }, unavailable)).resolves.toBeUndefined();
  });

  it('tries the best flags first: no user namespace as root, IPC and a /proc of their own before none', () => {
    const pid = ['--pid', '--fork', '--kill-child'];
    const ipc = ['--ipc'];
    const proc = ['--mount', '--mount-proc'];
    const sets = (user: string[]) => [
      [...user, ...pid, ...ipc, ...proc],
      [...user, ...pid, ...ipc],
      [...user, ...pid, ...proc],
      [...user, ...pid],
    ];
    const mapped = [`--map-user=${process.getuid?.() ?? 0}`, `--map-group=${process.getgid?.() ?? 0}`];
    const asUser = [...sets(['--user', '--map-current-user']), ...sets(['--user', ...mapped])];
    expect(containmentCandidates(false)).toEqual(asUser);
    expect(containmentCandidates(true)).toEqual([...sets([]), ...asUser]);
  });

  it('gives a contained command System V IPC of its own: a segment it makes goes with it', async () => {
    const segments = async () =>
      new Set(
        (await runProcess({ file: 'ipcs', args: ['-m'] }, { cwd: dir, env })).stdout
          .split('\n')
          .map((line) => line.trim().split(/\s+/)[1] ?? '')
          .filter((id) => /^\d+$/.test(id)),
      );
    const before = await segments();
    const made = await runProcess(
      { file: '/bin/sh', args: ['-c', 'ipcmk -M 4096 -p 0600'] },
      { cwd: dir, env, contain: true },
    );
    const left = [...(await segments())].filter((id) => !before.has(id));
    for (const id of left) await runProcess({ file: 'ipcrm', args: ['-m', id] }, { cwd: dir, env });
    expect(made, made.stderr).toMatchObject({ exitCode: 0, contained: true });
    expect(made.stdout).toContain('Shared memory id');
    expect(left).toEqual([]);
  });
});
