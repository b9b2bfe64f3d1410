// Core runner behaviour with in-memory ports: order, retries, limits, caps, recovery, stops.
import { describe, expect, it, vi } from 'vitest';
import { LockedError } from '../../src/loop/runner.js';
import { FAILED_LABEL } from '../../src/loop/select.js';
import type { BeadGuard, ExecutionResult, LoopEvent } from '../../src/loop/types.js';
import { createHarness, ok } from './harness.js';

const closedOrder = (events: LoopEvent[]) =>
  events.filter((e) => e.type === 'bead_closed').map((e) => (e as { bead: string }).bead);

describe('runner: selection and order', () => {
  it('runs every bead in dependency order, closes them, then closes the epic', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b', 'c']);
    const [a, b, c] = ids as [string, string, string];
    // a is oldest but waits for c, so the order is b, c, a.
    await h.store.addDependency(a, c);
    const summary = await h.run({ epicId });
    expect(summary).toMatchObject({ reason: 'done', beadsRun: 3, beadsClosed: 3 });
    expect(closedOrder(h.events)).toEqual([b, c, a]);
    expect((await h.store.show(epicId)).status).toBe('closed');
    for (const id of ids) expect((await h.store.show(id)).status).toBe('closed');
  });

  it('picks by priority, then creation time, then id, and never runs the epic itself', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['old-low', 'new-high', 'mid'], { priorities: [3, 0, 2] });
    await h.run({ epicId });
    expect(closedOrder(h.events)).toEqual([ids[1], ids[2], ids[0]]);
    expect(h.requests.map((r) => r.bead.id)).not.toContain(epicId);
  });

  it('routes by role label and picks the agent from the agent label, role default, then run default', async () => {
    const h = createHarness();
    const epic = await h.store.create({ title: 'E', type: 'epic' });
    await h.store.create({ title: 'labelled', parent: epic.id, labels: ['role:doer', 'agent:claude-opus'] });
    await h.store.create({ title: 'judge', parent: epic.id, labels: ['role:judge'] });
    await h.store.create({ title: 'plain', parent: epic.id });
    await h.run({
      epicId: epic.id,
      agents: {
        commandLine: { roles: {} },
        config: { judge: 'claude-haiku', default: 'codex' },
        builtin: 'claude',
      },
    });
    const byTitle = Object.fromEntries(
      h.requests.map((r) => [
        r.bead.title,
        { role: r.role, agent: r.agentSpec, fromLabel: r.agentFromLabel },
      ]),
    );
    expect(byTitle).toEqual({
      labelled: { role: 'doer', agent: 'claude-opus', fromLabel: true },
      judge: { role: 'judge', agent: 'claude-haiku', fromLabel: false },
      plain: { role: 'default', agent: 'codex', fromLabel: false },
    });
  });

  it("runs what the command line names over a bead's label, and never as a label", async () => {
    const h = createHarness();
    const epic = await h.store.create({ title: 'E', type: 'epic' });
    await h.store.create({ title: 'doer', parent: epic.id, labels: ['role:doer', 'agent:claude-opus'] });
    await h.store.create({ title: 'judge', parent: epic.id, labels: ['role:judge', 'agent:claude-haiku'] });
    await h.run({
      epicId: epic.id,
      agents: {
        commandLine: { roles: { judge: 'codex' }, all: 'my-agent --flag' },
        config: { doer: 'claude-sonnet' },
        builtin: 'claude',
      },
    });
    const byTitle = Object.fromEntries(
      h.requests.map((r) => [r.bead.title, { agent: r.agentSpec, fromLabel: r.agentFromLabel }]),
    );
    expect(byTitle).toEqual({
      doer: { agent: 'my-agent --flag', fromLabel: false },
      judge: { agent: 'codex', fromLabel: false },
    });
  });

  it('runs 200 beads with in-memory ports, each exactly once', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(Array.from({ length: 200 }, (_, i) => `bead ${i}`));
    const summary = await h.run({ epicId });
    expect(summary.beadsClosed).toBe(200);
    expect(new Set(h.requests.map((r) => r.bead.id)).size).toBe(200);
    expect(h.requests).toHaveLength(200);
    expect(closedOrder(h.events)).toEqual(ids);
  });

  it('runs only the named bead with once', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b']);
    const summary = await h.run({ epicId, onlyBead: ids[1] });
    expect(summary.reason).toBe('done');
    expect(h.requests.map((r) => r.bead.id)).toEqual([ids[1]]);
    expect((await h.store.show(ids[0]!)).status).toBe('open');
  });
});

