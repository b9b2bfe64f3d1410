// ralph-loop --parallel as a user runs it: the built CLI, a temp git repo, the embedded store and the
// fake agent writing one file per bead in its worktree; kill -9 and stop in the middle of a run.
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { isProcessAlive } from '../../src/infra/pid.js';
import { assertBuilt, startCli, waitFor } from '../support/cli.js';
import { makeRepo, type Action, type Repo } from '../support/runner-repo.js';

beforeAll(assertBuilt);

const git = async (repo: Repo, ...args: string[]) =>
  (await execa('git', args, { cwd: repo.dir, env: repo.env })).stdout;

/** Every bead writes `<id>.txt` with its id; a first attempt takes `slowMs`, later ones are quick. */
async function scriptFiles(repo: Repo, ids: readonly string[], slowMs: number): Promise<void> {
  const plan: Record<string, Action[][]> = {};
  for (const id of ids) {
    const write: Action = { write: { path: `${id}.txt`, content: `${id}\n` } };
    plan[id] = [[{ sleepMs: slowMs }, write], [write]];
  }
  await repo.script(plan);
}

const landed = async (repo: Repo) =>
  (await git(repo, 'log', '--format=%(trailers:key=Forge-Bead,valueonly)'))
    .split('\n')
    .filter((line) => line !== '');

/** What every parallel run must leave: each bead closed, its file once, its commit once, nothing left over. */
async function expectAllLandedOnce(repo: Repo, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    expect((await repo.show(id)).status).toBe('closed');
    expect(await readFile(join(repo.dir, `${id}.txt`), 'utf8')).toBe(`${id}\n`);
  }
  expect((await landed(repo)).sort()).toEqual([...ids].sort());
  expect(await git(repo, 'status', '--porcelain', '--', '.', ':!.beads', ':!.forge')).toBe('');
  expect((await git(repo, 'worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
  expect(await git(repo, 'branch', '--list', 'forge/*')).toBe('');
}

describe('ralph-loop --parallel process', () => {
  it('runs plain beads side by side and lands each as one commit', async () => {
    const repo = await makeRepo('embedded');
    const { epic, ids } = await repo.epic(['one', 'two', 'three', 'four']);
    await scriptFiles(repo, ids, 800);
    const run = await repo.ralph([epic, '--agent', repo.agent, '--parallel', '3']);
    expect(run.exitCode, run.stderr).toBe(0);
    const cwds = (await repo.calls()).map((call) => call.cwd);
    expect(new Set(cwds).size).toBe(4);
    for (const cwd of cwds) expect(cwd).toContain(join('.git', 'forge', 'worktrees'));
    await expectAllLandedOnce(repo, ids);
  });

  it('refuses a bad --parallel with a clear error', async () => {
    const repo = await makeRepo('embedded');
    const { epic } = await repo.epic(['one']);
    for (const bad of ['0', 'two', '-1']) {
      const run = await repo.ralph([epic, '--agent', repo.agent, '--parallel', bad]);
      expect(run.exitCode).not.toBe(0);
      expect(run.stderr).toContain('--parallel');
    }
    const dirty = await repo.ralph([epic, '--agent', repo.agent, '--parallel', '2', '--allow-dirty']);
    expect(dirty.exitCode).toBe(2);
    expect(dirty.stderr).toContain('--parallel and --allow-dirty');
    expect(await repo.calls()).toEqual([]);
  });

  it('after kill -9 with several beads in flight, a rerun closes each once and lands each change once', async () => {
    const repo = await makeRepo('embedded');
    const { epic, ids } = await repo.epic(['a', 'b', 'c', 'd', 'e']);
    // The first bead is quick, so one result lands while the others are still running.
    const plan: Record<string, Action[][]> = {};
    for (const [index, id] of ids.entries()) {
      const write: Action = { write: { path: `${id}.txt`, content: `${id}\n` } };
      plan[id] = [[{ sleepMs: index === 0 ? 10 : 6_000 }, write], [write]];
    }
    await repo.script(plan);
    const first = startCli(
      'ralph-loop',
      ['--store', 'embedded', epic, '--agent', repo.agent, '--parallel', '3'],
      {
        cwd: repo.dir,
        env: repo.env,
      },
    );
    try {
      await waitFor(
        async () => {
          const started = new Set((await repo.calls()).map((call) => call.bead));
          return started.size >= 3 && (await landed(repo)).length >= 1 ? true : undefined;
        },
        60_000,
        'three beads started and one landed',
      );
    } finally {
      first.kill('SIGKILL');
      await first;
    }
    const rerun = await repo.ralphProcess([epic, '--agent', repo.agent, '--parallel', '3'], 120_000);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    await expectAllLandedOnce(repo, ids);
  });

  it('stop during a parallel run lets the beads in flight land and leaves the rest open', async () => {
    const repo = await makeRepo('embedded');
    const { epic, ids } = await repo.epic(['a', 'b', 'c', 'd', 'e']);
    await scriptFiles(repo, ids, 1_500);
    const run = startCli(
      'ralph-loop',
      ['--store', 'embedded', epic, '--agent', repo.agent, '--parallel', '2'],
      {
        cwd: repo.dir,
        env: repo.env,
      },
    );
    await waitFor(
      async () => (new Set((await repo.calls()).map((call) => call.bead)).size >= 2 ? true : undefined),
      60_000,
      'two beads started',
    );
    const status = await repo.ralph(['status', epic]);
    expect(status.stdout).toMatch(/[12] running: \S+/);
    expect((await repo.ralph(['stop', epic])).exitCode).toBe(0);
    const ended = await run;
    expect(String(ended.stderr)).toContain('stopped');
    const states = await Promise.all(ids.map(async (id) => (await repo.show(id)).status));
    const closed = ids.filter((_, index) => states[index] === 'closed');
    expect(closed.length).toBeGreaterThanOrEqual(2);
    expect(states.filter((state) => state !== 'closed' && state !== 'open')).toEqual([]);
    expect((await landed(repo)).sort()).toEqual([...closed].sort());
    for (const id of closed) expect(await readFile(join(repo.dir, `${id}.txt`), 'utf8')).toBe(`${id}\n`);
    // What was left open runs on the next run, and nothing runs twice.
    const rest = await repo.ralph([epic, '--agent', repo.agent, '--parallel', '2']);
    expect(rest.exitCode, rest.stderr).toBe(0);
    await expectAllLandedOnce(repo, ids);
  });

  it('a second Ctrl-C quits at once and kills every agent at work first, even ones that ignore SIGTERM', async () => {
    const repo = await makeRepo('embedded');
    const { epic } = await repo.epic(['stubborn-one', 'stubborn-two']);
    await repo.script({ '*': [[{ ignoreTerm: true }, { hang: true }]] });
    const run = startCli(
      'ralph-loop',
      ['--store', 'embedded', epic, '--agent', repo.agent, '--parallel', '2'],
      {
        cwd: repo.dir,
        env: repo.env,
      },
    );
    const agents = await waitFor(
      async () => {
        const pids = (await repo.calls()).map((call) => call.pid);
        return pids.length === 2 ? pids : undefined;
      },
      60_000,
      'both agents started',
    );
    for (const pid of agents) {
      onTestFinished(() => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 300)); // their SIGTERM handlers are in place
    run.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 300));
    run.kill('SIGINT');
    expect((await run).exitCode).toBe(130);
    for (const pid of agents) {
      await waitFor(async () => (!isProcessAlive(pid) ? true : undefined), 5_000, `agent ${pid} gone`);
    }
  });
});
