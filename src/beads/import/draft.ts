// From parsed items to the beads an import wants: titles, text, priorities, labels, keys and dependencies.
import { createHash } from 'node:crypto';
import { priorityRanks } from './json-fields.js';
import type { ImportFormat, ImportItem, ParsedSource } from './types.js';

export interface BeadDraft {
  /** `<file>#<item id>`: what the bead was imported from, readable. */
  key: string;
  /** `import:<hash of key>`: the stable label that finds the bead again (br labels hold no paths). */
  keyLabel: string;
  item: ImportItem;
  title: string;
  description: string;
  priority: number;
  labels: string[];
  /** Keys of the drafts this one waits for. */
  dependsOn: string[];
}

export interface ImportDraft {
  format: ImportFormat;
  /** The source as given (repo-relative): a file, or the specs directory. */
  source: string;
  epic: { keyLabel: string; title: string; description: string; labels: string[] };
  beads: BeadDraft[];
}

export const sourceLabel = (format: ImportFormat): string => `src:${format}`;

export function keyLabelOf(key: string): string {
  return `import:${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** Bead priority 2 everywhere when the format has none; else 1–4 by rank of the item's priority. */
export function draftImport(parsed: ParsedSource, source: string): ImportDraft {
  const hasPriority = parsed.items.some((item) => item.priority !== undefined);
  const ranks = priorityRanks(
    parsed.items.map((item) => item.priority),
    3,
  );
  const keyOf = (item: ImportItem): string => `${item.file}#${item.id}`;
  const byId = new Map(parsed.items.map((item) => [item.id, keyOf(item)]));
  const src = sourceLabel(parsed.format);
  const beads = parsed.items.map((item): BeadDraft => {
    const key = keyOf(item);
    const keyLabel = keyLabelOf(key);
    return {
      key,
      keyLabel,
      item,
      title: item.title,
      description: [
        item.description,
        `Imported from ${item.file} (item ${item.id}) by forge-pack beads import.`,
      ]
        .filter((part) => part.trim() !== '')
        .join('\n\n'),
      priority: hasPriority ? 1 + (ranks.get(item.priority) ?? 3) : 2,
      labels: [src, keyLabel, ...item.labels],
      dependsOn: item.dependsOn.map((id) => byId.get(id)!),
    };
  });
  const epicLabel = keyLabelOf(`${source}#epic`);
  return {
    format: parsed.format,
    source,
    epic: {
      keyLabel: epicLabel,
      title: parsed.title,
      description: [parsed.description, `Imported from ${source} by forge-pack beads import.`]
        .filter((part) => part.trim() !== '')
        .join('\n\n'),
      labels: [src, epicLabel],
    },
    beads,
  };
}
