// A new user's first night, as they ran it: the built CLI on temp repos. Commits hold only what a bead
// changed; exits and messages say what happened; faults (a self-closed bead, a locked index, a full disk,
// a closed terminal, a reused pid, a stale stop) end cleanly; `once` closes a finished epic.
import { execa } from 'execa';
import { existsSync, lstatSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { isProcessAlive, processStartTicks } from '../../src/infra/pid.js';
import { assertBuilt, BIN, runCli, startCli, waitFor } from '../support/cli.js';
import { zombiePid } from '../support/pids.js';
import { makeRepo, type Repo } from '../support/runner-repo.js';

beforeAll(assertBuilt);

const git = (repo: Repo, ...args: string[]) =>
  execa('git', args, { cwd: repo.dir, env: repo.env }).then((r) => r.stdout);

/** The warnings of the epic's one run, from its log. */
async function runWarnings(repo: Repo, epic: string): Promise<string[]> {
  const runs = join(repo.dir, '.forge', 'epics', epic, 'runs');
  const [log] = await readdir(runs);
  return (await readFile(join(runs, log!), 'utf8'))
    .split('\n')
    .filter((line) => line.includes('"warning"'))
    .map((line) => (JSON.parse(line) as { message: string }).message);
}

/** A process that has nothing to do with Forge, killed when the test ends. */
function unrelatedProcess(): number {
  const child = execa(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { reject: false });
  onTestFinished(() => void child.kill('SIGKILL'));
  return child.pid!;
}

/**
 * A process that has nothing to do with Forge, and the epic's lock naming it as `record` says (given
 * its pid and its start): what a runner dead before a reboot, or an agent, leaves behind.
 */
async function lockNamingStranger(
  repo: Repo,
  epic: string,
  record: (pid: number, start: number) => Record<string, unknown>,
): Promise<{ stranger: number; lockPath: string }> {
  const stranger = unrelatedProcess();
  const start = await waitFor(async () => processStartTicks(stranger), 5_000, 'stranger started');
  const lockPath = join(repo.dir, '.forge', 'epics', epic, 'ralph-loop.lock');
  await mkdir(join(lockPath, '..'), { recursive: true });
  await writeFile(lockPath, JSON.stringify(record(stranger, start)));
  return { stranger, lockPath };
}

/** Kills whatever is left of an agent when the test ends, whatever the test saw. */
function reap(pid: number): void {
  onTestFinished(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
}

describe('--auto-commit commits only what the bead changed', () => {
  it('never commits a registered loop workspace, .forge/ or .beads/, even when the bead writes there', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['write']);
    await mkdir(join(repo.dir, '.forge'), { recursive: true });
    await writeFile(
      join(repo.dir, '.forge', 'loops.json'),
      JSON.stringify({ 'bd-other': { workspace: '.autoresearch-parser' } }),
    );
    await repo.script({
      [ids[0]!]: [
        [
          { write: { path: 'feature.txt', content: 'new\n' } },
          { write: { path: '.autoresearch-parser/research-log.jsonl', content: '{}\n' } },
        ],
      ],
    });
    const run = await repo.ralph([epic, '--agent', repo.agent, '--auto-commit']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await git(repo, 'show', '--name-only', '--format=', 'HEAD')).split('\n')).toEqual([
      'feature.txt',
    ]);
  });

  it("a FIFO the bead made where git reads its settings (src/.gitignore): removed, the commit made, the run's log says so", async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['write', 'after']);
    await repo.script({
      [ids[0]!]: [
        [
          { write: { path: 'src/feature.txt', content: 'new\n' } },
          // One line of an agent's shell, after which every git status waited for ever (seen).
          { exec: ['mkfifo', 'src/.gitignore'] },
        ],
      ],
    });
    const run = await repo.ralph([epic, '--agent', repo.agent, '--auto-commit']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await repo.show(ids[1]!)).status).toBe('closed');
    expect(existsSync(join(repo.dir, 'src', '.gitignore'))).toBe(false);
    expect((await git(repo, 'log', '--name-only', '--format=', '-2')).split('\n')).toContain(
      'src/feature.txt',
    );
    const warnings = await runWarnings(repo, epic);
    expect(warnings).toContainEqual(
      expect.stringContaining(`Removed ${join(repo.dir, 'src', '.gitignore')}, a FIFO (named pipe)`),
    );
  });

  /** A bead that makes .git/<file> a FIFO: the run goes on, the commit is made, and its log says `said`. */
  async function fifoInGitFolder(file: string, said: (path: string) => string): Promise<void> {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['write', 'after']);
    const path = join(repo.dir, '.git', file);
    const before = await readFile(path);
    await repo.script({
      [ids[0]!]: [
        [
          { write: { path: 'src/feature.txt', content: 'new\n' } },
          { exec: ['rm', `.git/${file}`] },
          { exec: ['mkfifo', `.git/${file}`] },
        ],
      ],
    });
    const run = await repo.ralph([epic, '--agent', repo.agent, '--auto-commit']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await repo.show(ids[1]!)).status).toBe('closed');
    expect(lstatSync(path).isFile()).toBe(true);
    if (file === 'HEAD') expect(await readFile(path)).toEqual(before);
    expect((await git(repo, 'log', '--name-only', '--format=', '-2')).split('\n')).toContain(
      'src/feature.txt',
    );
    // Nothing staged or changed that the commit left out.
    expect(await git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    const warnings = await runWarnings(repo, epic);
    expect(warnings).toContainEqual(expect.stringContaining(said(path)));
  }

  // Every git call opens HEAD first: with a FIFO there, each waited for ever.
  it("a FIFO the bead made in place of .git/HEAD: HEAD put back as it was, the commit made, the run's log says so", () =>
    fifoInGitFolder('HEAD', (path) => `Put ${path} back as Forge last read it`));

  // Most git calls read the index.
  it("a FIFO the bead made in place of .git/index: the index rebuilt from HEAD, the commit made, the run's log says so", () =>
    fifoInGitFolder('index', (path) => `Rebuilt git's index ${path} from HEAD`));

  it('refuses to start on a dirty tree, naming the paths and --allow-dirty, and creates nothing', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['write']);
    await writeFile(join(repo.dir, 'notes.txt'), 'my notes\n');
    const run = await repo.ralph([epic, '--agent', repo.agent, '--auto-commit']);
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toContain('notes.txt');
    expect(run.stderr).toContain('--allow-dirty');
    expect(await repo.calls()).toEqual([]);
    expect((await repo.show(ids[0]!)).status).toBe('open');
    expect(await git(repo, 'log', '--format=%s')).toBe('init');
    // A refused run is not a run: nothing under .forge/epics, so `logs` still shows the last real one.
    expect(existsSync(join(repo.dir, '.forge', 'epics'))).toBe(false);
  });

  it("with --allow-dirty, leaves the user's edits and untracked files out, and says which the bead changed too", async () => {
    const repo = await makeRepo();
    await writeFile(join(repo.dir, 'user.txt'), 'v1\n');
    await git(repo, 'add', 'user.txt');
    await git(repo, 'commit', '-q', '-m', 'user file');
    const { epic, ids } = await repo.epic(['write']);
    await writeFile(join(repo.dir, 'user.txt'), 'v2, my uncommitted edit\n');
    await writeFile(join(repo.dir, 'notes.txt'), 'my notes\n');
    await repo.script({
      [ids[0]!]: [
        [
          { write: { path: 'feature.txt', content: 'new\n' } },
          { write: { path: 'notes.txt', content: 'my notes, and the agent’s\n' } },
        ],
      ],
    });
    const run = await repo.ralph([epic, '--agent', repo.agent, '--auto-commit', '--allow-dirty']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await git(repo, 'log', '-1', '--format=%s')).toBe(`ralph-loop: ${ids[0]} write`);
    expect((await git(repo, 'show', '--name-only', '--format=', 'HEAD')).split('\n')).toEqual([
      'feature.txt',
    ]);
    expect(run.stderr).toMatch(/notes\.txt[^\n]*not committed/);
    expect(run.stderr).not.toMatch(/user\.txt[^\n]*not committed/);
    const status = await git(
      repo,
      'status',
      '--porcelain',
      '--untracked-files=all',
      '--',
      'user.txt',
      'notes.txt',
    );
    expect(status.split('\n').sort()).toEqual([' M user.txt', '?? notes.txt']);
  });

  it('an agent’s git clean -fdx (the store, the lock and the event log gone) loses nothing and says by whom', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a', 'b', 'c']);
    await repo.script({ [ids[1]!]: [[{ exec: ['git', 'clean', '-fdxq'] }]] });
    const run = await repo.ralph(['--store', 'embedded', epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    for (const id of ids) expect((await repo.show(id)).status).toBe('closed');
    expect(run.stderr).toMatch(new RegExp(`event log \\S+ was deleted while ${ids[1]} ran`));
    // The run's record holds every bead: what was written before the clean, and after.
    const runsDir = join(repo.dir, '.forge', 'epics', epic, 'runs');
    const [log] = await readdir(runsDir);
    const events = (await readFile(join(runsDir, log!), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; bead?: string });
    expect(events.filter((e) => e.type === 'bead_closed').map((e) => e.bead)).toEqual(ids);
    expect(events[0]?.type).toBe('run_started');
    expect(events.at(-1)?.type).toBe('run_finished');
  });

  it('after a kill -9 mid-bead, the rerun takes what the bead left for its own and commits it when done', async () => {
    // Seen: the rerun refused the dirty tree as the user's ("uncommitted changes of your own"), and
    // --allow-dirty then closed the bead with its work left out of the commit.
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['write']);
    await repo.script({
      [ids[0]!]: [
        [{ write: { path: 'work.txt', content: 'half\n' } }, { hang: true }],
        [{ write: { path: 'more.txt', content: 'done\n' } }],
      ],
    });
    const first = startCli(
      'ralph-loop',
      ['--store', 'embedded', epic, '--agent', repo.agent, '--auto-commit'],
      {
        cwd: repo.dir,
        env: repo.env,
      },
    );
    const agent = await waitFor(async () => (await repo.calls())[0]?.pid, 60_000, 'agent started');
    reap(agent);
    await waitFor(async () => (existsSync(join(repo.dir, 'work.txt')) ? true : undefined), 10_000, 'written');
    first.kill('SIGKILL');
    await first.catch(() => undefined);

    const rerun = await repo.ralph([epic, '--agent', repo.agent, '--auto-commit']);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(await git(repo, 'log', '-1', '--format=%s')).toBe(`ralph-loop: ${ids[0]} write`);
    expect((await git(repo, 'show', '--name-only', '--format=', 'HEAD')).split('\n').sort()).toEqual([
      'more.txt',
      'work.txt',
    ]);
    expect(await git(repo, 'status', '--porcelain', '--', 'work.txt', 'more.txt')).toBe('');
  });

  it('refuses outside a git repository (exit 3) instead of silently committing nothing', async () => {
    const repo = await makeRepo('embedded', { git: false });
    const { epic } = await repo.epic(['write']);
    const run = await repo.ralph([epic, '--agent', repo.agent, '--auto-commit']);
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toMatch(/not a git repository|is not one/);
    expect(await repo.calls()).toEqual([]);
  });
});

