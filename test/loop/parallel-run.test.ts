// The parallel scheduler with in-memory ports: capacity, pick-order landing, beads that run alone,
// and a guard's veto, against a fake dispatcher and a fake integration branch.
import { describe, expect, it } from 'vitest';
import type { AttemptDispatcher, AttemptJob } from '../../src/loop/attempt-dispatch.js';
import type { Integration } from '../../src/loop/integration.js';
import type { BeadGuard, Executor } from '../../src/loop/types.js';
import { createHarness, ok } from './harness.js';

/** A dispatcher whose attempts end after `delay(job)` real ms, each with a commit named for its bead. */
function fakeDispatcher(capacity: number, delay: (job: AttemptJob) => number = () => 5) {
  const state = { running: 0, most: 0, jobs: [] as AttemptJob[] };
  const dispatcher: AttemptDispatcher = {
    kind: 'worktree',
    capacity,
    async run(job) {
      state.jobs.push(job);
      state.running += 1;
      state.most = Math.max(state.most, state.running);
      await new Promise((resolve) => setTimeout(resolve, delay(job)));
      state.running -= 1;
      return { ...ok(), commit: `commit-of-${job.bead.id}`, worker: 'local' };
    },
    recover: async () => [],
    close: async () => undefined,
  };
  return { dispatcher, state };
}

/** An integration branch as a list of applied commits. */
function fakeIntegration() {
  const applied: string[] = [];
  const integration: Integration = {
    head: async () => `head-${applied.length}`,
    apply: async (commit) => {
      applied.push(commit);
      return { ok: true, sha: `head-${applied.length}` };
    },
    undo: async () => {
      applied.pop();
    },
    parentOf: async () => `head-${applied.length - 1}`,
    landed: async () => undefined,
  };
  return { integration, applied };
}

describe('parallel scheduler', () => {
  it('keeps at most N beads in flight and lands them in pick order whatever finishes first', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b', 'c', 'd', 'e']);
    const slowFirst = (job: AttemptJob) => (job.bead.id === ids[0] ? 80 : 5);
    const { dispatcher, state } = fakeDispatcher(2, slowFirst);
    const { integration, applied } = fakeIntegration();
    const summary = await h.run({ epicId }, { dispatcher, integration });
    expect(summary).toMatchObject({ reason: 'done', beadsRun: 5, beadsClosed: 5 });
    expect(state.most).toBe(2);
    expect(applied).toEqual(ids.map((id) => `commit-of-${id}`));
    expect(h.requests).toEqual([]); // nothing ran in the tree
    const runsFinished = h.events.filter((e) => e.type === 'run_finished');
    expect(runsFinished).toHaveLength(1);
  });

  it('a bead of a role that does not write code waits for the beads in flight and runs alone in the tree', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b', 'judge it', 'c'], { priorities: [1, 1, 2, 3] });
    await h.store.addLabel(ids[2]!, 'role:judge');
    const { dispatcher, state } = fakeDispatcher(3, () => 30);
    const { integration, applied } = fakeIntegration();
    const inFlightWhenJudged: number[] = [];
    const judge: Executor = {
      kind: 'judge',
      writesCode: false,
      async execute() {
        inFlightWhenJudged.push(state.running);
        return ok('judged');
      },
    };
    const summary = await h.run(
      { epicId },
      {
        dispatcher,
        integration,
        executors: { resolve: (role) => (role === 'judge' ? judge : dispatcherOnly) },
      },
    );
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 4 });
    expect(inFlightWhenJudged).toEqual([0]);
    expect(state.jobs.map((job) => job.bead.id)).toEqual([ids[0], ids[1], ids[3]]);
    expect(applied).toHaveLength(3);
  });

  it("a guard's veto ends the run once, after the beads in flight finish", async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b', 'c']);
    const { dispatcher } = fakeDispatcher(2, () => 20);
    const { integration, applied } = fakeIntegration();
    const guard: BeadGuard = {
      start: async () => undefined,
      beforeBead: async (bead) =>
        bead.id === ids[2] ? { reason: 'needs_human', message: 'the guard says no' } : undefined,
      afterBead: async () => undefined,
      leftOpen: async () => undefined,
    };
    const summary = await h.run({ epicId }, { dispatcher, integration, guard });
    expect(summary).toMatchObject({ reason: 'needs_human', beadsRun: 2, beadsClosed: 2 });
    expect(applied).toHaveLength(2);
    expect((await h.store.show(ids[2]!)).status).toBe('open');
    expect(h.events.filter((e) => e.type === 'run_finished')).toHaveLength(1);
  });
});

/** The plain agent's executor: in a parallel run only the dispatcher calls it (here never). */
const dispatcherOnly: Executor = {
  kind: 'agent',
  writesCode: true,
  execute: () => Promise.reject(new Error('a plain bead ran in the tree')),
};
