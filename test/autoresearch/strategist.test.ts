// The strategist executor over a loop held in memory: it reads only loop state and beads, so no git
// tree and no temp directory (test/autoresearch/executors.test.ts keeps the executors that need git).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLoopConfig } from '../../src/autoresearch/config.js';
import type { AutoresearchContext } from '../../src/autoresearch/executors/context.js';
import { createAutoresearchExecutors } from '../../src/autoresearch/executors/index.js';
import { createLoopIdleProbe } from '../../src/autoresearch/idle-probe.js';
import { readIterationState } from '../../src/autoresearch/iteration-state.js';
import { readSpend } from '../../src/autoresearch/spend.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import { createGit } from '../../src/infra/git.js';
import type { ExecutionRequest, ExecutionResult, Executor } from '../../src/loop/types.js';
import { createFakeClock } from '../support/fake-clock.js';
import { createMemoryLoopFiles, type MemoryLoopFiles } from '../support/memory-loop-files.js';

const REPO = '/work/repo';
const WORKSPACE = join(REPO, '.autoresearch');

type Behaviour = (request: ExecutionRequest) => Promise<ExecutionResult> | ExecutionResult;

interface MemoryLoop {
  files: MemoryLoopFiles;
  context: AutoresearchContext;
  strategist: Executor;
  epicId: string;
  agent: { behaviour: Behaviour; calls: number };
  request(iter: number): ExecutionRequest;
}

async function memoryLoop(): Promise<MemoryLoop> {
  const files = createMemoryLoopFiles();
  const store = createMemoryBeadStore();
  const epicId = (await store.create({ title: 'autoresearch: value', type: 'epic' })).id;
  const config = parseLoopConfig(
    {
      subject: 'value',
      epic_id: epicId,
      metric: { type: 'hard', command: 'node scripts/score.js', score: { from: 'exit-code' } },
      scope: { doer_paths: ['src/'] },
      caps: { max_iterations: 10, plateau_threshold: 3 },
    },
    'config.json',
  );
  const done: Behaviour = () => ({ outcome: 'ok', message: 'done' });
  const agent = { behaviour: done, calls: 0 };
  const fake: Executor = {
    kind: 'agent',
    writesCode: true,
    async execute(request) {
      agent.calls += 1;
      return agent.behaviour(request);
    },
  };
  const context: AutoresearchContext = {
    repo: REPO,
    workspace: WORKSPACE,
    files,
    config,
    store,
    // No repository at REPO: a strategist that reached for git would fail the test.
    git: createGit({ cwd: REPO, env: {} }),
    clock: createFakeClock(),
    agents: { full: fake, readOnly: fake },
    runMetric: () => Promise.reject(new Error('a strategist runs no metric')),
  };
  const strategist = createAutoresearchExecutors(context).strategist;
  if (strategist === undefined) throw new Error('no strategist executor');
  const request = (iter: number): ExecutionRequest => ({
    bead: {
      id: `${epicId}.s${iter}`,
      title: `strategist-${iter}: value`,
      status: 'in_progress',
      priority: 2,
      issue_type: 'task',
      created_at: '2026-11-22T10:00:00Z',
      updated_at: '2026-11-22T10:00:00Z',
      labels: ['role:strategist', `iter:${iter}`],
    },
    epicId,
    role: 'strategist',
    agentSpec: 'fake',
    agentFromLabel: false,
    attempt: 1,
    cwd: REPO,
    signal: new AbortController().signal,
    timeoutMs: 60_000,
    transcriptPath: join(WORKSPACE, 'logs', 'strategist.log'),
  });
  return { files, context, strategist, epicId, agent, request };
}