describe('exit codes and messages that say what happened', () => {
  it('a missing agent binary is an environment error: exit 3, no ralph:failed, the attempt count true', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a', 'b']);
    const run = await repo.ralph([epic, '--agent', 'no-such-agent-cli', '--backoff', '0']);
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toContain('no-such-agent-cli');
    expect(run.stderr).not.toMatch(/\d time\(s\)/);
    const bead = await repo.show(ids[0]!);
    expect(bead.status).toBe('open');
    expect(bead.labels ?? []).not.toContain('ralph:failed');
    expect(
      bead.comments?.filter((c) => /attempt \d/.test(c.text)).map((c) => /attempt (\d)/.exec(c.text)?.[1]),
    ).toEqual(['1']);
  });

  it('a scripted agent whose script is missing is the set-up’s fault: exit 3, the bead open and unlabelled', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const run = await runCli('ralph-loop', ['--store', 'embedded', epic, '--agent', 'scripted'], {
      cwd: repo.dir,
      env: { ...repo.env, FORGE_SCRIPTED_AGENT: 'no-such-script.json' },
    });
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toContain('no-such-script.json');
    const bead = await repo.show(ids[0]!);
    expect(bead.status).toBe('open');
    expect(bead.labels ?? []).not.toContain('ralph:failed');
  });

  it('a mistyped epic is a usage error that names the closest epic, and leaves nothing behind', async () => {
    const repo = await makeRepo();
    const { epic } = await repo.epic(['a']);
    const typo = `${epic.slice(0, -1)}${epic.endsWith('z') ? 'y' : 'z'}`;
    const run = await repo.ralph([typo, '--agent', repo.agent]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(`did you mean ${epic}`);
    expect(existsSync(join(repo.dir, '.forge', 'epics'))).toBe(false);
    const logs = await repo.ralph(['logs', typo]);
    expect(logs.exitCode).not.toBe(0);
  });

  it('a bead given as the epic says it is a bead, names its epic and suggests once', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const run = await repo.ralph([ids[0]!, '--agent', repo.agent]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(`${ids[0]} is a bead of epic ${epic}`);
    expect(run.stderr).toContain(`ralph-loop once ${ids[0]}`);
    expect(await repo.calls()).toEqual([]);
  });

  it('outside a git repository with no store, says it is not a git repository', async () => {
    const dir = await makeRepo('embedded', { git: false }).then((repo) => join(repo.dir, '..', 'elsewhere'));
    await mkdir(dir);
    const run = await runCli('ralph-loop', ['bd-abc'], {
      cwd: dir,
      env: { GIT_CEILING_DIRECTORIES: join(dir, '..'), PATH: process.env.PATH },
    });
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toContain('is not a git repository');
  });
});

