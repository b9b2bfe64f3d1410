// Watching a plain epic as a user does: `ralph-loop status` and `logs --follow`, built CLI, temp repo,
// embedded store, a fake agent that sleeps, writes and fails.
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { readLockFile } from '../../src/infra/lock-file.js';
import {
  assertBuilt,
  BIN,
  ROOT,
  runCli,
  runCliInProcess,
  startCli,
  waitFor,
  type CliResult,
} from '../support/cli.js';
import { moduleTrace } from '../support/module-trace.js';
import { killAll, processesWithEnv } from '../support/tagged-processes.js';

const FAKE_AGENT = join(ROOT, 'test', 'support', 'fake-runner-agent.mjs');
/** The fake agent as the user's own command (`--agent "…"`): prompt on stdin, plain output. */
const AGENT = `${process.execPath} ${FAKE_AGENT}`;

type Action =
  { exit: number } | { sleepMs: number } | { waitFor: string } | { stdout: string } | { hang: true };

interface Repo {
  dir: string;
  env: Record<string, string>;
  script(plan: Record<string, Action[][]>): Promise<void>;
  calls(): Promise<{ bead: string; pid: number }[]>;
  forge(args: string[]): Promise<CliResult>;
  ralph(args: string[]): Promise<CliResult>;
  /** Starts a run of the epic in the background; killed (with its agent) when the test ends. */
  start(epic: string, extra?: string[]): ReturnType<typeof startCli>;
  epic(titles: string[], extra?: (index: number) => string[]): Promise<{ epic: string; ids: string[] }>;
  /** Waits until the runner's lock names this bead. */
  lockNames(epic: string, bead: string): Promise<void>;
}

async function makeRepo(): Promise<Repo> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-watch-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const work = join(dir, 'repo');
  await mkdir(work);
  const gitEnv = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  await execa('git', ['init', '-q', '-b', 'main'], { cwd: work, env: gitEnv });
  await execa(
    'git',
    ['-c', 'user.email=t@e.st', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init'],
    { cwd: work, env: gitEnv },
  );
  const scriptPath = join(dir, 'script.json');
  const logPath = join(dir, 'calls.jsonl');
  await writeFile(scriptPath, '{}');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    FAKE_RUNNER_SCRIPT: scriptPath,
    FAKE_RUNNER_LOG: logPath,
    ...gitEnv,
  };
  // The store's setup, in this process: what is under test here is the watching runner.
  const setup = (args: string[]) =>
    runCliInProcess('forge-pack', ['--store', 'embedded', 'beads', ...args], { cwd: work, env });
  const repo: Repo = {
    dir: work,
    env,
    script: (plan) => writeFile(scriptPath, JSON.stringify(plan)),
    async calls() {
      const text = await readFile(logPath, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { bead: string; pid: number });
    },
    forge: (args) => runCli('forge-pack', ['--store', 'embedded', ...args], { cwd: work, env }),
    ralph: (args) => runCli('ralph-loop', ['--store', 'embedded', ...args], { cwd: work, env }),
    start(epic, extra = []) {
      const run = startCli(
        'ralph-loop',
        ['--store', 'embedded', epic, '--agent', AGENT, '--backoff', '0', ...extra],
        { cwd: work, env },
      );
      onTestFinished(async () => {
        run.kill('SIGKILL');
        await run;
        // Its agent too, found by the log path in its environment: one that was still starting (reading
        // its prompt, not yet in the log) would otherwise write the log while the directory is removed.
        killAll(processesWithEnv('FAKE_RUNNER_LOG', logPath));
      });
      return run;
    },
    async epic(titles, extra) {
      const epic = (await setup(['create', 'Ship it', '-t', 'epic'])).stdout.trim();
      const ids: string[] = [];
      for (const [index, title] of titles.entries()) {
        const created = await setup(['create', title, '--parent', epic, ...(extra?.(index) ?? [])]);
        expect(created.exitCode, created.stderr).toBe(0);
        ids.push(created.stdout.trim());
      }
      return { epic, ids };
    },
    async lockNames(epic, bead) {
      const lockPath = join(work, '.forge', 'epics', epic, 'ralph-loop.lock');
      await waitFor(
        async () => ((await readLockFile(lockPath))?.bead === bead ? true : undefined),
        60_000,
        `the lock to name ${bead}`,
      );
    },
  };
  expect((await setup(['init'])).exitCode).toBe(0);
  return repo;
}

interface StatusJson {
  epic: string;
  title: string;
  counts: Record<string, number>;
  beads: { id: string; state: string }[];
  live: { bead: string | null; agent: string | null; pid: number; bead_elapsed_ms: number | null } | null;
  last_run: { run_id: string; state: string; reason: string | null; message: string | null } | null;
  failures: { bead: string; message: string; source: string }[];
}

