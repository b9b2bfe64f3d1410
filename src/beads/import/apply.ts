// Puts an import's beads into a store: the epic, one bead per item not already imported, their
// dependencies, and the done ones closed. Nothing is created that an earlier import already made.
import type { Bead, BeadStore } from '../types.js';
import { sourceLabel, type BeadDraft, type ImportDraft } from './draft.js';

export interface ImportedBead {
  id?: string | undefined;
  key: string;
  item: string;
  title: string;
  priority: number;
  /** What the import makes it, or what the existing bead is now. */
  status: string;
  depends_on: string[];
  /** Already in the store from an earlier import. */
  existing: boolean;
}

export interface ImportReport {
  format: string;
  source: string;
  dry_run: boolean;
  epic: { id?: string | undefined; title: string; existing: boolean };
  beads: ImportedBead[];
  created: number;
  already_imported: number;
}

export interface ApplyOptions {
  /** Import under this existing epic rather than the import's own. */
  epicId?: string | undefined;
  dryRun: boolean;
}

export async function applyImport(
  store: BeadStore,
  draft: ImportDraft,
  options: ApplyOptions,
): Promise<ImportReport> {
  const known = new Map<string, Bead>();
  const src = sourceLabel(draft.format);
  for (const row of await store.list({ all: true, label: src })) {
    // A br whose list rows carry no labels: ask for the bead itself.
    const bead = row.labels.includes(src) ? row : await store.show(row.id);
    for (const label of bead.labels) if (label.startsWith('import:')) known.set(label, bead);
  }
  const epic = await chooseEpic(store, draft, known, options);
  const ids = new Map<string, string>();
  const before = new Map<string, Bead>();
  for (const bead of draft.beads) {
    const found = known.get(bead.keyLabel);
    if (found === undefined) continue;
    ids.set(bead.key, found.id);
    before.set(bead.key, found);
  }
  const report: ImportReport = {
    format: draft.format,
    source: draft.source,
    dry_run: options.dryRun,
    epic: { id: epic.id, title: epic.title, existing: epic.existing },
    beads: [],
    created: 0,
    already_imported: 0,
  };
  const created = new Set<string>();
  for (const bead of draft.beads) {
    const existing = before.get(bead.key);
    if (existing === undefined && !options.dryRun) {
      const made = await store.create({
        title: bead.title,
        type: 'task',
        priority: bead.priority,
        description: bead.description,
        labels: bead.labels,
        parent: epic.id!,
        dependsOn: bead.dependsOn.map((key) => ids.get(key)).filter((id): id is string => id !== undefined),
      });
      ids.set(bead.key, made.id);
      created.add(bead.key);
    }
    report.beads.push(entry(bead, ids.get(bead.key), existing));
    if (existing === undefined) report.created += 1;
    else report.already_imported += 1;
  }
  if (options.dryRun) return report;
  // Edges to beads made later in the order, or from existing beads to new ones (an item inserted in a plan).
  for (const bead of draft.beads) {
    for (const key of bead.dependsOn) {
      if (!created.has(bead.key) && !created.has(key)) continue;
      await store.addDependency(ids.get(bead.key)!, ids.get(key)!);
    }
  }
  for (const bead of draft.beads) {
    if (created.has(bead.key) && bead.item.done) {
      await store.close(ids.get(bead.key)!, `already done in ${bead.item.file} when imported`);
    }
  }
  return report;
}

async function chooseEpic(
  store: BeadStore,
  draft: ImportDraft,
  known: ReadonlyMap<string, Bead>,
  options: ApplyOptions,
): Promise<{ id?: string; title: string; existing: boolean }> {
  if (options.epicId !== undefined) {
    const epic = await store.show(options.epicId);
    return { id: epic.id, title: epic.title, existing: true };
  }
  const found = known.get(draft.epic.keyLabel);
  if (found !== undefined) return { id: found.id, title: found.title, existing: true };
  if (options.dryRun) return { title: draft.epic.title, existing: false };
  const made = await store.create({
    title: draft.epic.title,
    type: 'epic',
    priority: 2,
    description: draft.epic.description,
    labels: draft.epic.labels,
  });
  return { id: made.id, title: made.title, existing: false };
}

function entry(bead: BeadDraft, id: string | undefined, existing: Bead | undefined): ImportedBead {
  return {
    id,
    key: bead.key,
    item: bead.item.id,
    title: existing?.title ?? bead.title,
    priority: existing?.priority ?? bead.priority,
    status: existing?.status ?? (bead.item.done ? 'closed' : 'open'),
    depends_on: bead.dependsOn,
    existing: existing !== undefined,
  };
}