describe('faults end cleanly', () => {
  it('accepts a bead the agent closed itself through forge-pack beads close', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['closes itself', 'next']);
    await repo.script({
      [ids[0]!]: [
        [{ exec: [process.execPath, BIN['forge-pack'], '--store', 'embedded', 'beads', 'close', '{bead}'] }],
      ],
    });
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('already closed');
    for (const id of [epic, ...ids]) expect((await repo.show(id)).status).toBe('closed');
  });

  it('refuses a stale .git/index.lock before any agent runs, naming the file', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    await writeFile(join(repo.dir, '.git', 'index.lock'), '');
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toContain(join(repo.dir, '.git', 'index.lock'));
    expect(await repo.calls()).toEqual([]);
    expect((await repo.show(ids[0]!)).status).toBe('open');
  });

  it('on SIGHUP (the terminal closed) stops the agent, leaves the bead open, releases the lock, exits 130', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['long']);
    await repo.script({ '*': [[{ hang: true }]] });
    const run = startCli('ralph-loop', ['--store', 'embedded', epic, '--agent', repo.agent], {
      cwd: repo.dir,
      env: repo.env,
    });
    const agent = await waitFor(async () => (await repo.calls())[0]?.pid, 60_000, 'agent started');
    reap(agent);
    run.kill('SIGHUP');
    expect((await run).exitCode).toBe(130);
    expect((await repo.show(ids[0]!)).status).toBe('open');
    await waitFor(async () => (!isProcessAlive(agent) ? true : undefined), 10_000, 'agent gone');
    expect(await readdir(join(repo.dir, '.forge', 'epics', epic))).not.toContain('ralph-loop.lock');
  });

  it('a second Ctrl-C quits at once, and kills the agent group first, even an agent that ignores SIGTERM', async () => {
    const repo = await makeRepo();
    const { epic } = await repo.epic(['stubborn']);
    await repo.script({ '*': [[{ ignoreTerm: true }, { hang: true }]] });
    const run = startCli('ralph-loop', ['--store', 'embedded', epic, '--agent', repo.agent], {
      cwd: repo.dir,
      env: repo.env,
    });
    const agent = await waitFor(async () => (await repo.calls())[0]?.pid, 60_000, 'agent started');
    reap(agent);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the agent's SIGTERM handler is in place
    run.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 300));
    run.kill('SIGINT');
    expect((await run).exitCode).toBe(130);
    await waitFor(async () => (!isProcessAlive(agent) ? true : undefined), 5_000, 'agent gone');
  });

  it('takes over a lock whose pid now belongs to an unrelated process, and leaves that process alone', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const earlier = new Date(Date.now() - 3_600_000);
    const { stranger, lockPath } = await lockNamingStranger(repo, epic, (pid, start) => ({
      pid,
      host: hostname(),
      started_at: earlier.toISOString(),
      epic,
      run_id: 'before-the-reboot',
      // The runner that wrote it started at another time than the process holding its pid now.
      pid_start: start - 1,
      agent_pid: pid,
      agent_pid_start: start - 1,
    }));
    await utimes(lockPath, earlier, earlier);
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/Took over the lock of a runner that is gone/);
    expect((await repo.show(ids[0]!)).status).toBe('closed');
    expect(isProcessAlive(stranger)).toBe(true);
  });

  it('takes over the lock of a runner that was killed and never reaped (a zombie: kill(pid, 0) still answers)', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const zombie = await zombiePid();
    const start = processStartTicks(zombie)!;
    const lockPath = join(repo.dir, '.forge', 'epics', epic, 'ralph-loop.lock');
    await mkdir(join(lockPath, '..'), { recursive: true });
    const lock = {
      pid: zombie,
      pid_start: start,
      host: hostname(),
      started_at: new Date().toISOString(),
      epic,
      run_id: 'killed',
    };
    await writeFile(lockPath, JSON.stringify(lock));
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(`Took over the lock of a runner that is gone (pid ${zombie}`);
    expect((await repo.show(ids[0]!)).status).toBe('closed');
  });

  it('refuses a lock naming a live process that is no runner, and says which file to delete', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    // What an agent can write: a live pid, with its own start, so the lock reads as held.
    const { stranger, lockPath } = await lockNamingStranger(repo, epic, (pid, start) => ({
      pid,
      host: hostname(),
      started_at: new Date().toISOString(),
      epic,
      run_id: 'planted',
      pid_start: start,
    }));
    const refused = await repo.ralph([epic, '--agent', repo.agent]);
    expect(refused.exitCode, refused.stderr).toBe(8);
    expect(refused.stderr).toContain(`is already running epic ${epic}`);
    expect(refused.stderr).toContain(`pid ${stranger} runs ${process.execPath}, not ralph-loop`);
    expect(refused.stderr).toContain(`not ralph-loop: ${lockPath} was written by something else`);
    expect(isProcessAlive(stranger)).toBe(true);

    // Deleting it, as told, lets the next run go on.
    await rm(lockPath);
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await repo.show(ids[0]!)).status).toBe('closed');
  });

  it('refuses a second runner while the first lives, even after its lock file was deleted mid-run', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['slow', 'next']);
    const goAhead = join(repo.dir, '..', `go-${epic}`);
    onTestFinished(() => rm(goAhead, { force: true }));
    await repo.script({ [ids[0]!]: [[{ waitFor: goAhead }]], '*': [[]] });
    const first = startCli('ralph-loop', ['--store', 'embedded', epic, '--agent', repo.agent], {
      cwd: repo.dir,
      env: repo.env,
    });
    const agent = await waitFor(async () => (await repo.calls())[0]?.pid, 60_000, 'agent started');
    reap(agent);
    const lockPath = join(repo.dir, '.forge', 'epics', epic, 'ralph-loop.lock');
    await rm(lockPath);

    const second = await repo.ralph([epic, '--agent', repo.agent]);
    expect(second.exitCode, second.stderr).toBe(8);
    expect(second.stderr).toContain(`(pid ${first.pid} on ${hostname()}`);
    expect(second.stderr).toContain(`is already running epic ${epic}`);
    // The second runner reopened nothing and ran nothing: the first's bead is still its own.
    expect((await repo.show(ids[0]!)).status).toBe('in_progress');
    expect((await repo.calls()).map((call) => call.bead)).toEqual([ids[0]]);

    // `stop` finds it too, through its claim: the file it would read is gone.
    const stop = await repo.ralph(['stop', epic]);
    expect(stop.exitCode, stop.stderr).toBe(0);
    expect(stop.stderr).toContain(`Asked the loop of ${epic} (pid ${first.pid}) to stop`);

    await writeFile(goAhead, '');
    const done = await first;
    expect(done.exitCode, done.stderr).toBe(0);
    expect((await repo.calls()).map((call) => call.bead)).toEqual([ids[0]]);
    expect(existsSync(lockPath)).toBe(false);
    // The claim went with the runner: the next run goes ahead.
    expect((await repo.ralph([epic, '--agent', repo.agent])).exitCode).toBe(0);
    expect((await repo.calls()).map((call) => call.bead)).toEqual([ids[0], ids[1]]);
  });

  it('a second epic that commits in the same working tree is refused while the first commits there', async () => {
    const repo = await makeRepo();
    const first = await repo.epic(['slow']);
    const second = await repo.epic(['other']);
    const goAhead = join(repo.dir, '..', `go-${first.epic}`);
    onTestFinished(() => rm(goAhead, { force: true }));
    await repo.script({ [first.ids[0]!]: [[{ waitFor: goAhead }]], '*': [[]] });
    const running = startCli(
      'ralph-loop',
      ['--store', 'embedded', first.epic, '--agent', repo.agent, '--auto-commit'],
      { cwd: repo.dir, env: repo.env },
    );
    const agent = await waitFor(async () => (await repo.calls())[0]?.pid, 60_000, 'agent started');
    reap(agent);

    for (const flags of [['--auto-commit'], ['--parallel', '2']]) {
      const refused = await repo.ralph([second.epic, '--agent', repo.agent, ...flags]);
      expect(refused.exitCode, refused.stderr).toBe(8);
      expect(refused.stderr).toContain(`Another run that commits (epic ${first.epic}, pid ${running.pid}`);
      expect(refused.stderr).toContain(`ralph-loop ${second.epic} --worktree`);
    }
    expect((await repo.show(second.ids[0]!)).status).toBe('open');
    // One that commits nothing takes nobody's files: it runs.
    const plain = await repo.ralph([second.epic, '--agent', repo.agent]);
    expect(plain.exitCode, plain.stderr).toBe(0);

    await writeFile(goAhead, '');
    expect((await running).exitCode).toBe(0);
    expect(existsSync(join(repo.dir, '.git', 'forge-loop.lock'))).toBe(false);
  });

  it('ralph-loop stop with no runner live says so and leaves nothing to halt the next run', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a', 'b']);
    const stop = await repo.ralph(['stop', epic]);
    expect(stop.exitCode).toBe(0);
    expect(stop.stderr).toContain(`No runner is live for ${epic}; nothing to stop.`);
    // A mistyped epic is not "nothing to stop": the run the user meant may be going on.
    const typo = `${epic.slice(0, -1)}${epic.endsWith('x') ? 'y' : 'x'}`;
    const mistyped = await repo.ralph(['stop', typo]);
    expect(mistyped.exitCode).toBe(2);
    expect(mistyped.stderr).toContain(`There is no epic ${typo}; did you mean ${epic}?`);
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    for (const id of ids) expect((await repo.show(id)).status).toBe('closed');
  });

  it('logs for an epic with no runs names the nearest epic that has some, or those that do', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const none = await repo.ralph(['logs', epic]);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain(`hint: Start one with: ralph-loop ${epic}`);
    expect((await repo.ralph([epic, '--agent', repo.agent])).exitCode).toBe(0);

    const typo = `${epic.slice(0, -1)}${epic.endsWith('x') ? 'y' : 'x'}`;
    const mistyped = await repo.ralph(['logs', typo]);
    expect(mistyped.exitCode).toBe(1);
    expect(mistyped.stderr).toContain(`No runs recorded for ${typo}`);
    expect(mistyped.stderr).toContain(`hint: Did you mean ${epic}? See: ralph-loop logs ${epic}`);
    const other = await repo.ralph(['logs', 'qqqqqqqqqqqqqqqqqq']);
    expect(other.stderr).toContain(`hint: Epics with runs here: ${epic}. Or start this one:`);

    // A bead with no transcript is a wrong argument (exit 2): a mistyped one gets the nearest that has
    // one, the epic's own next id (a bead that may not have run) the list of those that have.
    const ran = ids[0]!;
    const typoBead = `x${ran}`;
    const wrongBead = await repo.ralph(['logs', epic, typoBead]);
    expect(wrongBead.exitCode).toBe(2);
    expect(wrongBead.stderr).toContain(`No transcript for ${typoBead}`);
    expect(wrongBead.stderr).toContain(`hint: Did you mean ${ran}? See: ralph-loop logs ${epic} ${ran}`);
    const notRun = await repo.ralph(['logs', epic, `${epic}.99`]);
    expect(notRun.exitCode).toBe(2);
    expect(notRun.stderr).toContain(
      `hint: Beads with transcripts: ${ran}. A bead that has not run yet has none.`,
    );
  });

  it('a mistyped command, extra words or a -C that names no directory: exit 2, saying which, running nothing', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const typo = await repo.ralph(['statsu', epic]);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain('ralph-loop has no command statsu; did you mean status?');
    expect(typo.stderr).toContain(`hint: ralph-loop status ${epic}`);

    const extra = await repo.ralph([epic, 'my-agent', '--agent', repo.agent]);
    expect(extra.exitCode).toBe(2);
    expect(extra.stderr).toContain(`it was given 2 arguments: ${epic} my-agent`);

    const missing = join(repo.dir, 'no-such-dir');
    for (const args of [
      ['-C', missing, epic],
      ['-C', missing, 'status', epic],
      ['status', epic, '-C', missing],
    ]) {
      const run = await repo.ralph(args);
      expect(run.exitCode, args.join(' ')).toBe(2);
      expect(run.stderr).toContain(`${missing} is not a directory`);
      expect(run.stderr).not.toContain('bead store');
    }
    const forge = await repo.forge(['-C', missing, 'doctor']);
    expect(forge.exitCode).toBe(2);
    expect(forge.stderr).toContain(`${missing} is not a directory`);

    expect(await repo.calls()).toEqual([]);
    expect((await repo.show(ids[0]!)).status).toBe('open');
  });

  it('an agent that runs ralph-loop stop on its own run is refused, and the run goes on', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a', 'b']);
    const said = join(repo.dir, '..', 'stop-said.txt');
    const stop = [process.execPath, BIN['ralph-loop'], '--store', 'embedded', 'stop', epic].join(' ');
    await repo.script({
      [ids[0]!]: [[{ exec: ['sh', '-c', `${stop} > ${said} 2>&1; echo "exit $?" >> ${said}`] }]],
      '*': [[]],
    });
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    const answer = await readFile(said, 'utf8');
    expect(answer).toContain(`ralph-loop stop ${epic} runs inside the run it would stop`);
    expect(answer).toMatch(/exit 2\n$/);
    for (const id of ids) expect((await repo.show(id)).status, answer).toBe('closed');
    expect(existsSync(join(repo.dir, '.forge', 'epics', epic, 'stop'))).toBe(false);
  });

  it('a stop request left from an earlier run is dropped with a warning, not obeyed', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const runDir = join(repo.dir, '.forge', 'epics', epic);
    await mkdir(runDir, { recursive: true });
    await writeFile(
      join(runDir, 'stop'),
      JSON.stringify({ requested_at: '2026-11-20T22:00:00.000Z', by: 'pid 17' }),
    );
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('Dropped a stop request');
    expect((await repo.show(ids[0]!)).status).toBe('closed');
    expect(existsSync(join(runDir, 'stop'))).toBe(false);
  });

  it('a folder where the stop file goes is dropped the same way, not the end of every run', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    // An agent's mkdir -p there: every run ended at once in "unexpected error: rm returned EISDIR".
    const stopDir = join(repo.dir, '.forge', 'epics', epic, 'stop', 'inner');
    await mkdir(stopDir, { recursive: true });
    await writeFile(join(stopDir, 'note.txt'), 'x\n');
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('Dropped a stop request');
    expect((await repo.show(ids[0]!)).status).toBe('closed');
    expect(existsSync(join(repo.dir, '.forge', 'epics', epic, 'stop'))).toBe(false);
  });

  it("a folder where the runner's lock or the store's lock goes: exit 3 naming it, the folder as it was, nothing run", async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const old = new Date(Date.now() - 3_600_000);
    for (const lock of [
      join(repo.dir, '.forge', 'epics', epic, 'ralph-loop.lock'),
      join(repo.dir, '.beads', 'forge-embedded.lock'),
    ]) {
      // Someone's folder, with a file in it, older than any lock a runner would take over.
      await mkdir(lock, { recursive: true });
      await writeFile(join(lock, 'note.txt'), 'mine\n');
      await utimes(lock, old, old);
      const run = await repo.ralph([epic, '--agent', repo.agent]);
      expect(run.exitCode, run.stderr).toBe(3);
      expect(run.stderr).toContain(`${lock} is a directory`);
      expect(run.stderr).not.toMatch(/unexpected error|report it/);
      expect(await readFile(join(lock, 'note.txt'), 'utf8')).toBe('mine\n');
      expect((await repo.show(ids[0]!)).status).toBe('open');
      await rm(lock, { recursive: true });
    }
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
  });

  it("a file where the runner's folders go (an agent's `touch .forge/epics`): exit 3 naming it, not an unexpected error", async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['a']);
    const epics = join(repo.dir, '.forge', 'epics');
    await rm(epics, { recursive: true, force: true });
    await mkdir(join(repo.dir, '.forge'), { recursive: true });
    await writeFile(epics, 'not a folder\n');
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toContain(`${epics} is a file, where a folder must be (ENOTDIR)`);
    expect(run.stderr).not.toMatch(/unexpected error|report it/);
    expect(await readFile(epics, 'utf8')).toBe('not a folder\n');
    expect((await repo.show(ids[0]!)).status).toBe('open');
  });
});

