// store.graph on both stores with edges `dep add` refuses: a dependency on an id the store does not
// hold is reported as missing, and a cycle comes back as it is (validate names it; the store does not).
import { describe, expect, it } from 'vitest';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import type { BeadStore } from '../../src/beads/types.js';
import { tempWorkspace } from '../support/embedded/workspace.js';
import { makeBrFixture } from '../support/fake-br/br-store-fixture.js';
import { forceDependency } from '../support/force-dependency.js';

async function open(kind: 'embedded' | 'br'): Promise<{ store: BeadStore; root: string }> {
  if (kind === 'br') {
    const { store, workspace } = await makeBrFixture({ version: '0.2.19' });
    return { store, root: workspace.root };
  }
  const root = await tempWorkspace();
  const store = createEmbeddedStore({ cwd: root, actor: 'test' });
  await store.init();
  return { store, root };
}

describe.each(['embedded', 'br'] as const)('graph on the %s store', (kind) => {
  it('lists a dependency on an id the store does not hold as missing, and keeps a cycle', async () => {
    const { store, root } = await open(kind);
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const a = await store.create({ title: 'a', parent: epic.id });
    const b = await store.create({ title: 'b', parent: epic.id });
    const outside = await store.create({ title: 'outside' });
    await store.addDependency(a.id, b.id);
    await store.addDependency(b.id, outside.id);
    await forceDependency(root, kind, b.id, a.id);
    await forceDependency(root, kind, a.id, 'bd-gone');

    const graph = await store.graph(epic.id);
    expect(graph.missing).toEqual(['bd-gone']);
    expect(graph.outside.map((bead) => bead.id)).toEqual([outside.id]);
    const blockers = (id: string) =>
      graph.beads
        .find((bead) => bead.id === id)!
        .dependencies.filter((edge) => edge.dependency_type === 'blocks')
        .map((edge) => edge.id)
        .sort();
    expect(blockers(a.id)).toEqual([b.id, 'bd-gone'].sort());
    expect(blockers(b.id)).toEqual([a.id, outside.id].sort());
  });
});
