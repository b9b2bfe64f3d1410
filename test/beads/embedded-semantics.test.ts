// br's rules in the embedded engine: readiness, hierarchy, ids, edges and claims, on disk and in memory.
import { describe, expect, it } from 'vitest';
import { createEmbeddedStore, createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import { findCyclePath } from '../../src/beads/embedded/graph.js';
import { generateIssueId, hashLengthFor, nextChildId } from '../../src/beads/embedded/ids.js';
import type { IssueRecord } from '../../src/beads/embedded/records.js';
import { createTimestampSource } from '../../src/beads/embedded/timestamps.js';
import { compareTimestamps } from '../../src/beads/types.js';
import { BeadStoreError } from '../../src/infra/errors.js';
import { fakeClock, tempWorkspace, writeIssueLines } from '../support/embedded/workspace.js';

const T0 = '2026-01-21T21:46:54Z';

/** A br line as br would write it, with only what the test cares about. */
function line(id: string, extra: Partial<IssueRecord> & Record<string, unknown> = {}) {
  return {
    id,
    title: id,
    status: 'open',
    priority: 2,
    issue_type: 'task',
    created_at: T0,
    updated_at: T0,
    ...extra,
  };
}

function childOf(child: string, parent: string) {
  return { issue_id: child, depends_on_id: parent, type: 'parent-child', created_at: T0 };
}

async function errorOf(promise: Promise<unknown>): Promise<BeadStoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BeadStoreError);
  return error as BeadStoreError;
}

