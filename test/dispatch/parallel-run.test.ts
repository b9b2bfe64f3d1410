// `--parallel` runs end to end on real temp repositories: the in-memory store and clock of the runner
// harness, the worktree dispatcher, and the run's tree as the integration branch.
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRunnerGit } from '../../src/cli/runner-git.js';
import { createGitIntegration } from '../../src/dispatch/attempt-git.js';
import { createWorktreeDispatcher } from '../../src/dispatch/worktree-dispatcher.js';
import type { GateProcess } from '../../src/loop/gates.js';
import type {
  ExecutionRequest,
  ExecutionResult,
  Executor,
  LockHolder,
  LoopEvent,
} from '../../src/loop/types.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';
import { createHarness, type Harness } from '../loop/harness.js';

type Write = (request: ExecutionRequest) => Promise<void>;

/** What an attempt of the agent below may wait for before it writes, so concurrency is not left to timing. */
interface Waits {
  /** Settles once the first attempt of the bead titled `title` has written and returned. */
  finished(title: string): Promise<void>;
  /** Settles once `n` attempts have been running at the same time. */
  together(n: number): Promise<void>;
}

/**
 * An agent that appends a line to `<title>.txt` (or runs `write`), after a few milliseconds of real
 * time and whatever `waitFor` names.
 */
function fileAgent(
  options: {
    write?: Write;
    waitFor?: (request: ExecutionRequest, waits: Waits) => Promise<void> | undefined;
  } = {},
) {
  const seen: { title: string; attempt: number; cwd: string }[] = [];
  let running = 0;
  let most = 0;
  const latch = () => {
    let open = (): void => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { opened, open };
  };
  const finishedFirst = new Map<string, ReturnType<typeof latch>>();
  const finishedOf = (title: string) => {
    const known = finishedFirst.get(title) ?? latch();
    finishedFirst.set(title, known);
    return known;
  };
  const together = new Map<number, ReturnType<typeof latch>>();
  const togetherOf = (n: number) => {
    const known = together.get(n) ?? latch();
    together.set(n, known);
    if (most >= n) known.open();
    return known;
  };
  const waits: Waits = {
    finished: (title) => finishedOf(title).opened,
    together: (n) => togetherOf(n).opened,
  };
  const executor: Executor = {
    kind: 'agent',
    writesCode: true,
    async execute(request): Promise<ExecutionResult> {
      running += 1;
      most = Math.max(most, running);
      for (const [n, known] of together) if (most >= n) known.open();
      seen.push({ title: request.bead.title, attempt: request.attempt, cwd: request.cwd });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await options.waitFor?.(request, waits);
      const write: Write =
        options.write ?? ((r) => appendFile(join(r.cwd, `${r.bead.title}.txt`), `${r.bead.title}\n`));
      await write(request);
      running -= 1;
      if (request.attempt === 1) finishedOf(request.bead.title).open();
      return { outcome: 'ok', message: 'done', agent: 'fake' };
    },
  };
  return { executor, seen, most: () => most };
}

async function parallelRun(
  h: Harness,
  repo: TempRepo,
  epicId: string,
  executor: Executor,
  extra: { n?: number; gateProcess?: GateProcess; maxAttempts?: number } = {},
) {
  const executors = { resolve: () => executor };
  return h.run(
    {
      epicId,
      cwd: repo.dir,
      autoCommit: true,
      maxAttempts: extra.maxAttempts ?? 3,
      ...(extra.gateProcess === undefined
        ? {}
        : { gates: { commands: [{ name: 'check', argv: ['check'], timeoutMs: 60_000 }] } }),
    },
    {
      executors,
      git: await createRunnerGit({ cwd: repo.dir, env: repo.env }),
      dispatcher: createWorktreeDispatcher({
        repo: repo.dir,
        env: repo.env,
        capacity: extra.n ?? 3,
        executors,
      }),
      integration: createGitIntegration(repo.dir, repo.env),
      ...(extra.gateProcess === undefined ? {} : { gateProcess: extra.gateProcess }),
    },
  );
}

const trees = (repo: TempRepo) => repo.run('ls-tree', '-r', 'HEAD');
const beadTrailers = (repo: TempRepo) =>
  repo
    .run('log', '--format=%(trailers:key=Forge-Bead,valueonly)')
    .split('\n')
    .filter((line) => line !== '');
