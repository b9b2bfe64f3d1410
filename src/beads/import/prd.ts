// Ralph's prd.json: userStories with priority (1 first) and passes; stories that pass import closed.
import { byPriorityThenPosition, fieldReader } from './json-fields.js';
import { parseJsonLocated, type JsonNode } from './json-locate.js';
import { lineAt, type ImportItem, type MarkResult, type ParseResult } from './types.js';

export function parsePrd(text: string, file: string): ParseResult {
  const parsed = parseJsonLocated(text);
  if (!parsed.ok) return { ok: false, problems: [{ file, line: parsed.line, message: parsed.message }] };
  const read = fieldReader(file, text);
  const root = parsed.root;
  if (root.kind !== 'object') {
    read.fail(root, 'expected an object with "userStories"');
    return { ok: false, problems: read.problems };
  }
  const project = read.string(root, 'project', 'prd', false);
  const branch = read.string(root, 'branchName', 'prd', false);
  const summary = read.string(root, 'description', 'prd', false);
  const stories = root.entries.get('userStories');
  if (stories?.kind !== 'array') {
    read.fail(
      stories ?? root,
      stories === undefined ? 'is missing' : 'expected an array',
      undefined,
      'userStories',
    );
    return { ok: false, problems: read.problems };
  }
  const items: ImportItem[] = [];
  const seen = new Map<string, number>();
  for (const [index, story] of stories.items.entries()) {
    const where = `userStories[${index}]`;
    if (story.kind !== 'object') {
      read.fail(story, 'expected an object', where);
      continue;
    }
    const id = read.string(story, 'id', where, true);
    const item = id === undefined ? where : `${where} (${id})`;
    const title = read.string(story, 'title', item, true);
    const description = read.string(story, 'description', item, false) ?? '';
    const criteria = read.strings(story, 'acceptanceCriteria', item) ?? [];
    const priority = read.number(story, 'priority', item);
    const passes = read.boolean(story, 'passes', item, true);
    const notes = read.string(story, 'notes', item, false);
    if (id !== undefined && seen.has(id)) {
      read.fail(story.entries.get('id')!, `duplicates the id of userStories[${seen.get(id)}]`, item, 'id');
    }
    if (id === undefined || title === undefined || passes === undefined) continue;
    seen.set(id, index);
    const body = [
      description,
      criteria.length === 0 ? '' : `Acceptance criteria:\n${criteria.map((c) => `- ${c}`).join('\n')}`,
      notes === undefined || notes === '' ? '' : `Notes: ${notes}`,
    ].filter((part) => part !== '');
    items.push({
      id,
      file,
      line: lineAt(text, story.start),
      title: `${id}: ${title}`,
      description: body.join('\n\n'),
      done: passes,
      priority,
      dependsOn: [],
      labels: [],
    });
  }
  if (read.problems.length > 0) return { ok: false, problems: read.problems };
  if (items.length === 0)
    return { ok: false, problems: [{ file, field: 'userStories', message: 'has no stories to import' }] };
  const name = project ?? branch;
  return {
    ok: true,
    source: {
      format: 'prd',
      title: name === undefined ? `Stories from ${file}` : `${name} (${file})`,
      description: [summary, branch === undefined ? undefined : `Branch: ${branch}`]
        .filter((part): part is string => part !== undefined && part !== '')
        .join('\n\n'),
      items: byPriorityThenPosition(items),
    },
  };
}

/** prd.json with the story's `passes` set to true, only that value changed; undefined when already so. */
export function markPrdDone(text: string, id: string): MarkResult {
  const parsed = parseJsonLocated(text);
  if (!parsed.ok) return { ok: false, reason: `line ${parsed.line}: ${parsed.message}` };
  const stories = parsed.root.kind === 'object' ? parsed.root.entries.get('userStories') : undefined;
  const story = stories?.kind === 'array' ? stories.items.find((s) => idOf(s) === id) : undefined;
  if (story?.kind !== 'object') return { ok: false, reason: `no user story has the id ${id}` };
  const passes = story.entries.get('passes');
  if (passes === undefined) return { ok: false, reason: `user story ${id} has no "passes" field` };
  if (passes.kind === 'boolean' && passes.value) return { ok: true };
  return { ok: true, text: `${text.slice(0, passes.start)}true${text.slice(passes.end)}` };
}

function idOf(node: JsonNode): string | undefined {
  const id = node.kind === 'object' ? node.entries.get('id') : undefined;
  return id?.kind === 'string' ? id.value : undefined;
}