describe('a full disk', () => {
  /** A 4 MiB tmpfs, when this machine lets the tests mount one (root, mount allowed); else undefined. */
  async function smallDisk(): Promise<string | undefined> {
    if (process.getuid?.() !== 0) return undefined;
    const mountPoint = await mkdtemp(join(tmpdir(), 'forge-small-disk-'));
    const mounted = await execa('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint], {
      reject: false,
    });
    if (mounted.exitCode !== 0) {
      await rm(mountPoint, { recursive: true, force: true });
      return undefined;
    }
    onTestFinished(async () => {
      await execa('umount', ['-l', mountPoint], { reject: false });
      await rm(mountPoint, { recursive: true, force: true });
    });
    return mountPoint;
  }

  it('ENOSPC mid-run is one sentence and exit 3, not a stack trace; the store is intact for the rerun', async () => {
    const disk = await smallDisk();
    // Fails, never skips: a suite that quietly skips this would report green without a full disk tried.
    if (disk === undefined)
      throw new Error('This test needs root and `mount -t tmpfs` to make a 4 MB disk (CI runs as root).');
    const repo = await makeRepo('embedded', { under: disk });
    const { epic, ids } = await repo.epic(['a']);
    const filler = join(disk, 'filler');
    await writeFile(filler, Buffer.alloc(8 * 1024 * 1024)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOSPC') throw error;
    });
    const run = await repo.ralphProcess([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/disk is full/i);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.stderr).not.toContain('node:internal');

    await rm(filler);
    const rerun = await repo.ralph([epic, '--agent', repo.agent]);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect((await repo.show(ids[0]!)).status).toBe('closed');
  });
});

describe('ralph-loop once', () => {
  it("closes the epic when the bead was the epic's last open child, as a full run does", async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['first', 'last']);
    expect((await repo.beads(['close', ids[0]!])).exitCode).toBe(0);
    const run = await repo.ralphProcess(['once', ids[1]!, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await repo.show(ids[1]!)).status).toBe('closed');
    expect((await repo.show(epic)).status).toBe('closed');
  });
});