/** The lock a dead runner of `runId` left: the next run takes it over, and so knows whose results may have landed. */
const deadHolder = (epic: string, runId: string): LockHolder => ({
  pid: 999_999,
  host: 'test-host',
  started_at: '2026-01-01T00:00:00Z',
  epic,
  run_id: runId,
});
/**
 * Beads `landed` and `fresh`, both claimed by a run `old` that landed `landed`'s result as a commit and
 * died before closing it; the lock it leaves is `holder`'s.
 */
async function landedByDeadRun(holder: (epic: string) => LockHolder) {
  const repo = await createTempRepo();
  const h = createHarness();
  const { epicId, ids } = await h.epic(['landed', 'fresh']);
  for (const id of ids) await h.store.claim(id);
  h.lockState.holder = holder(epicId);
  await repo.write('landed.txt', 'landed\n');
  repo.run('add', 'landed.txt');
  repo.run(
    'commit',
    '-q',
    '-m',
    `ralph-loop: ${ids[0]} landed\n\nForge-Bead: ${ids[0]}\nForge-Attempt: old.${ids[0]}.1`,
  );
  return { repo, h, epicId, ids };
}
const ofType = <T extends LoopEvent['type']>(events: LoopEvent[], type: T) =>
  events.filter((e): e is Extract<LoopEvent, { type: T }> => e.type === type);

/** Four beads, the last depending on the first. */
async function epicOfFour(h: Harness) {
  const made = await h.epic(['alpha', 'beta', 'gamma', 'delta']);
  await h.store.addDependency(made.ids[3]!, made.ids[0]!);
  return made;
}