describe('runner: failures and retries', () => {
  it('retries a failing bead with backoff, then labels it ralph:failed, leaves it open and stops', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['broken', 'after']);
    h.behaviours.set('broken', () => ({ outcome: 'error', message: 'tests still fail', exitCode: 1 }));
    const summary = await h.run({ epicId, maxAttempts: 3, backoffMs: 1000 });
    expect(summary).toMatchObject({ reason: 'failed', beadId: ids[0] });
    const bead = await h.store.show(ids[0]!);
    expect(bead.status).toBe('open');
    expect(bead.labels).toContain(FAILED_LABEL);
    expect(bead.comments.filter((c) => c.text.includes('attempt'))).toHaveLength(3);
    expect(bead.comments[0]!.text).toContain('tests still fail');
    expect(h.requests.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(h.clock.sleeps).toEqual([1000, 2000]);
    expect(h.requests.some((r) => r.bead.title === 'after')).toBe(false);
  });

  it('succeeds on a later attempt and clears an old ralph:failed label', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['flaky']);
    await h.store.addLabel(ids[0]!, FAILED_LABEL);
    h.behaviours.set('flaky', (_r, call) =>
      call === 1 ? { outcome: 'timeout', message: 'timed out' } : ok(),
    );
    const summary = await h.run({ epicId });
    expect(summary.reason).toBe('done');
    const bead = await h.store.show(ids[0]!);
    expect(bead.status).toBe('closed');
    expect(bead.labels).not.toContain(FAILED_LABEL);
  });

  it('fails at once, without retries, when retrying cannot help', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['unknown agent']);
    h.behaviours.set('unknown agent', () => ({
      outcome: 'error',
      fatal: true,
      message: 'unknown agent "gpt"',
    }));
    const summary = await h.run({ epicId });
    expect(summary.reason).toBe('failed');
    expect(h.requests).toHaveLength(1);
  });

  it('treats a thrown executor error as a failed attempt', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['throws']);
    h.behaviours.set('throws', () => {
      throw new Error('boom');
    });
    const summary = await h.run({ epicId, maxAttempts: 2 });
    expect(summary.reason).toBe('failed');
    expect(summary.message).toContain('boom');
  });

  it('stops at once on an authentication failure and leaves the bead open', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['needs key', 'other']);
    h.behaviours.set('needs key', () => ({ outcome: 'auth', message: 'Invalid API key' }));
    const summary = await h.run({ epicId });
    expect(summary.reason).toBe('auth');
    expect(summary.message).toContain('Invalid API key');
    expect(h.requests).toHaveLength(1);
    expect((await h.store.show(ids[0]!)).status).toBe('open');
    expect((await h.store.show(ids[0]!)).labels).not.toContain(FAILED_LABEL);
  });

  it('carries the hint of the result that stopped it to the summary; without one, the summary has none', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['asks', 'other']);
    h.behaviours.set('asks', () => ({
      outcome: 'needs_human',
      message: 'Stage "spec" waits; then run: ralph-loop bd-p',
      hint: '',
    }));
    expect(await h.run({ epicId })).toMatchObject({ reason: 'needs_human', hint: '' });
    h.behaviours.set('asks', () => ({ outcome: 'needs_human', message: 'A question.' }));
    expect(await h.run({ epicId })).not.toHaveProperty('hint');
  });
});

