// ralph-loop as a user runs it: a temp git repo, the embedded store or the fake br, fake agent CLIs. A
// full run, an exit code, --json on stdout, a timeout, kill -9 and signals run the built CLI as a
// process; the rest runs its program in the test's process.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/infra/process.js';
import { apiErrorResult, assistantText, init, result } from '../support/fake-agents/claude-lines.js';
import { assertBuilt, startCli, waitFor } from '../support/cli.js';
import { makeRepo, type Repo } from '../support/runner-repo.js';

beforeAll(assertBuilt);

describe.each(['embedded', 'br'] as const)('ralph-loop process on the %s store', (store) => {
  it('runs beads in dependency order and passes shell metacharacters through verbatim', async () => {
    const repo = await makeRepo(store);
    const nasty = `$(touch pwned) \`touch pwned2\` "q" 'q' ; rm -rf / && echo $HOME | cat > x`;
    const description = `line\n$(touch pwned3)\n\`\`\`bash\ntouch pwned4\n\`\`\``;
    const { epic, ids } = await repo.epic(['first', nasty, 'third'], (i) =>
      i === 1 ? ['-d', description] : [],
    );
    expect((await repo.beads(['dep', 'add', ids[0]!, ids[2]!])).exitCode).toBe(0);

    const run = await repo.ralphProcess([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    const calls = await repo.calls();
    expect(calls.map((c) => c.bead)).toEqual([ids[1], ids[2], ids[0]]);
    expect(calls[0]!.stdin).toContain(`# ${nasty}`);
    expect(calls[0]!.stdin).toContain(description);
    for (const name of ['pwned', 'pwned2', 'pwned3', 'pwned4', 'x'])
      expect(existsSync(join(repo.dir, name))).toBe(false);
    for (const id of [epic, ...ids]) expect((await repo.show(id)).status).toBe('closed');
    expect(run.stderr).toContain('stopped: done');
  });

  it('retries a failing bead up to --max-attempts, labels it ralph:failed and exits 5', async () => {
    const repo = await makeRepo(store);
    const { epic, ids } = await repo.epic(['broken', 'later']);
    await repo.script({ [ids[0]!]: [[{ stdout: 'compile error' }, { exit: 1 }]] });
    const run = await repo.ralphProcess([
      epic,
      '--agent',
      repo.agent,
      '--max-attempts',
      '3',
      '--backoff',
      '0',
    ]);
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toContain(`Bead ${ids[0]} failed 3 time(s)`);
    expect((await repo.calls()).map((c) => c.bead)).toEqual([ids[0], ids[0], ids[0]]);
    const bead = await repo.show(ids[0]!);
    expect(bead.status).toBe('open');
    expect(bead.labels).toContain('ralph:failed');
    expect(bead.comments?.filter((c) => c.text.includes('attempt'))).toHaveLength(3);
    const transcript = await repo.ralph(['logs', epic, ids[0]!]);
    expect(transcript.stdout).toContain('compile error');
  });

  it('after kill -9 mid-bead, a rerun takes over, reopens the bead and finishes; no closed bead runs twice', async () => {
    const repo = await makeRepo(store);
    const { epic, ids } = await repo.epic(['one', 'two', 'three']);
    await repo.script({ [ids[1]!]: [[{ sleepMs: 60_000 }], []], '*': [[]] });
    const first = startCli('ralph-loop', ['--store', store, epic, '--agent', repo.agent], {
      cwd: repo.dir,
      env: repo.env,
    });
    await waitFor(
      async () => ((await repo.calls()).some((c) => c.bead === ids[1]) ? true : undefined),
      60_000,
      'second bead started',
    ).catch(async (error: unknown) => {
      first.kill('SIGKILL');
      const output = await first;
      const brCalls = await readFile(join(repo.dir, '..', 'br-calls.jsonl'), 'utf8').catch(() => '');
      throw new Error(`${String(error)}; the runner said: ${String(output.stderr)}; br calls: ${brCalls}`);
    });
    const orphan = (await repo.calls()).find((c) => c.bead === ids[1])!.pid;
    first.kill('SIGKILL');
    await first;
    expect((await repo.show(ids[1]!)).status).toBe('in_progress');
    expect(isProcessAlive(orphan)).toBe(true);

    const rerun = await repo.ralph([epic, '--agent', repo.agent]);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/Took over the lock of a runner that is gone/);
    expect(rerun.stderr).toContain(`recovered ${ids[1]}`);
    const beads = (await repo.calls()).map((c) => c.bead);
    expect(beads).toEqual([ids[0], ids[1], ids[1], ids[2]]);
    for (const id of ids) expect((await repo.show(id)).status).toBe('closed');
    // The dead runner's agent was stopped by the takeover instead of working on beside the new one.
    await waitFor(async () => (!isProcessAlive(orphan) ? true : undefined), 10_000, 'orphaned agent gone');
  });
});

describe('ralph-loop process: plan and output', () => {
  it('prints the plan on --dry-run and changes nothing', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a', 'b']);
    await repo.beads(['dep', 'add', ids[0]!, ids[1]!]);
    const before = await readFile(join(repo.dir, '.beads', 'issues.jsonl'), 'utf8');
    const run = await repo.ralph([epic, '--dry-run', '--agent', repo.agent]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr.indexOf(ids[1]!)).toBeLessThan(run.stderr.indexOf(`${ids[0]!} `));
    expect(await readFile(join(repo.dir, '.beads', 'issues.jsonl'), 'utf8')).toBe(before);
    expect(await repo.calls()).toEqual([]);
  });

  it('streams NDJSON events on stdout with --json and keeps stdout free of prose', async () => {
    const repo = await makeRepo();
    const { epic } = await repo.epic(['a']);
    const run = await repo.ralphProcess([epic, '--json', '--agent', repo.agent]);
    expect(run.exitCode).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; outcome?: string });
    expect(events.map((e) => e.type)).toEqual([
      'run_started',
      'bead_started',
      'attempt_finished',
      'bead_closed',
      'run_finished',
    ]);
    const logs = await repo.ralph(['logs', epic, '--json']);
    expect(logs.stdout.trim().split('\n')).toHaveLength(5);
  });
});