describe('ralph-loop --parallel', () => {
  it('ends with the same bead states and the same tree as a serial run, running beads side by side', async () => {
    const serialRepo = await createTempRepo();
    const serial = createHarness();
    const s = await epicOfFour(serial);
    const serialAgent = fileAgent();
    await serial.run(
      { epicId: s.epicId, cwd: serialRepo.dir, autoCommit: true },
      {
        executors: { resolve: () => serialAgent.executor },
        git: await createRunnerGit({ cwd: serialRepo.dir, env: serialRepo.env }),
      },
    );

    const repo = await createTempRepo();
    const h = createHarness();
    const p = await epicOfFour(h);
    // Each waits until two ran at once: a run that never does hangs here and fails.
    const agent = fileAgent({ waitFor: (_r, waits) => waits.together(2) });
    const summary = await parallelRun(h, repo, p.epicId, agent.executor);

    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 4 });
    expect(agent.most()).toBeGreaterThan(1);
    for (const cwd of agent.seen.map((entry) => entry.cwd)) expect(cwd).toContain(join('.git', 'forge'));
    const states = async (hh: Harness, ids: string[]) =>
      Promise.all(ids.map(async (id) => (await hh.store.show(id)).status));
    expect(await states(h, p.ids)).toEqual(await states(serial, s.ids));
    expect(trees(repo)).toBe(trees(serialRepo));
    expect(beadTrailers(repo).sort()).toEqual([...p.ids].sort());
    expect(repo.run('status', '--porcelain')).toBe('');
    expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(repo.run('branch', '--list', 'forge/*').trim()).toBe('');
    expect(
      ofType(h.events, 'merged')
        .map((e) => e.bead)
        .sort(),
    ).toEqual([...p.ids].sort());
  });

  it('lands results in pick order, not in the order they finish', async () => {
    const repo = await createTempRepo();
    const h = createHarness();
    const { epicId, ids } = await h.epic(['slow', 'quick', 'quicker']);
    // They finish in the reverse of pick order: each waits for the one picked after it.
    const after: Record<string, string> = { slow: 'quick', quick: 'quicker' };
    const agent = fileAgent({
      waitFor: (r, waits) => {
        const next = after[r.bead.title];
        return next === undefined ? undefined : waits.finished(next);
      },
    });
    await parallelRun(h, repo, epicId, agent.executor);
    // git log lists the newest first.
    expect(beadTrailers(repo)).toEqual([...ids].reverse());
    expect(ofType(h.events, 'merged').map((e) => e.bead)).toEqual(ids);
  });

  it('a result that conflicts with an earlier one is retried on the new head and lands', async () => {
    const repo = await createTempRepo({ 'shared.txt': 'base\n' });
    const h = createHarness();
    const { epicId, ids } = await h.epic(['first', 'second']);
    const agent = fileAgent({
      // Both start on the same head: the first writes only after the second has.
      waitFor: (r, waits) => (r.bead.title === 'first' ? waits.finished('second') : undefined),
      write: async (r) => {
        const path = join(r.cwd, 'shared.txt');
        const now = await readFile(path, 'utf8');
        await appendFile(path, now.includes('first') || r.bead.title === 'first' ? `${r.bead.title}\n` : '');
        if (r.bead.title === 'second' && !now.includes('first')) {
          await appendFile(path, 'second before first\n');
        }
      },
    });
    const summary = await parallelRun(h, repo, epicId, agent.executor);
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 2 });
    expect(await repo.read('shared.txt')).toBe('base\nfirst\nsecond\n');
    expect(ofType(h.events, 'merge_conflict').map((e) => [e.bead, e.attempt])).toEqual([[ids[1], 1]]);
    expect(agent.seen.filter((entry) => entry.title === 'second').map((entry) => entry.attempt)).toEqual([
      1, 2,
    ]);
    const second = await h.store.show(ids[1]!);
    expect(second.comments.map((c) => c.text).join('\n')).toContain('Merge conflict in shared.txt');
  });

  it('a conflict on the last attempt fails the bead with the conflict in its comment', async () => {
    const repo = await createTempRepo({ 'shared.txt': 'base\n' });
    const h = createHarness();
    const { epicId, ids } = await h.epic(['first', 'second']);
    const agent = fileAgent({
      waitFor: (r, waits) => (r.bead.title === 'first' ? waits.finished('second') : undefined),
      write: (r) => appendFile(join(r.cwd, 'shared.txt'), `${r.bead.title}\n`),
    });
    const summary = await parallelRun(h, repo, epicId, agent.executor, { maxAttempts: 1 });
    expect(summary).toMatchObject({ reason: 'failed', beadsClosed: 1 });
    expect(await repo.read('shared.txt')).toBe('base\nfirst\n');
    expect(beadTrailers(repo)).toEqual([ids[0]]);
    const second = await h.store.show(ids[1]!);
    expect(second.status).toBe('open');
    expect(second.comments.map((c) => c.text).join('\n')).toContain('Merge conflict in shared.txt');
    expect(repo.run('status', '--porcelain')).toBe('');
  });

  it('a red gate on the merged result undoes it: the integration branch never holds it', async () => {
    const repo = await createTempRepo();
    const h = createHarness();
    const { epicId, ids } = await h.epic(['good', 'bad']);
    const agent = fileAgent();
    const gateProcess: GateProcess = {
      async run(_argv, options) {
        const bad = await readFile(join(options.cwd, 'bad.txt'), 'utf8').catch(() => '');
        return {
          exitCode: bad === '' ? 0 : 1,
          timedOut: false,
          aborted: false,
          tail: 'bad.txt is bad',
          durationMs: 1,
        };
      },
    };
    const summary = await parallelRun(h, repo, epicId, agent.executor, { gateProcess, maxAttempts: 2 });
    expect(summary).toMatchObject({ reason: 'failed', beadsClosed: 1 });
    expect(agent.seen.filter((entry) => entry.title === 'bad')).toHaveLength(2);
    expect(beadTrailers(repo)).toEqual([ids[0]]);
    expect(await repo.exists('bad.txt')).toBe(false);
    expect((await h.store.show(ids[1]!)).comments.map((c) => c.text).join('\n')).toContain('bad.txt is bad');
  });

  it('a bead whose result landed before its runner died is closed on that commit, never applied twice', async () => {
    // The dead run: both claimed; `landed`'s commit made on the branch, the bead not yet closed.
    const { repo, h, epicId, ids } = await landedByDeadRun((epic) => deadHolder(epic, 'old'));
    const agent = fileAgent();
    const summary = await parallelRun(h, repo, epicId, agent.executor);
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 2 });
    expect(agent.seen.map((entry) => entry.title)).toEqual(['fresh']);
    expect(await repo.read('landed.txt')).toBe('landed\n');
    expect(beadTrailers(repo).filter((id) => id === ids[0])).toHaveLength(1);
    expect((await h.store.show(ids[0]!)).status).toBe('closed');
  });

  it('a result that landed two takeovers back is found: each lock names the runs whose work it took on', async () => {
    // Run `old` landed the result and died; run `middle` took its lock over and died before closing it.
    const { repo, h, epicId, ids } = await landedByDeadRun((epic) => ({
      ...deadHolder(epic, 'middle'),
      recovered: ['old'],
    }));
    const agent = fileAgent();
    const lockSeen: (string[] | undefined)[] = [];
    const executor: Executor = {
      ...agent.executor,
      execute: (request) => {
        lockSeen.push(h.lockState.holder?.recovered);
        return agent.executor.execute(request);
      },
    };
    const summary = await parallelRun(h, repo, epicId, executor);
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 2 });
    expect(agent.seen.map((entry) => entry.title)).toEqual(['fresh']);
    expect(beadTrailers(repo).filter((id) => id === ids[0])).toHaveLength(1);
    // This run's lock names the line, for the next one should it die too.
    expect(lockSeen).toEqual([['middle', 'old']]);
  });

  it.each([
    [
      'a commit of its earlier life (closed, reverted, reopened) is not its result: the redo runs',
      'older',
      'old',
    ],
    [
      'with no lock left to name the dead run, nothing is taken for its result: the bead runs again',
      'old',
      undefined,
    ],
  ])('%s', async (_, commitRun, deadRun) => {
    const repo = await createTempRepo();
    const h = createHarness();
    const { epicId, ids } = await h.epic(['redo']);
    const id = ids[0]!;
    // Its first life: landed as run `commitRun`, then the user reverted the commit and reopened the bead.
    await repo.write('redo.txt', 'first\n');
    repo.run('add', 'redo.txt');
    repo.run(
      'commit',
      '-q',
      '-m',
      `ralph-loop: ${id} redo\n\nForge-Bead: ${id}\nForge-Attempt: ${commitRun}.${id}.1`,
    );
    repo.run('revert', '--no-edit', 'HEAD');
    // The redo's runner claimed it and died before its result landed.
    await h.store.claim(id);
    if (deadRun !== undefined) h.lockState.holder = deadHolder(epicId, deadRun);
    const agent = fileAgent();
    const summary = await parallelRun(h, repo, epicId, agent.executor);
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 1 });
    expect(agent.seen.map((entry) => entry.title)).toEqual(['redo']);
    expect(await repo.exists('redo.txt')).toBe(true);
    expect(beadTrailers(repo).filter((trailer) => trailer === id)).toHaveLength(2);
  });

  it('each agent at work is known by its process group until its attempt ends, for a quit that cannot wait', async () => {
    const repo = await createTempRepo();
    const h = createHarness();
    const { epicId } = await h.epic(['alpha', 'beta', 'gamma']);
    const live = new Set<number>();
    const seenLive: number[][] = [];
    let next = 5000;
    const executor: Executor = {
      kind: 'agent',
      writesCode: true,
      async execute(request): Promise<ExecutionResult> {
        request.onSpawn?.((next += 1));
        await new Promise((resolve) => setTimeout(resolve, 100));
        seenLive.push([...live].sort());
        await appendFile(join(request.cwd, `${request.bead.title}.txt`), 'x\n');
        return { outcome: 'ok', message: 'done', agent: 'fake' };
      },
    };
    const executors = { resolve: () => executor };
    const summary = await h.run(
      { epicId, cwd: repo.dir, autoCommit: true },
      {
        executors,
        git: await createRunnerGit({ cwd: repo.dir, env: repo.env }),
        dispatcher: createWorktreeDispatcher({ repo: repo.dir, env: repo.env, capacity: 3, executors }),
        integration: createGitIntegration(repo.dir, repo.env),
        agentGroups: live,
      },
    );
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 3 });
    // Three agents worked side by side, each seen while the others were still at work.
    expect(seenLive.some((pids) => pids.length > 1)).toBe(true);
    expect(seenLive.every((pids) => pids.length > 0)).toBe(true);
    expect([...live]).toEqual([]);
  });
});