describe('runner: rate limits and overload', () => {
  it('waits until a known reset time, without spending an attempt, then continues', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['limited']);
    const resetAt = h.clock.now() + 3_600_000;
    h.behaviours.set('limited', (_r, call) =>
      call === 1 ? { outcome: 'rate_limited', message: 'usage limit', resetAt } : ok(),
    );
    const summary = await h.run({ epicId, maxAttempts: 1 });
    expect(summary.reason).toBe('done');
    expect((await h.store.show(ids[0]!)).status).toBe('closed');
    // One wait, slept in steps that look for a stop request between them.
    const slept = h.clock.sleeps.reduce((sum, ms) => sum + ms, 0);
    expect(slept).toBeGreaterThanOrEqual(3_600_000);
    expect(slept).toBeLessThan(3_600_000 + 60_000);
    expect(h.events.filter((e) => e.type === 'waiting')).toHaveLength(1);
    const waiting = h.events.find((e) => e.type === 'waiting');
    expect(waiting).toMatchObject({ bead: ids[0], why: 'rate limited' });
    expect(h.requests.map((r) => r.attempt)).toEqual([1, 1]);
  });

  it('ralph-loop stop during a wait ends the run then, the bead left open, with no further attempt', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['limited', 'next']);
    const resetAt = h.clock.now() + 3_600_000;
    h.behaviours.set('limited', () => ({ outcome: 'rate_limited', message: 'usage limit', resetAt }));
    const sleep = h.clock.sleep;
    h.clock.sleep = async (ms, signal) => {
      await sleep(ms, signal);
      if (h.clock.sleeps.length === 3) h.stopFile.requested = true;
    };
    const summary = await h.run({ epicId });
    expect(summary.reason).toBe('stopped');
    expect(h.requests.map((r) => r.bead.id)).toEqual([ids[0]]);
    expect(h.clock.sleeps).toHaveLength(3);
    const bead = await h.store.show(ids[0]!);
    expect(bead.status).toBe('open');
    expect(bead.labels).not.toContain(FAILED_LABEL);
    expect(h.stopFile.requested).toBe(false);
  });

  it('backs off exponentially when the reset time is unknown, and on overload', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['busy']);
    h.behaviours.set('busy', (_r, call) =>
      call <= 2 ? { outcome: call === 1 ? 'rate_limited' : 'overloaded', message: 'later' } : ok(),
    );
    const summary = await h.run({ epicId, backoffMs: 500, maxAttempts: 1 });
    expect(summary.reason).toBe('done');
    expect(h.clock.sleeps).toEqual([500, 500]);
  });

  it('a rate-limit wait spends neither an attempt nor a failure: comments name the true attempts', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['limited']);
    h.behaviours.set('limited', (_r, call): ExecutionResult => {
      if (call <= 2) return { outcome: 'rate_limited', message: 'limit' };
      return call === 3 ? { outcome: 'error', message: 'broke' } : ok();
    });
    const summary = await h.run({ epicId, maxAttempts: 2, backoffMs: 10 });
    expect(summary.reason).toBe('done');
    expect(h.requests.map((r) => r.attempt)).toEqual([1, 1, 1, 2]);
    const bead = await h.store.show(ids[0]!);
    expect(bead.status).toBe('closed');
    expect(bead.comments.map((c) => c.text)).toEqual([expect.stringContaining('attempt 1: error')]);
    expect(bead.close_reason).toContain('attempt 2');
  });

  it('backoff doubles with each failure and with each wait of a kind', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['limited', 'flaky']);
    h.behaviours.set('limited', (_r, call) =>
      call <= 3 ? { outcome: 'rate_limited', message: 'limit' } : ok(),
    );
    h.behaviours.set('flaky', (_r, call) => (call <= 2 ? { outcome: 'error', message: 'broke' } : ok()));
    const summary = await h.run({ epicId, backoffMs: 500, maxAttempts: 3 });
    expect(summary.reason).toBe('done');
    expect(h.clock.sleeps).toEqual([500, 1_000, 2_000, 500, 1_000]);
  });

  it('stops instead of waiting past the wall-clock cap', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['limited']);
    h.behaviours.set('limited', () => ({
      outcome: 'rate_limited',
      message: 'limit',
      resetAt: h.clock.now() + 10 * 3_600_000,
    }));
    const summary = await h.run({ epicId, wallClockMs: 3_600_000 });
    expect(summary.reason).toBe('wall_clock');
    expect((await h.store.show(ids[0]!)).status).toBe('open');
  });
});