describe('ralph-loop process: failures', () => {
  it('kills a hanging agent and its grandchild at the per-bead timeout', async () => {
    const repo = await makeRepo();
    const pidFile = join(repo.dir, '..', 'grandchild.pid');
    const { epic, ids } = await repo.epic(['hangs']);
    await repo.script({ [ids[0]!]: [[{ grandchild: pidFile }, { hang: true }]] });
    const run = await repo.ralphProcess([
      epic,
      '--agent',
      repo.agent,
      '--timeout',
      '2',
      '--max-attempts',
      '1',
    ]);
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/timed out|timeout/i);
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    const agent = (await repo.calls())[0]!.pid;
    await waitFor(
      async () => (!isProcessAlive(grandchild) && !isProcessAlive(agent) ? true : undefined),
      10_000,
      'group gone',
    );
  });

  it('stops at the wall clock in the middle of a bead and leaves the bead open', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['slow', 'never']);
    // The agent sleeps past the test's timeout: only the wall clock can end the run in time.
    await repo.script({ '*': [[{ sleepMs: 600_000 }]] });
    // Time enough for the first bead to start on a loaded machine: the clock must strike inside it.
    const run = await repo.ralph([epic, '--agent', repo.agent, '--wall-clock', '4']);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('stopped: wall_clock');
    expect((await repo.show(ids[0]!)).status).toBe('open');
    expect((await repo.calls()).map((c) => c.bead)).toEqual([ids[0]]);
  });
});

describe('ralph-loop process: agent limits', () => {
  const line = (value: unknown) => ({ stdout: JSON.stringify(value) });

  it('waits out a rate limit, then continues without spending an attempt', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['limited']);
    await repo.script({
      [ids[0]!]: [
        [line(init()), line(apiErrorResult(429, 'Request rejected (429)')), { exit: 1 }],
        [line(init()), line(assistantText('done')), line(result({ result: 'done' }))],
      ],
    });
    const run = await repo.ralph([epic, '--agent', 'claude', '--max-attempts', '1', '--backoff', '1']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('rate limited: waiting until');
    expect((await repo.show(ids[0]!)).status).toBe('closed');
  });

  it('stops at once on an authentication failure, says what to fix, and leaves the bead open', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['needs key', 'other']);
    await repo.script({ '*': [[line(init()), line(apiErrorResult(401, 'Invalid API key')), { exit: 1 }]] });
    const run = await repo.ralph([epic, '--agent', 'claude']);
    expect(run.exitCode).toBe(9);
    expect(run.stderr).toMatch(/credentials|API key/i);
    expect(await repo.calls()).toHaveLength(1);
    const bead = await repo.show(ids[0]!);
    expect(bead.status).toBe('open');
    expect(bead.labels ?? []).not.toContain('ralph:failed');
  });
});

