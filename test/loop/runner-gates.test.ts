// The runner's gates with in-memory ports and a scripted gate process: when they run, what a red one
// does to the attempt, the bead and the next prompt, labels and opt-outs, and the commit after them.
import { describe, expect, it } from 'vitest';
import type { GateProcess, GateProcessResult, GatesSettings } from '../../src/loop/gates.js';
import { FAILED_LABEL } from '../../src/loop/select.js';
import type { Executor, RunnerGit, LoopEvent } from '../../src/loop/types.js';
import { createHarness, ok } from './harness.js';

type Script = (argv: readonly string[], call: number) => Partial<GateProcessResult>;

/** A gate process that answers from a script and records every run (argv, cwd, timeout). */
function fakeGates(script: Script = () => ({})) {
  const runs: { argv: string[]; cwd: string; timeoutMs: number }[] = [];
  const port: GateProcess = {
    async run(argv, options) {
      runs.push({ argv: [...argv], cwd: options.cwd, timeoutMs: options.timeoutMs });
      return {
        exitCode: 0,
        timedOut: false,
        aborted: false,
        tail: '',
        durationMs: 5,
        ...script(argv, runs.length),
      };
    },
  };
  return { port, runs };
}

const settings: GatesSettings = {
  commands: [
    { name: 'test', argv: ['npm', 'test'], timeoutMs: 600_000 },
    { name: 'lint', argv: ['npm', 'run', 'lint'], timeoutMs: 30_000 },
  ],
};

const gateEvents = (events: LoopEvent[]) =>
  events.filter((e): e is Extract<LoopEvent, { type: 'gate_finished' }> => e.type === 'gate_finished');