describe('runner: caps, time and stops', () => {
  it('gives the agent no more time than the wall clock has left, and stops when it runs out mid-bead', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['slow', 'next']);
    h.behaviours.set('slow', (request) => {
      h.clock.advance(request.timeoutMs);
      return { outcome: 'timeout', message: 'killed after the time limit' };
    });
    const summary = await h.run({ epicId, wallClockMs: 5_000, beadTimeoutMs: 60_000 });
    expect(h.requests[0]!.timeoutMs).toBe(5_000);
    expect(summary.reason).toBe('wall_clock');
    expect((await h.store.show(ids[0]!)).status).toBe('open');
    expect(h.requests).toHaveLength(1);
  });

  it('stops after --max-beads', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a', 'b', 'c']);
    const summary = await h.run({ epicId, maxBeads: 2 });
    expect(summary).toMatchObject({ reason: 'max_beads', beadsRun: 2 });
  });

  it('stops before the next bead when a stop was requested, and clears the request', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a', 'b']);
    h.behaviours.set('a', () => {
      h.stopFile.requested = true;
      return ok();
    });
    const summary = await h.run({ epicId });
    expect(summary).toMatchObject({ reason: 'stopped', beadsRun: 1 });
    expect(h.stopFile.requested).toBe(false);
  });

  it('on interrupt, leaves the current bead open and releases the lock', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['long']);
    const controller = new AbortController();
    h.behaviours.set('long', () => {
      controller.abort();
      return { outcome: 'aborted', message: 'stopped by SIGINT' };
    });
    const summary = await h.run({ epicId, signal: controller.signal });
    expect(summary.reason).toBe('interrupted');
    expect((await h.store.show(ids[0]!)).status).toBe('open');
    expect(h.lockState.released).toBe(1);
  });
});

describe('runner: lock and recovery', () => {
  it('refuses to run while another live runner holds the epic', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a']);
    h.lockState.holder = {
      pid: 999,
      host: 'test-host',
      started_at: 'earlier',
      epic: epicId,
      run_id: 'other',
    };
    h.lockState.live = true;
    const error = await h.run({ epicId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedError);
    expect((error as Error).message).toContain('pid 999');
    expect(h.requests).toHaveLength(0);
  });

  it('takes over a dead runner, reopens what it left in progress, and completes the work once', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['done before', 'was running', 'not started']);
    await h.store.claim(ids[0]!);
    await h.store.close(ids[0]!, 'closed by the dead runner');
    await h.store.claim(ids[1]!);
    h.lockState.holder = { pid: 999, host: 'test-host', started_at: 'earlier', epic: epicId, run_id: 'dead' };
    h.lockState.live = false;
    const summary = await h.run({ epicId });
    expect(summary.reason).toBe('done');
    expect(h.events.some((e) => e.type === 'warning' && e.message.includes('pid 999'))).toBe(true);
    expect(h.events.filter((e) => e.type === 'recovered').map((e) => (e as { bead: string }).bead)).toEqual([
      ids[1],
    ]);
    expect(h.requests.map((r) => r.bead.id)).toEqual([ids[1], ids[2]]);
    const comments = (await h.store.show(ids[1]!)).comments.map((c) => c.text);
    expect(comments.some((t) => t.includes('Reopened by ralph-loop'))).toBe(true);
  });
});

