// Commands loaded on demand, as a user runs the built CLIs: a command's module loads only when that
// command runs (or its help is asked for), while each program's --help still lists every command.
import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createDeps } from '../../src/cli/deps.js';
import { createForgePackProgram } from '../../src/cli/forge-pack.js';
import { loadAllCommands } from '../../src/cli/lazy-command.js';
import { runProgram } from '../../src/cli/main.js';
import { createRalphLoopProgram } from '../../src/cli/ralph-loop.js';
import { assertBuilt, BIN } from '../support/cli.js';
import { moduleTrace, packagesOf } from '../support/module-trace.js';

const COMMAND_MODULES = [
  'init-command.js',
  'doctor-command.js',
  'loop-command.js',
  'stamp-command.js',
  'validate-command.js',
  'beads-commands.js',
  'skills-command.js',
  'status-command.js',
  'resume-command.js',
  'once-command.js',
  'stop-command.js',
  'logs-command.js',
  'report-command.js',
  'dashboard-command.js',
];

/** Runs a built CLI with a resolve hook that records every module it loads; returns output and modules. */
async function traced(
  program: keyof typeof BIN,
  args: string[],
): Promise<{ exitCode: number; stdout: string; stderr: string; loaded: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-lazy-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const trace = await moduleTrace(dir);
  const child = await execa(process.execPath, [...trace.nodeArgs, BIN[program], ...args], {
    cwd: dir,
    env: { NO_COLOR: '1' },
    reject: false,
    stdin: 'ignore',
  });
  const urls = await trace.loaded();
  const loaded = COMMAND_MODULES.filter((name) => urls.some((url) => url.endsWith(`/dist/cli/${name}`)));
  // Packages too, by name: zod (the config and import schemas) is the heaviest thing a command loads.
  // Sorted: modules imported side by side resolve in no fixed order (CI once saw picocolors first).
  loaded.push(...packagesOf(urls));
  return {
    exitCode: child.exitCode ?? -1,
    stdout: String(child.stdout),
    stderr: String(child.stderr),
    loaded,
  };
}

describe('the built CLIs load a command module only for that command', () => {
  beforeAll(assertBuilt);

  it('--version and --help load none of them (nor zod), and --help still lists each with its description', async () => {
    for (const program of ['forge-pack', 'ralph-loop'] as const) {
      const version = await traced(program, ['--version']);
      expect(version.exitCode, version.stderr).toBe(0);
      expect(version.loaded).toEqual(['commander', 'picocolors']);
    }
    const forge = await traced('forge-pack', ['--help']);
    expect(forge.exitCode, forge.stderr).toBe(0);
    expect(forge.loaded).toEqual(['commander', 'picocolors']);
    expect(forge.stdout).toMatch(/^ {2}loop \[options\] <subject> +create an autoresearch loop/m);
    expect(forge.stdout).toMatch(/^ {2}stamp \[options\] +stamp a loop's next beads/m);
    const ralph = await traced('ralph-loop', ['--help']);
    expect(ralph.loaded).toEqual(['commander', 'picocolors']);
    expect(ralph.stdout).toMatch(/^ {2}status \[options\] <epic-id> +where an epic stands/m);
    expect(ralph.stdout).toMatch(/^ {2}resume \[options\] <epic-id> +fold the user's answer/m);
    expect(ralph.stdout).toMatch(/^ {2}once \[options\] <bead-id> +run exactly one bead/m);
    expect(ralph.stdout).toMatch(/^ {2}stop <epic-id> +ask the running loop/m);
    expect(ralph.stdout).toMatch(/^ {2}logs \[options\] <epic-id> \[bead-id\] +show the events/m);
    expect(ralph.stdout).toMatch(/^ {2}report \[options\] <epic-id> +the morning report/m);
    expect(ralph.stdout).toMatch(/^ {2}dashboard \[options\] +a read-only local page/m);
  });

  it('a command, or help for it, loads its own module and no other', async () => {
    const status = await traced('ralph-loop', ['status', '--help']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.loaded).toEqual(['status-command.js', 'commander', 'picocolors']);
    expect(status.stdout).toContain('--ascii');

    const stamp = await traced('forge-pack', ['help', 'stamp']);
    expect(stamp.exitCode, stamp.stderr).toBe(0);
    expect(stamp.loaded).toEqual(['stamp-command.js', 'commander', 'picocolors']);
    expect(stamp.stdout).toContain('Usage: forge-pack stamp [options]');
    expect(stamp.stdout).toContain('--directive-file <file>');

    const resume = await traced('ralph-loop', ['resume', 'bd-x', '--answer', 'a', '--answer-file', 'b']);
    expect(resume.exitCode).toBe(2);
    expect(resume.stderr).toContain('not both');
    expect(resume.loaded).toContain('resume-command.js');
    expect(
      resume.loaded.filter((name) => name.endsWith('-command.js') || name.endsWith('-commands.js')),
    ).toEqual(['resume-command.js']);

    const stop = await traced('ralph-loop', ['--store', 'embedded', 'stop', 'bd-x', '--json']);
    expect(stop.exitCode, stop.stderr).toBe(0);
    expect(JSON.parse(stop.stdout)).toMatchObject({ epic: 'bd-x', stop_requested: false, running: false });
    expect(stop.loaded.filter((name) => name.endsWith('.js'))).toEqual(['stop-command.js']);

    // `once` and `resume` take the run's own options: their help lists them.
    for (const command of ['once', 'resume']) {
      const help = await traced('ralph-loop', [command, '--help']);
      expect(help.exitCode, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^Global Options:$/m);
      expect(help.stdout).toMatch(/^ {2}--agent <spec> /m);
      expect(help.stdout).toMatch(/^ {2}--auto-commit /m);
    }

    const logs = await traced('ralph-loop', ['logs', '--help']);
    expect(logs.exitCode, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('Usage: ralph-loop logs [options] <epic-id> [bead-id]');
    expect(logs.stdout).toContain('--follow [bead-id]');
    expect(logs.loaded.filter((name) => name.endsWith('.js'))).toEqual(['logs-command.js']);

    const beads = await traced('forge-pack', ['beads', 'import', '--help']);
    expect(beads.exitCode, beads.stderr).toBe(0);
    expect(beads.stdout).toContain('Usage: forge-pack beads import');
    expect(beads.loaded.filter((name) => name.endsWith('.js'))).toEqual(['beads-commands.js']);

    // A command the loaded module builds on its own (beads import) gets the same setup: a usage error
    // is exit 2 with the usage hint, as for every other command.
    const unknown = await traced('forge-pack', ['beads', 'import', '--bogus']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--bogus'");
    expect(unknown.stderr).toContain('(run with --help for usage)');
  });
});

describe('a program lists its unloaded commands as they read once loaded', () => {
  it.each([
    ['forge-pack', createForgePackProgram],
    ['ralph-loop', createRalphLoopProgram],
  ] as const)('%s --help is the same before and after its commands are defined', async (name, create) => {
    let out = '';
    const sinks = {
      cwd: tmpdir(),
      stdout: { write: (t: string) => void (out += t) },
      stderr: { write: () => undefined },
    };
    expect(await runProgram(name, create, ['node', name, '--help'], sinks)).toBe(0);
    const lazy = out;
    out = '';
    const program = create(createDeps({ ...sinks, stderrIsTTY: false }));
    await loadAllCommands(program);
    expect(await runProgram(name, () => program, ['node', name, '--help'], sinks)).toBe(0);
    expect(out).toBe(lazy);
    expect(lazy).toContain(
      name === 'forge-pack' ? '  loop [options] <subject>' : '  status [options] <epic-id>',
    );
  });
});