describe('ralph-loop process: one runner, crashes and signals', () => {
  it("refuses a second runner on the same epic, naming the first one's pid", async () => {
    const repo = await makeRepo();
    const { epic } = await repo.epic(['slow']);
    await repo.script({ '*': [[{ sleepMs: 4_000 }]] });
    const first = startCli('ralph-loop', ['--store', 'embedded', epic, '--agent', repo.agent], {
      cwd: repo.dir,
      env: repo.env,
    });
    await waitFor(
      async () => ((await repo.calls()).length > 0 ? true : undefined),
      60_000,
      'first runner started',
    );
    const second = await repo.ralph([epic, '--agent', repo.agent]);
    expect(second.exitCode).toBe(8);
    expect(second.stderr).toContain(`pid ${first.pid}`);
    // A live runner is told apart from a lock naming some other process: wait or stop it, never delete.
    expect(second.stderr).toContain(`ralph-loop stop ${epic}. Its lock: `);
    expect(second.stderr).not.toContain('delete');
    expect((await first).exitCode).toBe(0);
  });

  it('on SIGINT stops the agent, leaves the bead open, releases the lock and exits 130', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['long']);
    await repo.script({ '*': [[{ hang: true }]] });
    const run = startCli('ralph-loop', ['--store', 'embedded', epic, '--agent', repo.agent], {
      cwd: repo.dir,
      env: repo.env,
    });
    await waitFor(async () => ((await repo.calls()).length > 0 ? true : undefined), 60_000, 'agent started');
    run.kill('SIGINT');
    const finished = await run;
    expect(finished.exitCode).toBe(130);
    expect((await repo.show(ids[0]!)).status).toBe('open');
    const agentPid = (await repo.calls())[0]!.pid;
    await waitFor(async () => (!isProcessAlive(agentPid) ? true : undefined), 10_000, 'agent gone');
    const runDir = join(repo.dir, '.forge', 'epics', epic);
    expect(await readdir(runDir)).not.toContain('ralph-loop.lock');
  });

  it('ralph-loop stop ends the run after the current bead', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a', 'b']);
    // The first bead lasts until the stop request is in, however long that takes on a busy machine.
    const goAhead = join(repo.dir, '..', 'go-ahead');
    await repo.script({ [ids[0]!]: [[{ waitFor: goAhead }]], '*': [[]] });
    const run = startCli('ralph-loop', ['--store', 'embedded', epic, '--agent', repo.agent], {
      cwd: repo.dir,
      env: repo.env,
    });
    await waitFor(async () => ((await repo.calls()).length > 0 ? true : undefined), 60_000, 'agent started');
    const stop = await repo.ralph(['stop', epic]);
    expect(stop.exitCode).toBe(0);
    await writeFile(goAhead, '');
    const finished = await run;
    expect(finished.exitCode).toBe(0);
    expect(String(finished.stderr)).toContain('stopped: stopped');
    expect((await repo.show(ids[0]!)).status).toBe('closed');
    expect((await repo.show(ids[1]!)).status).toBe('open');
  });
});