describe('runner: idle explanations and dry run', () => {
  it('says it is stalled and names the blocker when open beads remain but none is ready', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['waits']);
    const outside = await h.store.create({ title: 'outside the epic' });
    await h.store.addDependency(ids[0]!, outside.id);
    const summary = await h.run({ epicId });
    expect(summary.reason).toBe('stalled');
    expect(summary.message).toContain(ids[0]);
    expect(summary.message).toContain(`waits for ${outside.id} (open)`);
  });

  it('reports a needs-human state from the idle probe', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a']);
    const summary = await h.run(
      { epicId },
      { idle: { explain: async () => ({ reason: 'needs_human', detail: 'Question in needs-human.md' }) } },
    );
    expect(summary).toMatchObject({ reason: 'needs_human', message: 'Question in needs-human.md' });
  });

  it('prints the planned order on a dry run and changes nothing', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b', 'c']);
    await h.store.addDependency(ids[0]!, ids[2]!);
    const before = await h.store.list({ all: true });
    const summary = await h.run({ epicId, dryRun: true });
    expect(summary.reason).toBe('dry_run');
    const plan = h.events.find((e) => e.type === 'plan') as Extract<LoopEvent, { type: 'plan' }>;
    expect(plan.order.map((step) => step.id)).toEqual([ids[1], ids[2], ids[0]]);
    expect(plan.order[0]).toMatchObject({ agent: 'fake', agent_source: 'built-in default' });
    expect(h.requests).toHaveLength(0);
    expect(await h.store.list({ all: true })).toEqual(before);
    expect(h.lockState.holder).toBeUndefined();
  });

  it('plans a bead whose blocker outside the epic is closed, and not one whose outside blocker is open', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['after the closed one', 'after the open one', 'free']);
    const done = await h.store.create({ title: 'outside, closed' });
    await h.store.close(done.id, 'done');
    const open = await h.store.create({ title: 'outside, open' });
    await h.store.addDependency(ids[0]!, done.id);
    await h.store.addDependency(ids[1]!, open.id);
    await h.run({ epicId, dryRun: true });
    const plan = h.events.find((e) => e.type === 'plan') as Extract<LoopEvent, { type: 'plan' }>;
    expect(plan.order.map((step) => step.id)).toEqual([ids[0], ids[2]]);
  });

  it('plans from the graph the run read at its start, reading no bead again', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b']);
    await h.store.addDependency(ids[0]!, ids[1]!);
    const graphAtStart = await h.store.graph(epicId);
    const show = vi.spyOn(h.store, 'show');
    const graph = vi.spyOn(h.store, 'graph');
    const children = vi.spyOn(h.store, 'children');
    await h.run({ epicId, dryRun: true, graphAtStart });
    const plan = h.events.find((e) => e.type === 'plan') as Extract<LoopEvent, { type: 'plan' }>;
    expect(plan.order.map((step) => step.id)).toEqual([ids[1], ids[0]]);
    expect([show.mock.calls, graph.mock.calls, children.mock.calls]).toEqual([[], [], []]);
  });
});

describe('runner: the epic itself', () => {
  it('keeps the epic open while a human is needed, even with every child closed', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a']);
    await h.run({ epicId }, { idle: { explain: async () => ({ reason: 'needs_human', detail: 'asked' }) } });
    expect((await h.store.show(epicId)).status).toBe('open');
  });

  it('closes the epic after a terminal state once every child is closed', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a']);
    const summary = await h.run(
      { epicId },
      { idle: { explain: async () => ({ reason: 'terminal', detail: 'plateau' }) } },
    );
    expect(summary.reason).toBe('terminal');
    expect(summary.message).toContain('plateau');
    expect((await h.store.show(epicId)).status).toBe('closed');
  });
});

describe('runner: a guard above it (a loop’s state guard)', () => {
  it('asks before every bead, stops on a veto with its reason, and says when a bead is left open', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b', 'c']);
    const seen: string[] = [];
    const guard: BeadGuard = {
      start: async () => void seen.push('start'),
      beforeBead: async (bead) => {
        seen.push(`before ${bead.title}`);
        return bead.title === 'c' ? { reason: 'refused', message: 'HEAD moved' } : undefined;
      },
      afterBead: async (bead) => void seen.push(`after ${bead.title}`),
      leftOpen: async (bead, _context, reason) => void seen.push(`open ${bead.title} ${reason}`),
    };
    const summary = await h.run({ epicId }, { guard });
    expect(summary).toMatchObject({ reason: 'refused', message: 'HEAD moved', beadId: ids[2] });
    expect(seen).toEqual(['start', 'before a', 'after a', 'before b', 'after b', 'before c']);
    expect((await h.store.show(ids[2]!)).status).toBe('open');
  });

  it('a spent budget stops the run as terminal, the bead left open, without another attempt', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a']);
    h.behaviours.set('a', () => ({ outcome: 'budget', message: "The loop's budget of $1 is spent." }));
    const left: string[] = [];
    const guard: BeadGuard = {
      start: async () => undefined,
      beforeBead: async () => undefined,
      afterBead: async () => undefined,
      leftOpen: async (_bead, _context, reason) => void left.push(reason),
    };
    const summary = await h.run({ epicId, maxAttempts: 3 }, { guard });
    expect(summary).toMatchObject({ reason: 'terminal', message: "The loop's budget of $1 is spent." });
    expect(h.requests).toHaveLength(1);
    expect(left).toEqual(['terminal']);
    expect((await h.store.show(ids[0]!)).status).toBe('open');
  });
});