describe('strategist executor (loop state in memory)', () => {
  it('fails (to be retried once) when it neither stamped, nor wrote a retrospective, nor asked the user', async () => {
    const loop = await memoryLoop();
    expect(loop.strategist.maxAttempts).toBe(2);
    const result = await loop.strategist.execute(loop.request(1));
    expect(result.outcome).toBe('error');
    expect(result.message).toContain(`forge-pack stamp --epic ${loop.epicId} --iter 2`);
    expect(loop.agent.calls).toBe(1);
  });

  it('succeeds when it stamped the next iteration, and books its cost to the next iteration and the spend', async () => {
    const loop = await memoryLoop();
    loop.agent.behaviour = async () => {
      for (const role of ['doer', 'judge', 'arbiter', 'strategist'])
        await loop.context.store.create({
          title: `${role}-2`,
          parent: loop.epicId,
          labels: [`role:${role}`, 'iter:2'],
        });
      return { outcome: 'ok', message: 'stamped', costUsd: 0.25 };
    };
    const result = await loop.strategist.execute(loop.request(1));
    expect(result).toMatchObject({ outcome: 'ok', closeReason: 'strategist-1: stamped iteration 2' });
    expect((await readIterationState(loop.files, WORKSPACE, 2)).costs).toEqual({ strategist: 0.25 });
    expect((await readSpend(loop.files, WORKSPACE)).cost_usd).toBe(0.25);
  });

  it('opens again the loop beads it closed, those it stamped included, and records them as its tamper', async () => {
    const loop = await memoryLoop();
    const store = loop.context.store;
    const child = (title: string, labels: string[]) => store.create({ title, parent: loop.epicId, labels });
    const doer1 = await child('doer-1', ['role:doer', 'iter:1']);
    await store.close(doer1.id, 'done by the runner');
    const arbiter1 = await child('arbiter-1', ['role:arbiter', 'iter:1']);
    const other = await child('a note', []);
    loop.agent.behaviour = async () => {
      // Stamps iteration 2, then closes its judge and arbiter, and an older bead: the doer's change
      // would stand in the tree unjudged.
      await child('doer-2', ['role:doer', 'iter:2']);
      const judge2 = await child('judge-2', ['role:judge', 'iter:2']);
      const arbiter2 = await child('arbiter-2', ['role:arbiter', 'iter:2']);
      await child('strategist-2', ['role:strategist', 'iter:2']);
      for (const bead of [judge2, arbiter2, arbiter1]) await store.close(bead.id, 'done');
      return { outcome: 'ok', message: 'stamped' };
    };
    const activity: string[] = [];
    const result = await loop.strategist.execute({ ...loop.request(1), onActivity: (a) => activity.push(a) });
    expect(result).toMatchObject({ outcome: 'ok', closeReason: 'strategist-1: stamped iteration 2' });
    const statuses = new Map((await store.children(loop.epicId)).map((b) => [b.title, b.status]));
    expect(Object.fromEntries(statuses)).toEqual({
      'doer-1': 'closed',
      'arbiter-1': 'open',
      'a note': 'open',
      'doer-2': 'open',
      'judge-2': 'open',
      'arbiter-2': 'open',
      'strategist-2': 'open',
    });
    expect(result.tampered).toHaveLength(3);
    expect(result.tampered?.join(' ')).toMatch(/\(judge-2\).*\(arbiter-2\)|\(arbiter-2\).*\(judge-2\)/);
    expect(activity.join('\n')).toMatch(/^tamper: the strategist closed .*; opened again$/m);
    const tamper = (await readIterationState(loop.files, WORKSPACE, 2)).tamper;
    expect(tamper).toEqual([
      {
        role: 'strategist',
        paths: expect.arrayContaining([expect.stringMatching(/\(arbiter-1\)$/)]),
        what: 'closed beads of the loop',
      },
    ]);
    expect(other.status).toBe('open');
  });

  it('fails (to be retried once) when it stamped the next iteration only in part, naming what is missing', async () => {
    // Seen: a stamp killed after doer-2 was made; the loop ran doer-2 and closed the epic as done.
    const loop = await memoryLoop();
    loop.agent.behaviour = async () => {
      await loop.context.store.create({
        title: 'doer-2',
        parent: loop.epicId,
        labels: ['role:doer', 'iter:2'],
      });
      await loop.context.store.create({
        title: 'judge-2',
        parent: loop.epicId,
        labels: ['role:judge', 'iter:2'],
      });
      return { outcome: 'ok', message: 'stamped' };
    };
    const result = await loop.strategist.execute(loop.request(1));
    expect(result.outcome).toBe('error');
    expect(result.message).toBe(
      `strategist for iteration 1 stamped iteration 2 only in part (no arbiter-2, strategist-2): forge-pack stamp --epic ${loop.epicId} --iter 2 makes the missing beads.`,
    );
  });

  it('a doer stamped for another iteration is not the next step', async () => {
    const loop = await memoryLoop();
    loop.agent.behaviour = async () => {
      await loop.context.store.create({
        title: 'doer-5',
        parent: loop.epicId,
        labels: ['role:doer', 'iter:5'],
      });
      return { outcome: 'ok', message: 'stamped the wrong one' };
    };
    expect((await loop.strategist.execute(loop.request(1))).outcome).toBe('error');
  });

  it('succeeds when it asked the user, and the idle probe then says a human is needed', async () => {
    const loop = await memoryLoop();
    loop.agent.behaviour = async () => {
      await loop.files.writeText(join(WORKSPACE, 'needs-human.md'), '# Question\nTrade memory for speed?\n');
      return { outcome: 'ok', message: 'asked' };
    };
    const result = await loop.strategist.execute(loop.request(1));
    expect(result).toMatchObject({
      outcome: 'ok',
      closeReason: 'strategist-1: asked the user (needs-human.md)',
    });
    const probe = await createLoopIdleProbe({ repo: REPO, workspace: WORKSPACE, files: loop.files }).explain(
      loop.epicId,
    );
    expect(probe).toMatchObject({ reason: 'needs_human' });
    expect(probe?.detail).toContain(`ralph-loop resume ${loop.epicId}`);
  });
});
