// The BeadStore contract: one suite that every store (embedded, br through the fake br) must pass.
import { describe, expect, it } from 'vitest';
import type { BeadStore } from '../../src/beads/types.js';
import { BeadStoreError } from '../../src/infra/errors.js';

export interface StoreFixture {
  store: BeadStore;
}

/** `makeStore` gives a fresh, initialised store in its own temp workspace and registers its cleanup. */
export function defineBeadStoreContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`BeadStore contract: ${name}`, () => {
    async function epicWithChildren(store: BeadStore, titles: string[]) {
      const epic = await store.create({ title: 'Epic', type: 'epic', priority: 1 });
      const children = [];
      for (const title of titles) children.push(await store.create({ title, parent: epic.id }));
      return { epic, children };
    }

    it('creates a bead with the fields it was given', async () => {
      const { store } = await makeStore();
      const bead = await store.create({
        title: 'Write the parser',
        type: 'feature',
        priority: 1,
        description: 'Parse the thing.',
        labels: ['role:doer', 'iter:1'],
      });
      expect(bead.id).toMatch(/^[a-z0-9]+-[a-z0-9]+$/);
      expect(bead).toMatchObject({
        title: 'Write the parser',
        status: 'open',
        priority: 1,
        issue_type: 'feature',
      });
      const shown = await store.show(bead.id);
      expect(shown.description).toBe('Parse the thing.');
      expect([...shown.labels].sort()).toEqual(['iter:1', 'role:doer']);
    });

    it('init is harmless on an initialised store', async () => {
      const { store } = await makeStore();
      const bead = await store.create({ title: 'kept' });
      await store.init();
      expect((await store.show(bead.id)).title).toBe('kept');
    });

    it('gives children of a parent hierarchical ids and records the parent', async () => {
      const { store } = await makeStore();
      const { epic, children } = await epicWithChildren(store, ['a', 'b']);
      expect(children.map((c) => c.id)).toEqual([`${epic.id}.1`, `${epic.id}.2`]);
      const shown = await store.show(children[0]!.id);
      expect(shown.parent).toBe(epic.id);
    });

    it('lists ready children of an epic, never the epic itself, in hybrid order', async () => {
      const { store } = await makeStore();
      const epic = await store.create({ title: 'Epic', type: 'epic', priority: 0 });
      const low = await store.create({ title: 'low', priority: 3, parent: epic.id });
      const urgent = await store.create({ title: 'urgent', priority: 1, parent: epic.id });
      const normal = await store.create({ title: 'normal', priority: 2, parent: epic.id });
      const ready = await store.ready(epic.id);
      expect(ready.map((b) => b.id)).toEqual([urgent.id, low.id, normal.id]);
      expect(ready.some((b) => b.id === epic.id)).toBe(false);
    });

    it('does not list beads of another epic', async () => {
      const { store } = await makeStore();
      const { epic } = await epicWithChildren(store, ['mine']);
      await epicWithChildren(store, ['theirs']);
      expect((await store.ready(epic.id)).map((b) => b.title)).toEqual(['mine']);
    });

    it('holds back a bead until its blocker is closed', async () => {
      const { store } = await makeStore();
      const { epic, children } = await epicWithChildren(store, ['first', 'second']);
      const [first, second] = children as [(typeof children)[0], (typeof children)[0]];
      await store.addDependency(second.id, first.id);
      expect((await store.ready(epic.id)).map((b) => b.id)).toEqual([first.id]);
      expect(await store.close(first.id, 'done')).toEqual({ ok: true });
      expect((await store.ready(epic.id)).map((b) => b.id)).toEqual([second.id]);
    });

    it('accepts dependencies at creation time', async () => {
      const { store } = await makeStore();
      const epic = await store.create({ title: 'Epic', type: 'epic' });
      const first = await store.create({ title: 'first', parent: epic.id });
      const second = await store.create({ title: 'second', parent: epic.id, dependsOn: [first.id] });
      expect((await store.ready(epic.id)).map((b) => b.id)).toEqual([first.id]);
      const shown = await store.show(second.id);
      expect(shown.dependencies).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: first.id, dependency_type: 'blocks' })]),
      );
    });

    it('reports an existing dependency as exists', async () => {
      const { store } = await makeStore();
      const { children } = await epicWithChildren(store, ['a', 'b']);
      expect(await store.addDependency(children[1]!.id, children[0]!.id)).toEqual({ status: 'ok' });
      expect(await store.addDependency(children[1]!.id, children[0]!.id)).toEqual({ status: 'exists' });
    });

    it('refuses a self-dependency and a cycle', async () => {
      const { store } = await makeStore();
      const { children } = await epicWithChildren(store, ['a', 'b']);
      const [a, b] = children as [(typeof children)[0], (typeof children)[0]];
      await expect(store.addDependency(a.id, a.id)).rejects.toBeInstanceOf(BeadStoreError);
      await store.addDependency(b.id, a.id);
      await expect(store.addDependency(a.id, b.id)).rejects.toBeInstanceOf(BeadStoreError);
    });

    it('treats a blocked parent as blocking its descendants (recursive ready)', async () => {
      const { store } = await makeStore();
      const epic = await store.create({ title: 'Epic', type: 'epic' });
      const gate = await store.create({ title: 'gate', parent: epic.id });
      const feature = await store.create({ title: 'feature', type: 'feature', parent: epic.id });
      const leaf = await store.create({ title: 'leaf', parent: feature.id });
      await store.addDependency(feature.id, gate.id);
      const before = (await store.ready(epic.id, { recursive: true })).map((b) => b.id);
      expect(before).toContain(gate.id);
      expect(before).not.toContain(leaf.id);
      await store.close(gate.id, 'done');
      const after = (await store.ready(epic.id, { recursive: true })).map((b) => b.id);
      expect(after).toContain(leaf.id);
    });

    it('lists direct children only unless recursive', async () => {
      const { store } = await makeStore();
      const epic = await store.create({ title: 'Epic', type: 'epic' });
      const feature = await store.create({ title: 'feature', parent: epic.id });
      const leaf = await store.create({ title: 'leaf', parent: feature.id });
      const direct = (await store.children(epic.id)).map((b) => b.id);
      expect(direct).toEqual([feature.id]);
      const all = (await store.children(epic.id, { recursive: true })).map((b) => b.id).sort();
      expect(all).toEqual([feature.id, leaf.id].sort());
    });

    it('claims a bead: in_progress, out of ready, and a second claim fails', async () => {
      const { store } = await makeStore();
      const { epic, children } = await epicWithChildren(store, ['only']);
      const claim = await store.claim(children[0]!.id);
      expect(claim.ok).toBe(true);
      expect((await store.show(children[0]!.id)).status).toBe('in_progress');
      expect(await store.ready(epic.id)).toEqual([]);
      expect((await store.claim(children[0]!.id)).ok).toBe(false);
    });

    it('closes with a reason, and closing again is not a success', async () => {
      const { store } = await makeStore();
      const { children } = await epicWithChildren(store, ['only']);
      const id = children[0]!.id;
      expect(await store.close(id, 'finished by test')).toEqual({ ok: true });
      const shown = await store.show(id);
      expect(shown.status).toBe('closed');
      expect(shown.close_reason).toBe('finished by test');
      const again = await store.close(id, 'twice');
      expect(again.ok).toBe(false);
    });

    it('reopens an in_progress bead so it is ready again', async () => {
      const { store } = await makeStore();
      const { epic, children } = await epicWithChildren(store, ['only']);
      await store.claim(children[0]!.id);
      await store.reopen(children[0]!.id, 'runner died');
      expect((await store.show(children[0]!.id)).status).toBe('open');
      expect((await store.ready(epic.id)).map((b) => b.id)).toEqual([children[0]!.id]);
    });

    it('shows children with their statuses', async () => {
      const { store } = await makeStore();
      const { epic, children } = await epicWithChildren(store, ['a', 'b']);
      await store.close(children[0]!.id, 'done');
      const statuses = Object.fromEntries((await store.children(epic.id)).map((b) => [b.title, b.status]));
      expect(statuses).toEqual({ a: 'closed', b: 'open' });
    });

    it('adds and removes labels, and rejects labels br would reject', async () => {
      const { store } = await makeStore();
      const bead = await store.create({ title: 'x' });
      await store.addLabel(bead.id, 'ralph:failed');
      expect((await store.show(bead.id)).labels).toContain('ralph:failed');
      await store.removeLabel(bead.id, 'ralph:failed');
      expect((await store.show(bead.id)).labels).not.toContain('ralph:failed');
      await expect(store.addLabel(bead.id, 'has space')).rejects.toBeInstanceOf(BeadStoreError);
      await expect(store.addLabel(bead.id, 'dotted.label')).rejects.toBeInstanceOf(BeadStoreError);
    });

    it('keeps comments in order', async () => {
      const { store } = await makeStore();
      const bead = await store.create({ title: 'x' });
      const first = await store.comment(bead.id, 'attempt 1 failed: exit 1');
      await store.comment(bead.id, 'attempt 2 failed: timeout');
      expect(first).toMatchObject({ issue_id: bead.id, text: 'attempt 1 failed: exit 1' });
      const texts = (await store.show(bead.id)).comments.map((c) => c.text);
      expect(texts).toEqual(['attempt 1 failed: exit 1', 'attempt 2 failed: timeout']);
    });

    it('filters list by status and label', async () => {
      const { store } = await makeStore();
      const a = await store.create({ title: 'a', labels: ['role:judge'] });
      const b = await store.create({ title: 'b' });
      await store.close(b.id, 'done');
      expect((await store.list({ label: 'role:judge' })).map((x) => x.id)).toEqual([a.id]);
      expect((await store.list({ status: 'closed' })).map((x) => x.id)).toEqual([b.id]);
      expect((await store.list()).map((x) => x.id)).not.toContain(b.id);
      expect((await store.list({ all: true })).map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
    });

    it('fails clearly on an unknown id', async () => {
      const { store } = await makeStore();
      const error = await store.show('bd-doesnotexist').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BeadStoreError);
      expect((error as BeadStoreError).code).toBe('ISSUE_NOT_FOUND');
      expect((error as BeadStoreError).message).toContain('bd-doesnotexist');
    });

    it('passes shell metacharacters through verbatim', async () => {
      const { store } = await makeStore();
      const title = `$(touch pwned) \`id\` "quoted" 'single' ; rm -rf / && echo $HOME | cat > x`;
      const description = 'line 1\n$(whoami)\n```bash\nrm -rf ~\n```\n--help -d --json';
      const bead = await store.create({ title, description });
      const shown = await store.show(bead.id);
      expect(shown.title).toBe(title);
      expect(shown.description).toBe(description);
      await store.comment(bead.id, title);
      expect((await store.show(bead.id)).comments[0]!.text).toBe(title);
    });

    it('gives the graph of an epic: every descendant with its edges, and the beads they wait for outside it', async () => {
      const { store } = await makeStore();
      const { epic, children } = await epicWithChildren(store, ['first', 'second']);
      const sub = await store.create({ title: 'Phase 2', type: 'epic', parent: epic.id });
      const leaf = await store.create({ title: 'leaf', parent: sub.id });
      const elsewhere = await store.create({ title: 'question for a person', labels: ['role:human'] });
      await store.addDependency(children[1]!.id, children[0]!.id);
      await store.addDependency(leaf.id, elsewhere.id);
      await epicWithChildren(store, ['not mine']);

      const graph = await store.graph(epic.id);
      expect(graph.epic.id).toBe(epic.id);
      expect(graph.beads.map((b) => b.id).sort()).toEqual(
        [...children.map((c) => c.id), sub.id, leaf.id].sort(),
      );
      const second = graph.beads.find((b) => b.id === children[1]!.id)!;
      expect(second.dependencies.filter((d) => d.dependency_type === 'blocks').map((d) => d.id)).toEqual([
        children[0]!.id,
      ]);
      const leafDetail = graph.beads.find((b) => b.id === leaf.id)!;
      expect(leafDetail.parent).toBe(sub.id);
      expect(graph.outside.map((b) => [b.id, b.status, b.labels])).toEqual([
        [elsewhere.id, 'open', ['role:human']],
      ]);
      expect(graph.missing).toEqual([]);
      await expect(store.graph('bd-doesnotexist')).rejects.toMatchObject({ code: 'ISSUE_NOT_FOUND' });
    });

    it('flushes without error', async () => {
      const { store } = await makeStore();
      await store.create({ title: 'x' });
      await expect(store.flush()).resolves.toBeUndefined();
    });
  });
}