describe('embedded store: readiness as br computes it', () => {
  it('treats a blocker that does not exist as blocking', async () => {
    const cwd = await tempWorkspace();
    await writeIssueLines(cwd, [
      line('bd-e', { issue_type: 'epic' }),
      line('bd-e.1', { dependencies: [childOf('bd-e.1', 'bd-e')] }),
      line('bd-e.2', {
        dependencies: [
          childOf('bd-e.2', 'bd-e'),
          { issue_id: 'bd-e.2', depends_on_id: 'bd-gone', type: 'blocks', created_at: T0 },
        ],
      }),
      line('bd-e.3', {
        dependencies: [
          childOf('bd-e.3', 'bd-e'),
          { issue_id: 'bd-e.3', depends_on_id: 'bd-gone', type: 'related', created_at: T0 },
        ],
      }),
    ]);
    const store = createEmbeddedStore({ cwd });
    expect((await store.ready('bd-e')).map((b) => b.id)).toEqual(['bd-e.1', 'bd-e.3']);
  });

  it('leaves out deferred, pinned, ephemeral and template beads, and defers only until defer_until', async () => {
    const cwd = await tempWorkspace();
    const kids = ['plain', 'deferred', 'later', 'pinned', 'ephemeral', 'template', 'blocked-status'];
    await writeIssueLines(cwd, [
      line('bd-e', { issue_type: 'epic' }),
      ...kids.map((kid) =>
        line(`bd-${kid}`, {
          dependencies: [childOf(`bd-${kid}`, 'bd-e')],
          ...(kid === 'deferred' ? { status: 'deferred' } : {}),
          ...(kid === 'later' ? { defer_until: '2026-02-01T00:00:00Z' } : {}),
          ...(kid === 'pinned' ? { pinned: true } : {}),
          ...(kid === 'ephemeral' ? { ephemeral: true } : {}),
          ...(kid === 'template' ? { is_template: true } : {}),
          ...(kid === 'blocked-status' ? { status: 'blocked' } : {}),
        }),
      ),
    ]);
    const clock = fakeClock('2026-01-25T00:00:00Z');
    const store = createEmbeddedStore({ cwd, clock });
    expect((await store.ready('bd-e')).map((b) => b.id)).toEqual(['bd-plain']);
    clock.set('2026-02-01T00:00:01Z');
    expect((await store.ready('bd-e')).map((b) => b.id).sort()).toEqual(['bd-later', 'bd-plain']);
  });

  it('never returns an epic, even a sub-epic, but recursive ready reaches into it', async () => {
    const store = createMemoryBeadStore();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const sub = await store.create({ title: 'Sub', type: 'epic', parent: epic.id });
    const leaf = await store.create({ title: 'leaf', parent: sub.id });
    expect(await store.ready(epic.id)).toEqual([]);
    expect((await store.ready(epic.id, { recursive: true })).map((b) => b.id)).toEqual([leaf.id]);
    expect((await store.ready(sub.id)).map((b) => b.id)).toEqual([leaf.id]);
  });

  it('blocks every descendant of a blocked ancestor, however deep', async () => {
    const store = createMemoryBeadStore();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const gate = await store.create({ title: 'gate', parent: epic.id });
    const feature = await store.create({
      title: 'feature',
      type: 'feature',
      parent: epic.id,
      dependsOn: [gate.id],
    });
    const story = await store.create({ title: 'story', parent: feature.id });
    const leaf = await store.create({ title: 'leaf', parent: story.id });
    expect((await store.ready(epic.id, { recursive: true })).map((b) => b.id)).toEqual([gate.id]);
    expect(await store.ready(story.id)).toEqual([]);
    const claim = await store.claim(leaf.id);
    expect(claim).toEqual({ ok: false, reason: expect.stringContaining('blocked') });
    await store.close(gate.id, 'done');
    expect((await store.ready(epic.id, { recursive: true })).map((b) => b.id)).toEqual([
      feature.id,
      story.id,
      leaf.id,
    ]);
  });

  it('counts waits-for and conditional-blocks as blocking, and related as not', async () => {
    const store = createMemoryBeadStore();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const [a, b, c, d] = await Promise.all(
      ['a', 'b', 'c', 'd'].map((title) => store.create({ title, parent: epic.id })),
    );
    await store.addDependency(b!.id, a!.id, 'waits-for');
    await store.addDependency(c!.id, a!.id, 'conditional-blocks');
    await store.addDependency(d!.id, a!.id, 'related');
    expect((await store.ready(epic.id)).map((x) => x.title).sort()).toEqual(['a', 'd']);
  });

  it('orders ready beads P0-P1 first, each group oldest first, regardless of creation order', async () => {
    const clock = fakeClock(T0);
    const store = createMemoryBeadStore({ clock });
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const titles: Array<[string, number]> = [
      ['p3-old', 3],
      ['p1-old', 1],
      ['p2', 2],
      ['p0-new', 0],
      ['p4', 4],
    ];
    for (const [title, priority] of titles) await store.create({ title, priority, parent: epic.id });
    expect((await store.ready(epic.id)).map((b) => b.title)).toEqual([
      'p1-old',
      'p0-new',
      'p3-old',
      'p2',
      'p4',
    ]);
    expect((await store.children(epic.id)).map((b) => b.title)).toEqual([
      'p1-old',
      'p0-new',
      'p3-old',
      'p2',
      'p4',
    ]);
  });

  it('fails clearly when the epic of ready or children does not exist', async () => {
    const store = createMemoryBeadStore();
    expect((await errorOf(store.ready('bd-nope'))).code).toBe('ISSUE_NOT_FOUND');
    expect((await errorOf(store.children('bd-nope'))).message).toContain('bd-nope');
    expect((await errorOf(store.claim('bd-nope'))).code).toBe('ISSUE_NOT_FOUND');
    expect((await errorOf(store.create({ title: 'x', parent: 'bd-nope' }))).code).toBe('ISSUE_NOT_FOUND');
  });
});

