// Writes a dependency edge straight into a store's files, past the checks `dep add` makes: the cycles
// and dangling edges that imports, merges and hand edits leave behind, for tests of what finds them.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Adds `from` depends on `to` (type `blocks`) to the embedded store's issues.jsonl or the fake br's state. */
export async function forceDependency(
  root: string,
  store: 'embedded' | 'br',
  from: string,
  to: string,
): Promise<void> {
  const edge = { issue_id: from, depends_on_id: to, type: 'blocks', created_at: '2026-01-01T00:00:00Z' };
  if (store === 'br') {
    const path = join(root, '.beads', 'fake-br-state.json');
    const state = JSON.parse(await readFile(path, 'utf8')) as { dependencies: object[] };
    state.dependencies.push({ ...edge, created_by: 'test' });
    await writeFile(path, `${JSON.stringify(state, null, 2)}\n`);
    return;
  }
  const path = join(root, '.beads', 'issues.jsonl');
  const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');
  const edited = lines.map((line) => {
    const issue = JSON.parse(line) as { id: string; dependencies?: object[] };
    if (issue.id !== from) return line;
    return JSON.stringify({ ...issue, dependencies: [...(issue.dependencies ?? []), edge] });
  });
  if (edited.every((line, i) => line === lines[i])) throw new Error(`no bead ${from} in ${path}`);
  await writeFile(path, `${edited.join('\n')}\n`);
}
