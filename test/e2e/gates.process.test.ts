// Gates as a user meets them: the built ralph-loop on a temp repo with the embedded store, a real gate
// command (node on a check script) and the fake agent scripted per bead and attempt.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/infra/process.js';
import { assertBuilt } from '../support/cli.js';
import { makeRepo, type Repo } from '../support/runner-repo.js';

beforeAll(assertBuilt);

/** The gate: green only when value.txt says so; otherwise it says what it found on stderr and exits 1. */
const CHECK = `import { readFileSync } from 'node:fs';
const value = readFileSync('value.txt', 'utf8').trim();
if (value !== 'green') {
  console.error('FAIL value.txt: expected green, got ' + value);
  process.exit(1);
}
console.log('all green');
`;

async function withGates(repo: Repo, gates: Record<string, unknown>): Promise<void> {
  await writeFile(join(repo.dir, 'check.mjs'), CHECK);
  await writeFile(join(repo.dir, 'value.txt'), 'red\n');
  await mkdir(join(repo.dir, '.forge'), { recursive: true });
  await writeFile(join(repo.dir, '.forge', 'config.json'), JSON.stringify({ store: 'embedded', gates }));
}

const write = (content: string) => ({ write: { path: 'value.txt', content } });

async function events(repo: Repo, epic: string): Promise<Record<string, unknown>[]> {
  const logs = await repo.ralph(['logs', epic, '--json']);
  expect(logs.exitCode, logs.stderr).toBe(0);
  return logs.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('ralph-loop gates (process, embedded store)', () => {
  it('a red gate fails the first attempt, its output reaches the second, which fixes it and closes the bead', async () => {
    const repo = await makeRepo('embedded');
    await withGates(repo, { test: [process.execPath, 'check.mjs'] });
    const { epic, ids } = await repo.epic(['make it green', 'docs only'], (i) =>
      i === 1 ? ['-l', 'gates:none'] : [],
    );
    const [fix, docs] = ids as [string, string];
    await repo.script({ [fix]: [[write('red\n')], [write('green\n')]], [docs]: [[write('red\n')]] });

    const run = await repo.ralph([epic, '--agent', repo.agent, '--backoff', '0']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('gate test failed (exit 1)');
    expect(run.stderr).toMatch(/gate test passed \(\d+s, .*check\.mjs\)/);
    expect(run.stderr).toMatch(/stopped: done \(2 of 2 bead\(s\) run closed, gates \d+s\)/);

    const calls = await repo.calls();
    expect(calls.filter((c) => c.bead === fix).map((c) => c.attempt)).toEqual([1, 2]);
    expect(calls.filter((c) => c.bead === docs)).toHaveLength(1);
    const [first, second] = calls.filter((c) => c.bead === fix);
    expect(first!.stdin).not.toContain('did not pass the gates');
    expect(second!.stdin).toContain('## The previous attempt did not pass the gates');
    expect(second!.stdin).toContain('FAIL value.txt: expected green, got red');
    expect(second!.stdin).toContain(`Command (argv): ${JSON.stringify([process.execPath, 'check.mjs'])}`);

    const bead = await repo.show(fix);
    expect(bead.status).toBe('closed');
    const comment = bead.comments?.find((c) => c.text.startsWith('ralph-loop attempt 1'))?.text ?? '';
    expect(comment).toContain('gate test');
    expect(comment).toContain('Exit code: 1');
    expect(comment).toContain('FAIL value.txt: expected green, got red');
    expect((await repo.show(docs)).status).toBe('closed');

    const gateEvents = (await events(repo, epic)).filter((e) => e.type === 'gate_finished');
    expect(gateEvents.map((e) => [e.bead, e.gate, e.attempt, e.ok, e.exit])).toEqual([
      [fix, 'test', 1, false, 1],
      [fix, 'test', 2, true, 0],
    ]);
    expect(gateEvents[0]!.argv).toEqual([process.execPath, 'check.mjs']);
    expect(gateEvents[0]!.tail).toContain('expected green, got red');
    expect(typeof gateEvents[0]!.duration_ms).toBe('number');

    const status = await repo.ralph(['status', epic]);
    expect(status.stdout + status.stderr).toMatch(/gates {5}test passed \([\d.]+s, /);
  });

  it('--no-gates skips them for the run: a red tree closes after one attempt, no gate event', async () => {
    const repo = await makeRepo('embedded');
    await withGates(repo, { test: [process.execPath, 'check.mjs'] });
    const { epic, ids } = await repo.epic(['stays red']);
    await repo.script({ [ids[0]!]: [[write('red\n')]] });
    const run = await repo.ralph([epic, '--agent', repo.agent, '--no-gates']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await repo.show(ids[0]!)).status).toBe('closed');
    expect((await events(repo, epic)).some((e) => e.type === 'gate_finished')).toBe(false);
  });

  it('--gates runs them though the config turns them off (the flag wins)', async () => {
    const repo = await makeRepo('embedded');
    await writeFile(join(repo.dir, 'check.mjs'), CHECK);
    await writeFile(join(repo.dir, 'value.txt'), 'red\n');
    await mkdir(join(repo.dir, '.forge'), { recursive: true });
    await writeFile(
      join(repo.dir, '.forge', 'config.json'),
      JSON.stringify({
        store: 'embedded',
        runner: { run_gates: false },
        gates: { test: [process.execPath, 'check.mjs'] },
      }),
    );
    const { epic, ids } = await repo.epic(['stays red']);
    const off = await repo.ralph(['once', ids[0]!, '--agent', repo.agent]);
    expect(off.exitCode, off.stderr).toBe(0);
    expect((await events(repo, epic)).some((e) => e.type === 'gate_finished')).toBe(false);
    expect((await repo.beads(['reopen', ids[0]!])).exitCode).toBe(0);
    const on = await repo.ralph(['once', ids[0]!, '--agent', repo.agent, '--gates', '--max-attempts', '1']);
    expect(on.exitCode).toBe(5);
    expect(on.stderr).toContain('gate test');
  });

  it('a gate that hangs is killed at its timeout and fails the attempt', async () => {
    const repo = await makeRepo('embedded');
    const hang = `require('node:fs').writeFileSync('gate.pid', String(process.pid)); setInterval(() => {}, 1000);`;
    await withGates(repo, { hang: { argv: [process.execPath, '-e', hang], timeout_seconds: 1 } });
    const { epic, ids } = await repo.epic(['hangs']);
    const run = await repo.ralph([epic, '--agent', repo.agent, '--max-attempts', '1']);
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toContain(`Bead ${ids[0]} failed 1 time(s); last: gate hang`);
    expect(run.stderr).toContain('timed out after 1s and was killed');
    const pid = Number(await readFile(join(repo.dir, 'gate.pid'), 'utf8'));
    expect(isProcessAlive(pid)).toBe(false);
    const gate = (await events(repo, epic)).find((e) => e.type === 'gate_finished');
    expect(gate).toMatchObject({ gate: 'hang', ok: false, exit: null, timed_out: true });
    const bead = await repo.show(ids[0]!);
    expect(bead.labels).toContain('ralph:failed');
  });
});
