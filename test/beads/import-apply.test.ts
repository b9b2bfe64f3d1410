// applyImport on the in-memory store: what it creates, what a second run finds, and a br whose list rows lack labels.
import { describe, expect, it } from 'vitest';
import { applyImport } from '../../src/beads/import/apply.js';
import { draftImport } from '../../src/beads/import/draft.js';
import { parsePlan } from '../../src/beads/import/plan.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/store.js';
import type { BeadStore } from '../../src/beads/types.js';

function planDraft(text: string) {
  const parsed = parsePlan(text, 'PLAN.md');
  if (!parsed.ok) throw new Error('plan did not parse');
  return draftImport(parsed.source, 'PLAN.md');
}

/** The store as an old br shows it: list rows without labels. */
function withoutListLabels(store: BeadStore): BeadStore {
  return {
    ...store,
    kind: store.kind,
    list: async (filter) => (await store.list(filter)).map((bead) => ({ ...bead, labels: [] })),
  };
}

describe('applyImport', () => {
  it('finds earlier beads even when list rows carry no labels, and chains an inserted step', async () => {
    const memory = createMemoryBeadStore();
    await memory.init();
    const store = withoutListLabels(memory);
    const first = await applyImport(store, planDraft('- [ ] one\n- [ ] three\n'), { dryRun: false });
    expect([first.created, first.already_imported]).toEqual([2, 0]);

    const second = await applyImport(store, planDraft('- [ ] one\n- [ ] two\n- [ ] three\n'), {
      dryRun: false,
    });
    expect([second.created, second.already_imported]).toEqual([1, 2]);
    expect(second.epic.id).toBe(first.epic.id);
    const [one, two, three] = second.beads.map((b) => b.id!);
    const waits = async (id: string) =>
      (await memory.show(id)).dependencies.filter((d) => d.dependency_type === 'blocks').map((d) => d.id);
    expect(await waits(two!)).toEqual([one]);
    expect((await waits(three!)).sort()).toEqual([one, two].sort());
    expect((await memory.ready(first.epic.id!)).map((b) => b.id)).toEqual([one]);
  });
});