describe('embedded store: edges', () => {
  it('keeps one edge per pair whatever its type', async () => {
    const store = createMemoryBeadStore();
    const [a, b] = [await store.create({ title: 'a' }), await store.create({ title: 'b' })];
    expect(await store.addDependency(b.id, a.id, 'related')).toEqual({ status: 'ok' });
    expect(await store.addDependency(b.id, a.id, 'blocks')).toEqual({ status: 'exists' });
    const shown = await store.show(b.id);
    expect(shown.dependencies).toEqual([expect.objectContaining({ id: a.id, dependency_type: 'related' })]);
    expect((await store.show(a.id)).dependents).toEqual([
      expect.objectContaining({ id: b.id, title: 'b', dependency_type: 'related' }),
    ]);
  });

  it("refuses self-edges and blocking cycles with br's codes and the cycle in the message", async () => {
    const store = createMemoryBeadStore();
    const [a, b, c] = [
      await store.create({ title: 'a' }),
      await store.create({ title: 'b' }),
      await store.create({ title: 'c' }),
    ];
    expect((await errorOf(store.addDependency(a.id, a.id))).code).toBe('SELF_DEPENDENCY');
    await store.addDependency(b.id, a.id);
    await store.addDependency(c.id, b.id, 'waits-for');
    const cycle = await errorOf(store.addDependency(a.id, c.id));
    expect(cycle.code).toBe('CYCLE_DETECTED');
    expect(cycle.message).toContain(`${a.id} -> ${c.id} -> ${b.id} -> ${a.id}`);
    expect(await store.addDependency(a.id, c.id, 'related')).toEqual({ status: 'ok' });
  });

  it('refuses an ancestor waiting on its own descendant (it could never become ready)', async () => {
    const store = createMemoryBeadStore();
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const feature = await store.create({ title: 'feature', parent: epic.id });
    const leaf = await store.create({ title: 'leaf', parent: feature.id });
    expect((await errorOf(store.addDependency(epic.id, leaf.id))).code).toBe('CYCLE_DETECTED');
  });

  it('finds cycles through parent-child and blocking edges only', () => {
    const edge = (from: string, to: string, type: string) => ({
      issue_id: from,
      depends_on_id: to,
      type,
      created_at: T0,
    });
    const record = (id: string, deps: ReturnType<typeof edge>[]): IssueRecord => ({
      ...line(id),
      labels: [],
      comments: [],
      dependencies: deps,
    });
    const issues = new Map([
      ['x', record('x', [edge('x', 'y', 'blocks')])],
      ['y', record('y', [edge('y', 'z', 'related')])],
      ['z', record('z', [])],
    ]);
    expect(findCyclePath(issues, 'y', 'x')).toEqual(['y', 'x', 'y']);
    expect(findCyclePath(issues, 'z', 'x')).toBeUndefined();
  });
});