async function statusJson(repo: Repo, epic: string): Promise<StatusJson> {
  const result = await repo.ralph(['status', epic, '--json']);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as StatusJson;
}

beforeAll(assertBuilt);

describe('ralph-loop status of a plain epic', () => {
  it('before any run: beads open and blocked, nothing live, no run yet', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['first', 'second']);
    expect((await repo.forge(['beads', 'dep', 'add', ids[1]!, ids[0]!])).exitCode).toBe(0);

    const status = await statusJson(repo, epic);
    expect(status).toMatchObject({ epic, title: 'Ship it', live: null, last_run: null, failures: [] });
    expect(status.counts).toMatchObject({ total: 2, done: 0, open: 1, blocked: 1, failed: 0 });
    expect(status.beads).toEqual([
      expect.objectContaining({ id: ids[0], state: 'open' }),
      expect.objectContaining({ id: ids[1], state: 'blocked' }),
    ]);

    const text = await repo.ralph(['status', epic]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain('2 in all: 0 done, 1 open, 0 in progress, 1 blocked, 0 failed');
    expect(text.stdout).toContain('not running');
    expect(text.stdout).toContain(`none yet (start one with: ralph-loop ${epic})`);
    expect(text.stdout).toContain(`blocked   ${ids[1]} "second"`);

    const unknown = await repo.ralph(['status', 'bd-nope']);
    expect(unknown.exitCode, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain('bd-nope has no autoresearch loop and is not a bead in the store');
  });

  it('during a run: the live bead, its agent and how long it has run', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['slow', 'after']);
    await repo.script({ [ids[0]!]: [[{ sleepMs: 60_000 }]], '*': [[]] });
    const run = repo.start(epic);
    await repo.lockNames(epic, ids[0]!);

    const status = await statusJson(repo, epic);
    expect(status.live).toMatchObject({ bead: ids[0], agent: AGENT, pid: run.pid });
    expect(status.live?.bead_elapsed_ms).toEqual(expect.any(Number));
    expect(status.counts).toMatchObject({ in_progress: 1, open: 1, done: 0 });
    expect(status.last_run).toMatchObject({ state: 'running', reason: null });

    const text = await repo.ralph(['status', epic]);
    expect(text.stdout).toContain(`now       running ${ids[0]} "slow" via ${AGENT} for `);
    expect(text.stdout).toContain(`pid ${run.pid}`);
  });

  it('after a failure: the failed bead with its last message, and the run that stopped', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['broken', 'fine']);
    await repo.script({ [ids[0]!]: [[{ stdout: 'compile error in parser.ts' }, { exit: 1 }]], '*': [[]] });
    const run = await repo.ralph([epic, '--agent', AGENT, '--max-attempts', '2', '--backoff', '0']);
    expect(run.exitCode).toBe(5);

    const status = await statusJson(repo, epic);
    expect(status.counts).toMatchObject({ total: 2, failed: 1 });
    expect(status.live).toBeNull();
    expect(status.last_run).toMatchObject({ state: 'finished', reason: 'failed' });
    expect(status.last_run?.message).toContain(`Bead ${ids[0]} failed 2 time(s)`);
    expect(status.failures).toHaveLength(1);
    expect(status.failures[0]).toMatchObject({ bead: ids[0], source: 'comment' });
    expect(status.failures[0]!.message).toContain('attempt 2');
    expect(status.failures[0]!.message).toContain('compile error in parser.ts');

    const text = await repo.ralph(['status', epic]);
    expect(text.stdout).toMatch(
      new RegExp(`failed {4}${ids[0]} "broken": ralph-loop attempt 2: .*compile error`),
    );
    expect(text.stdout).toMatch(/last run {2}\S+: failed/);
  });

  it('loads neither handlebars, the runner nor any agent', async () => {
    const repo = await makeRepo();
    const { epic } = await repo.epic(['one']);
    const trace = await moduleTrace(join(repo.dir, '..'));
    const child = await execa(
      process.execPath,
      [...trace.nodeArgs, BIN['ralph-loop'], 'status', epic, '--store', 'embedded'],
      { cwd: repo.dir, env: { NO_COLOR: '1', ...repo.env }, reject: false },
    );
    expect(child.exitCode, child.stderr).toBe(0);
    expect(child.stdout).toContain('1 in all');
    const loaded = (await trace.loaded()).join('\n');
    expect(loaded).toContain('cli/epic-status.js');
    expect(loaded).not.toMatch(/node_modules\/handlebars\//);
    // The executable's short status path: no program at all (not even commander's), so not the
    // runner's, its agents or its progress renderer.
    expect(loaded).toContain('cli/status-shortcut.js');
    expect(loaded).not.toMatch(/node_modules\/(commander|zod)\//);
    expect(loaded).not.toMatch(
      /dist\/(loop\/|agents\/(claude|codex|command|scripted|agent-process)|cli\/(progress|run-command|ralph-loop)\.js)/,
    );
  });
});