describe('runner: gates', () => {
  it('runs every gate in the bead tree after a success, then closes the bead', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['feature']);
    const gates = fakeGates();
    const summary = await h.run({ epicId, gates: settings }, { gateProcess: gates.port });
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 1, gateMs: 10 });
    expect(gates.runs).toEqual([
      { argv: ['npm', 'test'], cwd: '/repo', timeoutMs: 600_000 },
      { argv: ['npm', 'run', 'lint'], cwd: '/repo', timeoutMs: 30_000 },
    ]);
    expect(gateEvents(h.events).map((e) => [e.bead, e.gate, e.ok, e.exit, e.duration_ms])).toEqual([
      [ids[0], 'test', true, 0, 5],
      [ids[0], 'lint', true, 0, 5],
    ]);
    expect((await h.store.show(ids[0]!)).status).toBe('closed');
  });

  it('a red gate fails the attempt: its report goes on the bead and into the next prompt, then it closes', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['fix it']);
    const gates = fakeGates((argv, call) =>
      call === 1 ? { exitCode: 1, tail: 'FAIL sum.test.js\nexpected 4, got 5' } : {},
    );
    const summary = await h.run({ epicId, gates: settings }, { gateProcess: gates.port });
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 1 });
    // The first red gate stops the rest: lint never ran on attempt 1.
    expect(gates.runs.map((r) => r.argv.join(' '))).toEqual(['npm test', 'npm test', 'npm run lint']);
    expect(h.requests.map((r) => r.attempt)).toEqual([1, 2]);
    expect(h.requests[0]!.feedback).toBeUndefined();
    const feedback = h.requests[1]!.feedback ?? '';
    expect(feedback).toContain('Gate test failed: exited 1.');
    expect(feedback).toContain('Command (argv): ["npm","test"]');
    expect(feedback).toContain('expected 4, got 5');
    const bead = await h.store.show(ids[0]!);
    expect(bead.status).toBe('closed');
    const comment = bead.comments.find((c) => c.text.includes('attempt 1'))?.text ?? '';
    expect(comment).toContain('gate test (npm test) exited 1');
    expect(comment).toContain('Exit code: 1');
    expect(comment).toContain('FAIL sum.test.js');
    const attempts = h.events.filter((e) => e.type === 'attempt_finished');
    expect(attempts.map((e) => e.outcome)).toEqual(['error', 'ok']);
    expect(gateEvents(h.events).map((e) => [e.attempt, e.gate, e.ok, e.exit])).toEqual([
      [1, 'test', false, 1],
      [2, 'test', true, 0],
      [2, 'lint', true, 0],
    ]);
  });

  it("a gate report reaches only the attempt after it: a rate-limit wait keeps it, a timeout's retry drops it", async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['flaky']);
    // Attempt 1 passes but a gate is red; attempt 2 is rate limited, then runs again and times out;
    // attempt 3 passes its gates.
    const outcomes = ['ok', 'rate_limited', 'timeout', 'ok'] as const;
    h.behaviours.set('flaky', (_request, call) => ({
      outcome: outcomes[call - 1] ?? 'ok',
      message: `call ${call}`,
      agent: 'fake',
    }));
    const gates = fakeGates((_argv, call) => (call === 1 ? { exitCode: 1, tail: 'expected 4, got 5' } : {}));
    const summary = await h.run({ epicId, gates: settings }, { gateProcess: gates.port });
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 1 });
    expect(h.requests.map((r) => r.attempt)).toEqual([1, 2, 2, 3]);
    const feedback = h.requests.map((r) => r.feedback);
    expect(feedback[0]).toBeUndefined();
    expect(feedback[1]).toContain('Gate test failed: exited 1.');
    expect(feedback[2]).toBe(feedback[1]);
    expect(feedback[3]).toBeUndefined();
  });

  it('a gate red on every attempt fails the bead with the gate as its message', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['never green']);
    const gates = fakeGates(() => ({ exitCode: 2, tail: 'lint error' }));
    const summary = await h.run({ epicId, maxAttempts: 2, gates: settings }, { gateProcess: gates.port });
    expect(summary.reason).toBe('failed');
    expect(summary.message).toBe('Bead ' + ids[0] + ' failed 2 time(s); last: gate test (npm test) exited 2');
    const bead = await h.store.show(ids[0]!);
    expect(bead.labels).toContain(FAILED_LABEL);
    expect(bead.status).toBe('open');
  });

  it('a gate that times out fails the attempt as killed; its timeout never passes the wall clock', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['hangs']);
    const gates = fakeGates(() => ({ exitCode: undefined, timedOut: true, tail: 'waiting…' }));
    const summary = await h.run(
      { epicId, maxAttempts: 1, wallClockMs: 120_000, gates: settings },
      { gateProcess: gates.port },
    );
    expect(summary.message).toContain('gate test (npm test) timed out after 120s and was killed');
    expect(gates.runs[0]!.timeoutMs).toBe(120_000);
    expect(gateEvents(h.events)[0]).toMatchObject({ ok: false, exit: null, timed_out: true });
  });

  it('a gate program that cannot start stops the run as an environment problem, the bead left open', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['no npm']);
    const gates = fakeGates(() => ({ exitCode: undefined, spawnError: 'spawn npm ENOENT' }));
    const summary = await h.run({ epicId, gates: settings }, { gateProcess: gates.port });
    expect(summary.reason).toBe('environment');
    const bead = await h.store.show(ids[0]!);
    expect(bead.labels).not.toContain(FAILED_LABEL);
    expect(bead.status).toBe('open');
  });

  it('an interrupt while a gate runs leaves the bead open, unlabelled, and ends the run as interrupted', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['interrupted']);
    const controller = new AbortController();
    const gates = fakeGates(() => {
      controller.abort();
      return { exitCode: undefined, aborted: true };
    });
    const summary = await h.run(
      { epicId, gates: settings, signal: controller.signal },
      { gateProcess: gates.port },
    );
    expect(summary.reason).toBe('interrupted');
    const bead = await h.store.show(ids[0]!);
    expect(bead.status).toBe('open');
    expect(bead.labels).not.toContain(FAILED_LABEL);
    // Not a failed attempt: no attempt comment, only the note that it was left open.
    expect(bead.comments.map((c) => c.text.slice(0, 36))).toEqual(['ralph-loop left this bead open (inte']);
    expect(h.requests).toHaveLength(1);
  });

  it('gates: labels pick gates, gates:none skips them, an unknown name fails the bead without an agent', async () => {
    const h = createHarness();
    const epic = await h.store.create({ title: 'E', type: 'epic' });
    const lintOnly = await h.store.create({
      title: 'lint only',
      parent: epic.id,
      labels: ['gates:lint'],
      priority: 0,
    });
    const none = await h.store.create({
      title: 'docs',
      parent: epic.id,
      labels: ['gates:none'],
      priority: 1,
    });
    const typo = await h.store.create({
      title: 'typo',
      parent: epic.id,
      labels: ['gates:tests'],
      priority: 2,
    });
    const gates = fakeGates();
    const summary = await h.run({ epicId: epic.id, gates: settings }, { gateProcess: gates.port });
    expect(gateEvents(h.events).map((e) => [e.bead, e.gate])).toEqual([[lintOnly.id, 'lint']]);
    expect((await h.store.show(none.id)).status).toBe('closed');
    expect(summary).toMatchObject({ reason: 'failed', beadId: typo.id });
    expect(summary.message).toContain('unknown gate tests; the configured gates are test, lint');
    expect(h.requests.map((r) => r.bead.title)).toEqual(['lint only', 'docs']);
    expect((await h.store.show(typo.id)).labels).toContain(FAILED_LABEL);
  });

  it('runs no gate without gates settings (--no-gates), nor after a failed attempt', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['plain', 'broken']);
    h.behaviours.set('broken', () => ({ outcome: 'error', message: 'crashed' }));
    const gates = fakeGates();
    await h.run({ epicId, maxAttempts: 1 }, { gateProcess: gates.port });
    await h.run({ epicId, maxAttempts: 1, gates: settings }, { gateProcess: gates.port });
    // The second run: "plain" is closed; "broken" is ralph:failed, its agent errs, no gate runs.
    expect(gates.runs).toEqual([]);
  });

  it('runs no gate for an executor that writes no code, or one that opts out', async () => {
    for (const executor of [
      { kind: 'judge', writesCode: false, execute: async () => ok() },
      { kind: 'doer', writesCode: true, runsGates: false, execute: async () => ok() },
    ] satisfies Executor[]) {
      const h = createHarness();
      const { epicId } = await h.epic(['x']);
      const gates = fakeGates(() => ({ exitCode: 1 }));
      const summary = await h.run(
        { epicId, gates: settings },
        { gateProcess: gates.port, executors: { resolve: () => executor } },
      );
      expect(summary.reason).toBe('done');
      expect(gates.runs).toEqual([]);
    }
  });

  it('with --auto-commit, commits only after the gates pass', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['commit me']);
    const order: string[] = [];
    const gates = fakeGates((_argv, call) => {
      order.push(`gate ${call}`);
      return call === 1 ? { exitCode: 1 } : {};
    });
    const git: RunnerGit = {
      operationInProgress: async () => undefined,
      indexLock: async () => undefined,
      dirtyPaths: async () => new Map(),
      commitChanges: async () => {
        order.push('commit');
        return { sha: 'abc123', leftOut: [] };
      },
    };
    await h.run({ epicId, autoCommit: true, gates: settings }, { gateProcess: gates.port, git });
    expect(order).toEqual(['gate 1', 'gate 2', 'gate 3', 'commit']);
  });
});
