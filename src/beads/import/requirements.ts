// ralph1's requirements.json: [{id, requirement, status}] (or {requirements: [...]}), in file order.
import { fieldReader } from './json-fields.js';
import { parseJsonLocated, type JsonNode } from './json-locate.js';
import { lineAt, type ImportItem, type MarkResult, type ParseResult } from './types.js';

/** Statuses that import closed; the others import open. Compared lower-cased, `-`/space read as `_`. */
export const DONE_STATUSES = [
  'done',
  'complete',
  'completed',
  'closed',
  'passed',
  'passes',
  'finished',
  'resolved',
];
export const OPEN_STATUSES = [
  'todo',
  'to_do',
  'open',
  'pending',
  'new',
  'in_progress',
  'doing',
  'wip',
  'blocked',
];

export function parseRequirements(text: string, file: string): ParseResult {
  const parsed = parseJsonLocated(text);
  if (!parsed.ok) return { ok: false, problems: [{ file, line: parsed.line, message: parsed.message }] };
  const read = fieldReader(file, text);
  const list = listOf(parsed.root);
  if (list === undefined) {
    read.fail(parsed.root, 'expected an array of requirements, or an object with a "requirements" array');
    return { ok: false, problems: read.problems };
  }
  const items: ImportItem[] = [];
  const seen = new Map<string, number>();
  for (const [index, entry] of list.items.entries()) {
    const where = `requirements[${index}]`;
    if (entry.kind !== 'object') {
      read.fail(entry, 'expected an object', where);
      continue;
    }
    const idNode = entry.entries.get('id');
    const id = idNode?.kind === 'number' ? String(idNode.value) : read.string(entry, 'id', where, true);
    const item = id === undefined ? where : `${where} (${id})`;
    const requirement = read.string(entry, 'requirement', item, true);
    const status = read.string(entry, 'status', item, false) ?? 'todo';
    const done = statusDone(status);
    if (done === undefined) {
      read.fail(
        entry.entries.get('status')!,
        `unknown status "${status}": use one of ${[...OPEN_STATUSES, ...DONE_STATUSES].join(', ')}`,
        item,
        'status',
      );
    }
    if (id !== undefined && seen.has(id)) {
      read.fail(idNode!, `duplicates the id of requirements[${seen.get(id)}]`, item, 'id');
    }
    if (id === undefined || requirement === undefined || done === undefined) continue;
    seen.set(id, index);
    items.push({
      id,
      file,
      line: lineAt(text, entry.start),
      title: `${id}: ${firstLine(requirement)}`,
      description: requirement,
      done,
      dependsOn: [],
      labels: [],
    });
  }
  if (read.problems.length > 0) return { ok: false, problems: read.problems };
  if (items.length === 0)
    return { ok: false, problems: [{ file, message: 'has no requirements to import' }] };
  return {
    ok: true,
    source: { format: 'requirements', title: `Requirements from ${file}`, description: '', items },
  };
}

/** true: done; false: still to do; undefined: a status this importer does not know. */
export function statusDone(status: string): boolean | undefined {
  const key = status
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  if (key === '' || OPEN_STATUSES.includes(key)) return false;
  if (DONE_STATUSES.includes(key)) return true;
  return undefined;
}

/** requirements.json with the requirement's status set to "done", nothing else changed. */
export function markRequirementDone(text: string, id: string): MarkResult {
  const parsed = parseJsonLocated(text);
  if (!parsed.ok) return { ok: false, reason: `line ${parsed.line}: ${parsed.message}` };
  const entry = listOf(parsed.root)?.items.find((node) => idOf(node) === id);
  if (entry?.kind !== 'object') return { ok: false, reason: `no requirement has the id ${id}` };
  const status = entry.entries.get('status');
  if (status?.kind === 'string' && statusDone(status.value) === true) return { ok: true };
  if (status === undefined) return { ok: false, reason: `requirement ${id} has no "status" field` };
  return { ok: true, text: `${text.slice(0, status.start)}"done"${text.slice(status.end)}` };
}

function listOf(root: JsonNode): Extract<JsonNode, { kind: 'array' }> | undefined {
  if (root.kind === 'array') return root;
  const inner = root.kind === 'object' ? root.entries.get('requirements') : undefined;
  return inner?.kind === 'array' ? inner : undefined;
}

function idOf(node: JsonNode): string | undefined {
  const id = node.kind === 'object' ? node.entries.get('id') : undefined;
  return id?.kind === 'string' ? id.value : id?.kind === 'number' ? String(id.value) : undefined;
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