describe('ralph-loop process: git', () => {
  const git = (repo: Repo, ...args: string[]) =>
    execa('git', args, { cwd: repo.dir, env: repo.env }).then((r) => r.stdout);

  it("--auto-commit commits what a bead changed, naming the bead, and never Forge's own files", async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['write the file']);
    await repo.script({ [ids[0]!]: [[{ write: { path: 'feature.txt', content: 'new\n' } }]] });
    const run = await repo.ralph([epic, '--agent', repo.agent, '--auto-commit']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await git(repo, 'log', '-1', '--format=%s')).toBe(`ralph-loop: ${ids[0]} write the file`);
    expect((await git(repo, 'show', '--name-only', '--format=', 'HEAD')).split('\n')).toEqual([
      'feature.txt',
    ]);
  });

  it('refuses to start while a merge is in progress, and touches nothing', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    await git(repo, 'checkout', '-q', '-b', 'other');
    await writeFile(join(repo.dir, 'f.txt'), 'other\n');
    await git(repo, 'add', 'f.txt');
    await git(repo, 'commit', '-q', '-m', 'other');
    await git(repo, 'checkout', '-q', 'main');
    await writeFile(join(repo.dir, 'f.txt'), 'main\n');
    await git(repo, 'add', 'f.txt');
    await git(repo, 'commit', '-q', '-m', 'main');
    await execa('git', ['merge', 'other'], { cwd: repo.dir, env: repo.env, reject: false });
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toMatch(/merge or rebase is in progress/);
    expect(await repo.calls()).toEqual([]);
    expect((await repo.show(ids[0]!)).status).toBe('open');
  });

  it('prints what a bead’s title and an agent’s words hold as escapes, never as terminal commands', async () => {
    const repo = await makeRepo();
    // Made by an agent with the bead tool: retitle the window, hide text, print over the line.
    const { epic } = await repo.epic(['Fix \u001b]0;pwned\u0007 the \u001b[8mparser\u001b[0m\r✓ done']);
    // Its first attempt fails, printing escapes of its own: the error line quotes what it printed.
    await repo.script({ '*': [[{ stdout: 'worked \u001b[2J\u202e on it\n' }, { exit: 1 }], [{ exit: 0 }]] });
    const run = await repo.ralph([epic, '--agent', repo.agent, '--backoff', '0']);
    expect(run.exitCode, run.stderr).toBe(0);
    const status = await repo.ralph(['status', epic]);
    for (const out of [run.stderr, run.stdout, status.stdout, status.stderr]) {
      // eslint-disable-next-line no-control-regex -- control characters are what it looks for
      expect(out).not.toMatch(/[\u001b\u202e]|\r(?!\n)/);
    }
    expect(run.stderr).toContain('Fix \\u001b]0;pwned\\u0007 the \\u001b[8mparser\\u001b[0m\\r✓ done');
    expect(run.stderr).toContain('exited 1: worked \\u001b[2J\\u202e on it');
  });

  it('--worktree runs the agents in .forge/worktrees/<epic> on branch ralph-loop/<epic>, and reuses it', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['first', 'second']);
    await repo.script({ '*': [[{ write: { path: 'made-here.txt', content: 'x\n' } }]] });
    const first = await repo.ralph([
      epic,
      '--agent',
      repo.agent,
      '--worktree',
      '--max-beads',
      '1',
      '--auto-commit',
    ]);
    expect(first.exitCode, first.stderr).toBe(0);
    const worktree = join(repo.dir, '.forge', 'worktrees', epic);
    const calls = await repo.calls();
    expect(calls[0]!.cwd).toBe(worktree);
    expect(existsSync(join(worktree, 'made-here.txt'))).toBe(true);
    expect(existsSync(join(repo.dir, 'made-here.txt'))).toBe(false);
    expect(await execa('git', ['branch', '--show-current'], { cwd: worktree }).then((r) => r.stdout)).toBe(
      `ralph-loop/${epic}`,
    );
    expect(await git(repo, 'log', '-1', '--format=%s', `ralph-loop/${epic}`)).toBe(
      `ralph-loop: ${ids[0]} first`,
    );

    const second = await repo.ralph([epic, '--agent', repo.agent, '--worktree']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect((await repo.calls())[1]!.cwd).toBe(worktree);
    expect((await repo.show(ids[1]!)).status).toBe('closed');
  });

  it('--worktree makes the worktree again from its branch when its checkout went, keeping what was left', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['first', 'second', 'third']);
    await repo.script({ '*': [[{ write: { path: 'made-here.txt', content: 'x\n' } }]] });
    const once = ['--agent', repo.agent, '--worktree', '--max-beads', '1', '--auto-commit'];
    expect((await repo.ralph([epic, ...once])).exitCode).toBe(0);
    const worktree = join(repo.dir, '.forge', 'worktrees', epic);

    // The whole checkout deleted: git still lists it, and its branch holds the loop's commit.
    await rm(worktree, { recursive: true, force: true });
    const second = await repo.ralph([epic, ...once]);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toContain(
      `the loop's worktree ${worktree} was gone; it is made again from ralph-loop/${epic}`,
    );
    expect((await repo.calls())[1]!.cwd).toBe(worktree);
    expect((await repo.show(ids[1]!)).status).toBe('closed');
    expect(await git(repo, 'branch', '--show-current')).toBe('main');

    // Only its .git gone, a file of the user's left in it: moved aside, never deleted, nor taken for
    // a folder of the repository around it.
    await rm(join(worktree, '.git'));
    await writeFile(join(worktree, 'notes.txt'), 'mine\n');
    const third = await repo.ralph([epic, ...once]);
    expect(third.exitCode, third.stderr).toBe(0);
    const aside = /what was in it is kept in (\S+),/.exec(third.stderr)?.[1];
    expect(aside).toBeDefined();
    expect(await readFile(join(aside!, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect((await repo.show(ids[2]!)).status).toBe('closed');
    expect(await execa('git', ['branch', '--show-current'], { cwd: worktree }).then((r) => r.stdout)).toBe(
      `ralph-loop/${epic}`,
    );
    expect(await git(repo, 'branch', '--show-current')).toBe('main');
  });
});
