// Baldrick's specs/*.md: one item per file, YAML frontmatter (title, passes, priority, risk, created,
// depends_on) over a Markdown body; depends_on names other specs by id (the file name, or an `id` field).
import { parseFrontmatter, type FrontField, type FrontValue } from './frontmatter.js';
import { byPriorityThenPosition } from './json-fields.js';
import { LABEL_PATTERN } from '../types.js';
import type { ImportItem, ImportProblem, MarkResult, ParseResult } from './types.js';

export interface SpecFile {
  /** Path as shown to the user, e.g. `specs/login.md`. */
  file: string;
  text: string;
}

export function parseSpecs(files: readonly SpecFile[], dir: string): ParseResult {
  const problems: ImportProblem[] = [];
  const items: ImportItem[] = [];
  const byId = new Map<string, ImportItem>();
  const dependsLines = new Map<ImportItem, number>();
  for (const spec of [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))) {
    const parsed = parseSpec(spec);
    if (!parsed.ok) {
      problems.push(...parsed.problems);
      continue;
    }
    const { item, dependsLine } = parsed;
    const other = byId.get(item.id);
    if (other !== undefined) {
      problems.push({
        file: spec.file,
        line: 1,
        item: item.id,
        field: 'id',
        message: `the id is also ${other.file}'s`,
      });
      continue;
    }
    byId.set(item.id, item);
    items.push(item);
    if (dependsLine !== undefined) dependsLines.set(item, dependsLine);
  }
  for (const item of items) {
    for (const dep of item.dependsOn) {
      if (byId.has(dep)) continue;
      problems.push({
        file: item.file,
        line: dependsLines.get(item) ?? 1,
        item: item.id,
        field: 'depends_on',
        message: `no spec has the id "${dep}" (ids here: ${[...byId.keys()].join(', ')})`,
      });
    }
  }
  const cycle = problems.length === 0 ? findCycle(items, byId) : undefined;
  if (cycle !== undefined) {
    const first = byId.get(cycle[0]!)!;
    problems.push({
      file: first.file,
      line: dependsLines.get(first) ?? 1,
      item: first.id,
      field: 'depends_on',
      message: `the dependencies form a cycle: ${cycle.join(' -> ')}`,
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  if (items.length === 0)
    return { ok: false, problems: [{ file: dir, message: 'holds no .md specs to import' }] };
  return {
    ok: true,
    source: {
      format: 'specs',
      title: `Specs from ${dir.replace(/\/$/, '')}/`,
      description: '',
      items: byPriorityThenPosition(items),
    },
  };
}

function parseSpec(
  spec: SpecFile,
):
  | { ok: true; item: ImportItem; dependsLine?: number | undefined }
  | { ok: false; problems: ImportProblem[] } {
  const { file } = spec;
  const front = parseFrontmatter(spec.text);
  if (!front.ok) return { ok: false, problems: [{ file, line: front.line, message: front.message }] };
  const problems: ImportProblem[] = [];
  const base = file.replace(/^.*\//, '').replace(/\.md$/i, '');
  const field = (key: string): FrontField | undefined => front.fields.get(key);
  const fail = (key: string, message: string): void => {
    problems.push({ file, line: field(key)?.line ?? 1, item: base, field: key, message });
  };
  const text = (key: string): string | undefined => {
    const f = field(key);
    if (f === undefined || f.value === null) return undefined;
    if (typeof f.value === 'string') return f.value;
    if (typeof f.value === 'number') return String(f.value);
    fail(key, `expected text, got ${show(f.value)}`);
    return undefined;
  };
  const id = text('id') ?? base;
  const heading = /^#\s+(.+)$/m.exec(front.body)?.[1]?.trim();
  const title = text('title') ?? heading ?? id;
  const passesField = field('passes');
  let done = false;
  if (passesField !== undefined && passesField.value !== null) {
    if (typeof passesField.value === 'boolean') done = passesField.value;
    else fail('passes', `expected true or false, got ${show(passesField.value)}`);
  }
  const priorityField = field('priority');
  let priority: number | undefined;
  if (priorityField !== undefined && priorityField.value !== null) {
    if (typeof priorityField.value === 'number') priority = priorityField.value;
    else fail('priority', `expected a number, got ${show(priorityField.value)}`);
  }
  const risk = text('risk');
  const labels: string[] = [];
  if (risk !== undefined) {
    const label = `risk:${risk.trim().toLowerCase()}`;
    if (LABEL_PATTERN.test(label)) labels.push(label);
    else
      fail('risk', `"${risk}" cannot be a label: use letters, digits, '_' or '-' (e.g. low, medium, high)`);
  }
  const created = text('created');
  const dependsField = field('depends_on');
  const dependsOn: string[] = [];
  if (dependsField !== undefined && dependsField.value !== null) {
    const values = Array.isArray(dependsField.value) ? dependsField.value : [dependsField.value];
    for (const value of values) {
      if (typeof value === 'string' && value.trim() !== '')
        dependsOn.push(value.trim().replace(/\.md$/i, ''));
      else fail('depends_on', `expected spec ids, got ${show(value)}`);
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const details = [
    risk === undefined ? '' : `Risk: ${risk}`,
    created === undefined ? '' : `Created: ${created}`,
  ]
    .filter((line) => line !== '')
    .join('\n');
  const body = front.body.trim();
  return {
    ok: true,
    item: {
      id,
      file,
      line: 1,
      title,
      description: [body, details].filter((part) => part !== '').join('\n\n'),
      done,
      priority,
      dependsOn,
      labels,
    },
    dependsLine: dependsField?.line,
  };
}

/** A spec's text with `passes: true` in its frontmatter, only that line changed (or added before the closing '---'). */
export function markSpecDone(text: string): MarkResult {
  const front = parseFrontmatter(text);
  if (!front.ok) return { ok: false, reason: `line ${front.line}: ${front.message}` };
  const passes = front.fields.get('passes');
  if (passes?.value === true) return { ok: true };
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/(?<=\n)/);
  if (passes === undefined) {
    lines.splice(front.endLine - 1, 0, `passes: true${newline}`);
    return { ok: true, text: lines.join('') };
  }
  const line = lines[passes.line - 1]!;
  lines[passes.line - 1] = line.replace(/^(passes\s*:\s*)[^#\r\n]*?(\s*(?:#.*)?)(\r?\n)?$/, '$1true$2$3');
  return { ok: true, text: lines.join('') };
}

/** The first cycle among the items' dependencies, as ids (first repeated at the end), if any. */
function findCycle(
  items: readonly ImportItem[],
  byId: ReadonlyMap<string, ImportItem>,
): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    for (const dep of byId.get(id)?.dependsOn ?? []) {
      const found = visit(dep);
      if (found !== undefined) return found;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const item of items) {
    const found = visit(item.id);
    if (found !== undefined) return found;
  }
  return undefined;
}

function show(value: FrontValue): string {
  return Array.isArray(value) ? 'a list' : JSON.stringify(value);
}
