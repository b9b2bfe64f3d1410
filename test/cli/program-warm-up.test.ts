// The build's warm-up run (src/cli/program-warm-up.ts), with the program's two entry points faked: the
// commands it runs, and that it leaves this process as it found it (env, exit code, no temp directory).
// That the real program's run warms its cache is in test/build/build-script.test.ts.
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliDeps } from '../../src/cli/deps.js';
import type { Program } from '../../src/cli/program.js';
import { warmUpProgram } from '../../src/cli/program-warm-up.js';

interface Call {
  argv: string[];
  cwd: string | undefined;
  home: string | undefined;
  tmpdir: string | undefined;
}

/** Entry points that record each call and answer like the commands they stand for. */
function fakeProgram(answer: (argv: string[], deps: Partial<CliDeps>) => Promise<void> | void = () => {}) {
  const calls: Call[] = [];
  const record = async (argv: string[], deps: Partial<CliDeps> = {}) => {
    calls.push({ argv, cwd: deps.cwd, home: process.env.HOME, tmpdir: process.env.TMPDIR });
    if (argv.includes('create')) deps.stdout?.write(argv.includes('epic') ? 'bd-w1\n' : 'bd-w1.1\n');
    await answer(argv, deps);
  };
  const program = { runForgePack: record, runRalphLoop: record } as unknown as Program;
  return { program, calls };
}

const saved = { ...process.env };
afterEach(() => {
  process.exitCode = undefined;
  expect(process.env).toEqual(saved);
});

describe('warmUpProgram', () => {
  it('makes an epic of two beads on the embedded store in a directory of its own, then runs it', async () => {
    const { program, calls } = fakeProgram();
    const outcome = await warmUpProgram(program);
    expect(outcome).toEqual({ ok: true, detail: 'ran bd-w1 (2 beads) on the embedded store' });
    expect(calls.map((call) => call.argv.slice(2).join(' '))).toEqual([
      '--store embedded beads init',
      '--store embedded beads create Warm-up -t epic',
      '--store embedded beads create First --parent bd-w1 -d Nothing to do.',
      '--store embedded beads create Second --parent bd-w1 -d Nothing to do.',
      `--store embedded bd-w1 --agent '${process.execPath}' -e 0 --max-attempts 1`,
    ]);
    // Every command in the same repository, with HOME and TMPDIR in the directory: no user config,
    // hook or agent home is read, and the directory is gone after.
    const [first] = calls;
    for (const call of calls) {
      expect(call.cwd).toBe(first?.cwd);
      expect(call.home?.startsWith(`${call.tmpdir ?? '?'}/`)).toBe(true);
      expect(call.cwd?.startsWith(`${call.tmpdir ?? '?'}/`)).toBe(true);
    }
    expect(first?.home).not.toBe(saved.HOME);
    expect(existsSync(first?.tmpdir ?? '/')).toBe(false);
  });

  it('says which command failed and what it printed, and leaves the exit code as it was', async () => {
    process.exitCode = 0;
    const { program, calls } = fakeProgram((argv, deps) => {
      if (argv.includes('--parent')) {
        deps.stderr?.write('forge-pack: bd-w1 is not an epic\n');
        process.exitCode = 4;
      }
    });
    const outcome = await warmUpProgram(program);
    expect(outcome).toEqual({
      ok: false,
      detail: 'create a bead exited 4: forge-pack: bd-w1 is not an epic',
    });
    expect(calls).toHaveLength(3);
    expect(process.exitCode).toBe(0);
  });

  it('never throws: a command that throws is a failed warm-up', async () => {
    const { program } = fakeProgram((argv) => {
      if (argv.includes('init')) throw new Error('disk full');
    });
    expect(await warmUpProgram(program)).toEqual({ ok: false, detail: 'disk full' });
  });

  it('is a failed warm-up, not a failed build, where no temp directory can be made', async () => {
    const { program, calls } = fakeProgram();
    process.env.TMPDIR = '/proc/forge-no-such-dir';
    try {
      const outcome = await warmUpProgram(program);
      expect(outcome.ok).toBe(false);
      expect(outcome.detail).toMatch(/^no directory to run in: ENOENT/);
      expect(calls).toEqual([]);
    } finally {
      if (saved.TMPDIR === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved.TMPDIR;
    }
  });

  it('stops waiting for a run that does not end', async () => {
    const { program } = fakeProgram((argv) =>
      argv.includes('--agent') ? new Promise<void>(() => undefined) : undefined,
    );
    expect(await warmUpProgram(program, { timeoutMs: 50 })).toEqual({
      ok: false,
      detail: 'stopped after 0.05 s',
    });
  });
});
