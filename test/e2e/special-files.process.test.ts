// An agent that leaves FIFOs where the runner reads or writes next (a file its CLI loads from HOME,
// the next bead's transcript, the run's stop file): a plain open() of one waits for good, and the
// runner with it. The run goes on and puts HOME back, as a process a user runs; a stop file an agent
// made names no run (the run's id is in its own request), so it stops nothing.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

// The next bead's transcript and the run's event log have names an agent can work out (the bead ids,
// and the run id in FORGE_AGENT_RUN): a hard link there, or a logs/ folder swapped for a symlink, sent
// the next agent's prompt and output, or the run's events, into the user's files.
describe('links an agent leaves where the next logs go', () => {
  it("do not carry a later bead's transcript into HOME, nor blame that bead for it", async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['plants', 'innocent', 'prints']);
    const home = join(repo.dir, '..');
    const logs = join(repo.dir, '.forge', 'epics', epic, 'logs');
    const claudeMd = join(home, '.claude', 'CLAUDE.md');
    const bashrc = join(home, '.bashrc');
    mkdirSync(join(home, '.claude'));
    writeFileSync(claudeMd, 'user notes\n');
    writeFileSync(bashrc, '# my bashrc\n');
    await repo.script({
      [ids[0]!]: [
        [
          { exec: ['mkdir', '-p', logs] },
          // Another name for each file: neither changes, so nothing is put back after this bead.
          { exec: ['ln', '-f', claudeMd, join(logs, `${ids[1]!}.log`)] },
          { exec: ['ln', '-f', bashrc, join(logs, `${ids[2]!}.log`)] },
        ],
      ],
      '*': [[{ stdout: 'touch /tmp/pwned-by-forge' }]],
    });

    const run = await repo.ralphProcess([epic, '--agent', repo.agent], 60_000);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('tamper');
    expect(readFileSync(claudeMd, 'utf8')).toBe('user notes\n');
    expect(readFileSync(bashrc, 'utf8')).toBe('# my bashrc\n');
    // The later beads' transcripts are their own, and `logs` shows them.
    const shown = await repo.ralph(['logs', epic, ids[2]!]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('touch /tmp/pwned-by-forge');
    expect(shown.stdout).not.toContain('# my bashrc');
  });

  it('do not carry a transcript through a logs/ folder swapped for a symlink: the run goes on', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['swaps logs/', 'prints']);
    const home = join(repo.dir, '..');
    const logs = join(repo.dir, '.forge', 'epics', epic, 'logs');
    const outside = join(home, 'outside-logs');
    await repo.script({
      [ids[0]!]: [
        [
          { exec: ['mkdir', '-p', outside] },
          { exec: ['mv', logs, `${logs}.orig`] },
          { exec: ['ln', '-s', outside, logs] },
        ],
      ],
      '*': [[{ stdout: 'payload' }]],
    });

    const run = await repo.ralphProcess([epic, '--agent', repo.agent], 60_000);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await repo.calls()).map((call) => call.bead)).toEqual(ids);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('end the run with an error naming its event log when a hard link takes its place, ~/.profile untouched', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['links the event log', 'runs after']);
    const home = join(repo.dir, '..');
    const profile = join(home, '.profile');
    writeFileSync(profile, '# my profile\n');
    const runs = join(repo.dir, '.forge', 'epics', epic, 'runs');
    await repo.script({
      [ids[0]!]: [
        [
          {
            exec: ['sh', '-c', `L="${runs}/\${FORGE_AGENT_RUN%%:*}.jsonl"; rm -f "$L"; ln "${profile}" "$L"`],
          },
        ],
      ],
    });

    const run = await repo.ralphProcess([epic, '--agent', repo.agent], 60_000);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toContain(runs);
    expect(readFileSync(profile, 'utf8')).toBe('# my profile\n');
  });
});