describe('ralph-loop logs --follow', () => {
  it('prints a live run as it happens, with the live bead transcript, and ends with the run', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['slow', 'quick']);
    // The first bead lasts until follow has shown it live, however long follow takes to start.
    const goAhead = join(repo.dir, '..', 'go-ahead');
    await repo.script({
      [ids[0]!]: [[{ stdout: 'thinking about slow' }, { waitFor: goAhead }, { stdout: 'slow is done' }]],
      [ids[1]!]: [[{ stdout: 'quick work' }]],
    });
    const run = repo.start(epic);
    await repo.lockNames(epic, ids[0]!);

    const follow = startCli('ralph-loop', ['--store', 'embedded', 'logs', epic, '--follow'], {
      cwd: repo.dir,
      env: repo.env,
    });
    let seen = '';
    follow.stdout.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    // The first bead is still sleeping: what follow shows now, it showed before the bead closed.
    await waitFor(async () => (seen.includes(`▶ ${ids[0]}`) ? true : undefined), 20_000, 'the live bead');
    expect(seen).not.toContain(`closed ${ids[0]}`);
    expect(await readLockFile(join(repo.dir, '.forge', 'epics', epic, 'ralph-loop.lock'))).toMatchObject({
      bead: ids[0],
    });
    await writeFile(goAhead, '');

    const ended = await Promise.race([
      follow,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`follow did not end with the run; it printed:\n${seen}`)), 30_000),
      ),
    ]);
    expect((await run).exitCode).toBe(0);
    expect(ended.exitCode, String(ended.stderr)).toBe(0);
    const out = String(ended.stdout);
    expect(String(ended.stderr)).toContain(`Following run`);
    // It ended on the run's run_finished, not by noticing the runner had gone.
    expect(String(ended.stderr)).not.toContain('gone without finishing');
    const order = [
      `▶ ${ids[0]}`,
      `${ids[0]} | thinking about slow`,
      `${ids[0]} | slow is done`,
      `✓ ${ids[0]} ok`,
      `closed ${ids[0]}`,
      `▶ ${ids[1]}`,
      `${ids[1]} | quick work`,
      `closed ${ids[1]}`,
      'stopped: done',
    ].map((text) => out.indexOf(text));
    expect(order, out).not.toContain(-1);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('--json prints the events as NDJSON and ends at run_finished', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['slow']);
    await repo.script({ [ids[0]!]: [[{ sleepMs: 1_500 }]] });
    const run = repo.start(epic);
    await repo.lockNames(epic, ids[0]!);
    const follow = await runCli('ralph-loop', ['--store', 'embedded', 'logs', epic, '--follow', '--json'], {
      cwd: repo.dir,
      env: repo.env,
      timeoutMs: 30_000,
    });
    expect(follow.exitCode, follow.stderr).toBe(0);
    expect(follow.stderr).not.toContain('gone without finishing');
    expect((await run).exitCode).toBe(0);
    const events = follow.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; bead?: string });
    expect(events[0]?.type).toBe('run_started');
    expect(events).toContainEqual(expect.objectContaining({ type: 'bead_closed', bead: ids[0] }));
    expect(events[events.length - 1]?.type).toBe('run_finished');
  });

  it('ends by itself when the runner is killed without finishing', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['stuck']);
    await repo.script({ [ids[0]!]: [[{ hang: true }]] });
    const run = repo.start(epic);
    await repo.lockNames(epic, ids[0]!);
    const follow = startCli('ralph-loop', ['--store', 'embedded', 'logs', epic, '--follow'], {
      cwd: repo.dir,
      env: repo.env,
    });
    let said = '';
    follow.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await waitFor(async () => (said.includes('Following run') ? true : undefined), 20_000, 'follow started');
    run.kill('SIGKILL');
    const ended = await follow;
    expect(ended.exitCode).toBe(0);
    expect(String(ended.stderr)).toContain('is gone without finishing it');
  });

  it('with no live run prints the last run and says so', async () => {
    const repo = await makeRepo();
    const { epic, ids } = await repo.epic(['one']);
    const none = await repo.ralph(['logs', epic, '--follow']);
    expect(none.exitCode).toBe(0);
    expect(none.stderr).toContain(`No run of ${epic} is live, and none is recorded yet`);

    expect((await repo.ralph([epic, '--agent', AGENT])).exitCode).toBe(0);
    const after = await repo.ralph(['logs', epic, '--follow']);
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.stdout).toContain(`closed ${ids[0]}`);
    expect(after.stdout).toContain('stopped: done');
    expect(after.stderr).toContain(`No run of ${epic} is live; above are the events of its last run`);
  });
});
