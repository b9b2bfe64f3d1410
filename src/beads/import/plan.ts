// IMPLEMENTATION_PLAN.md: a Markdown checklist (`- [ ]` / `- [x]`, also `*`/`+`), under headings,
// possibly nested; every item in document order, each waiting for the one before it.
import type { ImportItem, ImportProblem, MarkResult, ParseResult } from './types.js';

const CHECKBOX = /^(\s*)[-*+]\s+\[(.)\](?:\s+(.*))?$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s*(```|~~~)/;

interface PlanLine {
  id: string;
  /** 0-based line index. */
  index: number;
  /** Offset of the mark character within the line. */
  markAt: number;
  done: boolean;
  text: string;
  indent: number;
}

export function parsePlan(text: string, file: string): ParseResult {
  const problems: ImportProblem[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const found = scanPlan(lines, problems, file);
  if (problems.length > 0) return { ok: false, problems };
  if (found.items.length === 0) {
    return {
      ok: false,
      problems: [{ file, message: "has no checklist items ('- [ ] item' or '- [x] item')" }],
    };
  }
  const items: ImportItem[] = [];
  let previous: string | undefined;
  for (const entry of found.items) {
    const context = [
      entry.headings.length === 0 ? '' : `Section: ${entry.headings.join(' > ')}`,
      entry.parents.length === 0 ? '' : `Part of: ${entry.parents.join(' > ')}`,
      entry.notes.length === 0 ? '' : entry.notes.join('\n'),
    ].filter((part) => part !== '');
    items.push({
      id: entry.line.id,
      file,
      line: entry.line.index + 1,
      title: titleOf(entry.line.text),
      description: [entry.line.text, ...context].join('\n\n'),
      done: entry.line.done,
      // The plan is a sequence of steps: each waits for the one before it, whatever the store's own order.
      dependsOn: previous === undefined ? [] : [previous],
      labels: [],
    });
    previous = entry.line.id;
  }
  return {
    ok: true,
    source: { format: 'plan', title: found.title ?? `Plan from ${file}`, description: '', items },
  };
}

interface ScannedItem {
  line: PlanLine;
  headings: string[];
  parents: string[];
  notes: string[];
}

function scanPlan(
  lines: readonly string[],
  problems: ImportProblem[],
  file: string,
): { title?: string | undefined; items: ScannedItem[] } {
  const items: ScannedItem[] = [];
  const headings: { level: number; text: string }[] = [];
  const open: ScannedItem[] = [];
  const counts = new Map<string, number>();
  let title: string | undefined;
  let fence: string | undefined;
  for (const [index, raw] of lines.entries()) {
    const fenceMatch = FENCE.exec(raw);
    if (fence !== undefined) {
      if (fenceMatch?.[1] === fence) fence = undefined;
      continue;
    }
    if (fenceMatch !== null) {
      fence = fenceMatch[1];
      continue;
    }
    const heading = HEADING.exec(raw);
    if (heading !== null) {
      const level = heading[1]!.length;
      if (level === 1 && title === undefined) title = heading[2];
      while (headings.length > 0 && headings[headings.length - 1]!.level >= level) headings.pop();
      if (level > 1 || title !== heading[2]) headings.push({ level, text: heading[2]! });
      open.length = 0;
      continue;
    }
    const box = CHECKBOX.exec(raw);
    if (box === null) {
      // Indented prose under an item belongs to it.
      const last = open[open.length - 1];
      if (last !== undefined && /^\s+\S/.test(raw) && !/^\s*[-*+]\s/.test(raw)) last.notes.push(raw.trim());
      else if (raw.trim() !== '' && !/^\s/.test(raw)) open.length = 0;
      continue;
    }
    const indent = box[1]!.replace(/\t/g, '    ').length;
    const mark = box[2]!;
    const itemText = (box[3] ?? '').trim();
    if (mark !== ' ' && mark !== 'x' && mark !== 'X') {
      problems.push({ file, line: index + 1, message: `checkbox '[${mark}]' is neither '[ ]' nor '[x]'` });
      continue;
    }
    if (itemText === '') {
      problems.push({ file, line: index + 1, message: 'checklist item has no text' });
      continue;
    }
    const base = normalise(itemText);
    const seen = (counts.get(base) ?? 0) + 1;
    counts.set(base, seen);
    while (open.length > 0 && open[open.length - 1]!.line.indent >= indent) open.pop();
    const item: ScannedItem = {
      line: {
        id: seen === 1 ? base : `${base} (${seen})`,
        index,
        markAt: raw.indexOf('[') + 1,
        done: mark !== ' ',
        text: itemText,
        indent,
      },
      headings: headings.map((h) => h.text),
      parents: open.map((o) => titleOf(o.line.text)),
      notes: [],
    };
    items.push(item);
    open.push(item);
  }
  return { title, items };
}

/** The plan with the item's box checked: one character of one line changed. */
export function markPlanDone(text: string, id: string): MarkResult {
  const lines = text.split('\n');
  const found = scanPlan(
    lines.map((line) => line.replace(/\r$/, '')),
    [],
    '',
  ).items.find((item) => item.line.id === id);
  if (found === undefined) return { ok: false, reason: `no checklist item reads "${id}"` };
  if (found.line.done) return { ok: true };
  const line = lines[found.line.index]!;
  lines[found.line.index] = `${line.slice(0, found.line.markAt)}x${line.slice(found.line.markAt + 1)}`;
  return { ok: true, text: lines.join('\n') };
}

/** An item's id: its text with whitespace collapsed (duplicates get ` (2)`, ` (3)` in document order). */
function normalise(text: string): string {
  return text.replace(/\s+/g, ' ');
}

/** A title for the bead: the item's text with Markdown links shown as their text, at most 120 characters. */
function titleOf(text: string): string {
  const plain = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*_]{1,2}([^`*_]+)[`*_]{1,2}/g, '$1');
  return plain.length > 120 ? `${plain.slice(0, 119)}…` : plain;
}
