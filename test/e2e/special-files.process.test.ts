// An agent that leaves FIFOs where the runner reads or writes next (a file its CLI loads from HOME,
// the next bead's transcript, the run's stop file): a plain open() of one waits for good, and the
// runner with it. The run goes on and puts HOME back, as a process a user runs; a stop file an agent
// made names no run (the run's id is in its own request), so it stops nothing.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '../support/runner-repo.js';

describe('FIFOs an agent leaves behind', () => {
  it('do not hang the run: HOME is put back, the next bead runs, a FIFO stop file is no stop', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['plants', 'asks to stop', 'runs too']);
    const home = join(repo.dir, '..'); // the fixture's HOME
    const runDir = join(repo.dir, '.forge', 'epics', epic);
    await repo.script({
      [ids[0]!]: [
        [
          { exec: ['mkdir', '-p', join(home, '.claude', 'skills', 'x'), join(runDir, 'logs')] },
          {
            exec: [
              'mkfifo',
              join(home, '.claude', 'CLAUDE.md'),
              join(home, '.claude', 'skills', 'x', 'SKILL.md'),
            ],
          },
          // Where the next bead's transcript goes.
          { exec: ['mkfifo', join(runDir, 'logs', `${ids[1]!}.log`)] },
        ],
      ],
      [ids[1]!]: [[{ exec: ['mkfifo', join(runDir, 'stop')] }]],
    });

    const run = await repo.ralphProcess([epic, '--agent', repo.agent], 60_000);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(`tamper ${ids[0]!}`);
    expect(run.stderr).toContain(join(home, '.claude', 'CLAUDE.md'));
    expect((await repo.calls()).map((call) => call.bead)).toEqual(ids);
    for (const id of [epic, ...ids]) expect((await repo.show(id)).status).toBe('closed');
    for (const gone of [join(home, '.claude', 'CLAUDE.md'), join(home, '.claude', 'skills', 'x', 'SKILL.md')])
      expect(existsSync(gone), gone).toBe(false);
    // Status and logs read the run's files, a FIFO stop file among them (the run removed the agent's).
    expect(existsSync(join(runDir, 'stop'))).toBe(false);
    execFileSync('mkfifo', [join(runDir, 'stop')]);
    for (const args of [
      ['status', epic],
      ['logs', epic],
    ]) {
      const shown = await repo.ralph(args);
      expect(shown.exitCode, `${args.join(' ')}: ${shown.stderr}`).toBe(0);
    }
  });
});