describe('embedded store: ids and timestamps', () => {
  it('numbers children one past the highest child number in use', async () => {
    const cwd = await tempWorkspace();
    await writeIssueLines(cwd, [
      line('bd-e', { issue_type: 'epic' }),
      line('bd-e.1', { dependencies: [childOf('bd-e.1', 'bd-e')] }),
      line('bd-e.7', { dependencies: [childOf('bd-e.7', 'bd-e')] }),
      line('bd-e.7.2', { dependencies: [childOf('bd-e.7.2', 'bd-e.7')] }),
    ]);
    const store = createEmbeddedStore({ cwd });
    expect((await store.create({ title: 'next', parent: 'bd-e' })).id).toBe('bd-e.8');
    expect((await store.create({ title: 'deeper', parent: 'bd-e.7' })).id).toBe('bd-e.7.3');
    expect((await store.create({ title: 'first', parent: 'bd-e.1' })).id).toBe('bd-e.1.1');
  });

  it('sizes hashes to the store and grows them on collision', () => {
    expect(hashLengthFor(0)).toBe(3);
    expect(hashLengthFor(1_000)).toBeGreaterThan(3);
    expect(hashLengthFor(10_000_000)).toBe(8);
    const seed = { title: 't', creator: 'me', createdAt: T0 };
    const short = generateIssueId('bd', seed, 0, () => false);
    expect(short).toMatch(/^bd-[0-9a-z]{3}$/);
    const taken = new Set<string>();
    const grown = generateIssueId('bd', seed, 0, (id) => {
      if (id.length < 'bd-'.length + 5) {
        taken.add(id);
        return true;
      }
      return false;
    });
    expect(grown).toMatch(/^bd-[0-9a-z]{5}$/);
    expect(taken.size).toBe(20);
    expect(generateIssueId('bd', seed, 0, () => false)).toBe(short);
    expect(nextChildId(new Map(), 'bd-abc')).toBe('bd-abc.1');
  });

  it('keeps timestamps increasing when the clock stands still or steps back', () => {
    const clock = fakeClock('2026-01-21T21:46:54.405Z');
    const next = createTimestampSource(clock);
    const first = next();
    const second = next();
    clock.set('2026-01-21T21:46:50.000Z');
    const third = next();
    expect(first.iso).toBe('2026-01-21T21:46:54.405000000Z');
    expect(second.iso).toBe('2026-01-21T21:46:54.405000001Z');
    expect(compareTimestamps(second.iso, third.iso)).toBe(-1);
  });

  it('validates what br validates: labels, titles, priorities, comments', async () => {
    const store = createMemoryBeadStore();
    const bead = await store.create({ title: 'x' });
    for (const attempt of [
      () => store.create({ title: '   ' }),
      () => store.create({ title: 'x'.repeat(501) }),
      () => store.create({ title: 'x', priority: 5 }),
      () => store.create({ title: 'x', labels: ['ok', 'not ok'] }),
      () => store.addLabel(bead.id, 'x'.repeat(51)),
      () => store.addLabel(bead.id, 'a/b'),
      () => store.comment(bead.id, '  '),
    ]) {
      expect((await errorOf(attempt())).code).toBe('VALIDATION_FAILED');
    }
    expect((await store.list({ all: true })).map((b) => b.id)).toEqual([bead.id]);
  });
});

describe('embedded store: claims and closing', () => {
  it('claims only open beads, assigns the actor, and close fails on a closed bead', async () => {
    const store = createMemoryBeadStore({ actor: 'runner-1' });
    const bead = await store.create({ title: 'x' });
    const claim = await store.claim(bead.id);
    expect(claim).toMatchObject({
      ok: true,
      bead: { id: bead.id, status: 'in_progress', assignee: 'runner-1' },
    });
    expect(await store.claim(bead.id)).toEqual({ ok: false, reason: expect.stringContaining('in_progress') });
    expect(await store.close(bead.id, 'done')).toEqual({ ok: true });
    expect(await store.close(bead.id, 'again')).toEqual({
      ok: false,
      reason: expect.stringContaining('closed'),
    });
    expect(await store.claim(bead.id)).toEqual({ ok: false, reason: expect.stringContaining('closed') });
    await store.reopen(bead.id, 'flaky');
    const shown = await store.show(bead.id);
    expect(shown).toMatchObject({ status: 'open' });
    expect(shown.closed_at).toBeUndefined();
    expect(shown.close_reason).toBeUndefined();
    expect(shown.comments.map((c) => c.text)).toEqual(['flaky']);
  });

  it('hands out copies: changing a returned bead does not change the store', async () => {
    const store = createMemoryBeadStore();
    const bead = await store.create({ title: 'x', labels: ['a'] });
    bead.labels.push('b');
    bead.title = 'changed';
    const shown = await store.show(bead.id);
    expect(shown).toMatchObject({ title: 'x', labels: ['a'] });
  });

  it('changes nothing when an operation fails halfway through its checks', async () => {
    const store = createMemoryBeadStore();
    const a = await store.create({ title: 'a' });
    await errorOf(store.create({ title: 'b', dependsOn: [a.id, 'bd-missing'] }));
    expect((await store.list()).map((b) => b.title)).toEqual(['a']);
    expect((await store.show(a.id)).dependents).toEqual([]);
  });
});
