// The embedded store writes br's own issues.jsonl: strict br line schema, order, preserved foreign fields.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import { compareTimestamps } from '../../src/beads/types.js';
import { BeadStoreError } from '../../src/infra/errors.js';
import { lastLinePerId, parseBrJsonl } from '../support/embedded/br-issue-line.js';
import { fakeClock, readIssues, tempWorkspace, writeIssueLines } from '../support/embedded/workspace.js';

async function initialisedStore(
  options: { clock?: ReturnType<typeof fakeClock>; actor?: string; prefix?: string } = {},
) {
  const cwd = await tempWorkspace();
  const store = createEmbeddedStore({
    cwd,
    actor: options.actor ?? 'me',
    ...(options.clock ? { clock: options.clock } : {}),
  });
  await store.init(options.prefix === undefined ? undefined : { prefix: options.prefix });
  return { cwd, store };
}

describe('embedded store: br line format', () => {
  it('writes a plain bead exactly as br writes its minimal line', async () => {
    const { cwd, store } = await initialisedStore({ clock: fakeClock('2026-01-21T21:46:54.405Z') });
    const bead = await store.create({ title: 't' });
    expect(await readIssues(cwd)).toBe(
      `{"id":"${bead.id}","title":"t","status":"open","priority":2,"issue_type":"task",` +
        `"created_at":"2026-01-21T21:46:54.405000000Z","created_by":"me","updated_at":"2026-01-21T21:46:54.405000000Z",` +
        `"source_repo":".","compaction_level":0,"original_size":0}\n`,
    );
  });

  it("writes every line so that a strict schema of br's Issue accepts it", async () => {
    const { cwd, store } = await initialisedStore();
    const epic = await store.create({ title: 'Epic', type: 'epic', priority: 1, description: 'the plan' });
    const doer = await store.create({ title: 'doer-1', parent: epic.id, labels: ['role:doer', 'iter:1'] });
    const judge = await store.create({ title: 'judge-1', parent: epic.id, dependsOn: [doer.id] });
    await store.addDependency(judge.id, epic.id, 'related').catch(() => undefined);
    await store.claim(doer.id);
    await store.comment(doer.id, 'attempt 1 failed: exit 1');
    await store.close(doer.id, 'done');
    await store.addLabel(judge.id, 'ralph:failed');
    await store.removeLabel(judge.id, 'ralph:failed');
    await store.reopen(doer.id, 'again');

    // Every line of the log form (each change appended as the whole issue) is a valid br line...
    const logged = parseBrJsonl(await readIssues(cwd));
    expect(logged.length).toBeGreaterThan(3);
    // ...and once flushed, the file holds each issue once, as the last line for its id said.
    await store.flush();
    const lines = parseBrJsonl(await readIssues(cwd));
    expect(lines.map((l) => l.id).sort()).toEqual([epic.id, doer.id, judge.id].sort());
    expect(lines).toEqual([...lastLinePerId(logged).values()].sort((a, b) => (a.id < b.id ? -1 : 1)));
    const byId = new Map(lines.map((l) => [l.id, l]));
    expect(byId.get(judge.id)?.dependencies).toEqual([
      expect.objectContaining({
        issue_id: judge.id,
        depends_on_id: epic.id,
        type: 'parent-child',
        created_by: 'me',
      }),
      expect.objectContaining({ issue_id: judge.id, depends_on_id: doer.id, type: 'blocks' }),
    ]);
    expect(byId.get(judge.id)?.labels).toBeUndefined(); // removed again: an empty list is omitted
    expect(byId.get(doer.id)?.comments?.map((c) => [c.author, c.text])).toEqual([
      ['me', 'attempt 1 failed: exit 1'],
      ['me', 'again'],
    ]);
    expect(byId.get(doer.id)).toMatchObject({
      labels: ['iter:1', 'role:doer'],
      status: 'open',
      assignee: 'me',
    });
    expect(byId.get(epic.id)).toMatchObject({ description: 'the plan', issue_type: 'epic', priority: 1 });
  });

  it('records closing with closed_at and close_reason', async () => {
    const clock = fakeClock('2026-03-01T10:00:00.000Z');
    const { cwd, store } = await initialisedStore({ clock });
    const bead = await store.create({ title: 'x' });
    clock.set('2026-03-01T11:30:00.000Z');
    await store.close(bead.id, 'finished');
    const line = parseBrJsonl(await readIssues(cwd)).at(-1);
    expect(line).toMatchObject({
      status: 'closed',
      close_reason: 'finished',
      closed_at: '2026-03-01T11:30:00.000000000Z',
    });
    expect(line?.updated_at).toBe(line?.closed_at);
  });

  it('keeps the file sorted by id', async () => {
    const { cwd, store } = await initialisedStore();
    for (let i = 0; i < 12; i += 1) {
      const top = await store.create({ title: `top ${i}` });
      if (i % 3 === 0)
        for (let c = 0; c < 11; c += 1) await store.create({ title: `child ${c}`, parent: top.id });
    }
    await store.flush();
    const ids = parseBrJsonl(await readIssues(cwd)).map((l) => l.id);
    expect(ids).toHaveLength(12 + 4 * 11);
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it('gives beads created in the same millisecond strictly increasing nanosecond timestamps', async () => {
    const { store } = await initialisedStore({ clock: fakeClock('2026-01-21T21:46:54.405Z') });
    const beads = [];
    for (let i = 0; i < 5; i += 1) beads.push(await store.create({ title: `b${i}` }));
    for (const bead of beads) expect(bead.created_at).toMatch(/^2026-01-21T21:46:54\.405\d{6}Z$/);
    for (let i = 1; i < beads.length; i += 1) {
      expect(compareTimestamps(beads[i - 1]!.created_at, beads[i]!.created_at)).toBe(-1);
    }
  });

  it('keeps fields and edges br wrote that Forge does not use, when it rewrites a line', async () => {
    const cwd = await tempWorkspace();
    const original = {
      id: 'proj-a1b',
      title: 'Imported',
      description: 'from br',
      design: 'a design',
      notes: 'some notes',
      status: 'open',
      priority: 1,
      issue_type: 'bug',
      owner: 'someone',
      estimated_minutes: 30,
      created_at: '2026-01-21T21:46:54.405167897Z',
      created_by: 'alice',
      updated_at: '2026-01-21T21:46:54.405167897Z',
      due_at: '2026-02-01T00:00:00Z',
      external_ref: 'JIRA-12',
      source_repo: '.',
      compaction_level: 0,
      original_size: 0,
      future_field: { nested: [1, 2] },
      labels: ['keep'],
      dependencies: [
        {
          issue_id: 'proj-a1b',
          depends_on_id: 'proj-z9z',
          type: 'related',
          created_at: '2026-01-21T21:46:54.405167897Z',
          metadata: '{"why":"x"}',
          thread_id: 't1',
        },
      ],
      comments: [
        { id: 7, issue_id: 'proj-a1b', author: 'alice', text: 'hi', created_at: '2026-01-21T21:46:55Z' },
      ],
    };
    const other = {
      ...original,
      id: 'proj-z9z',
      title: 'Other',
      labels: undefined,
      dependencies: undefined,
      comments: undefined,
    };
    await writeIssueLines(cwd, [original, other]);
    const store = createEmbeddedStore({ cwd, actor: 'forge' });

    const before = await readIssues(cwd);
    await store.addLabel('proj-a1b', 'added');
    // The change is appended as the whole issue; the lines br wrote stay as they were until a flush.
    const appended = await readIssues(cwd);
    expect(appended.startsWith(before)).toBe(true);
    expect(appended.slice(before.length).split('\n')).toHaveLength(2);
    await store.flush();
    const after = (await readIssues(cwd)).split('\n');
    expect(after).toHaveLength(3);
    expect(after[0]).toBe(appended.slice(before.length, -1));
    const rewritten = JSON.parse(after[0]!) as Record<string, unknown>;
    expect(rewritten).toEqual({ ...original, labels: ['added', 'keep'], updated_at: rewritten.updated_at });
    expect(Object.keys(rewritten).indexOf('future_field')).toBeLessThan(
      Object.keys(rewritten).indexOf('labels'),
    );
    expect(after[1]).toBe(before.split('\n')[1]);
    expect(JSON.parse(after[1]!)).toEqual(JSON.parse(JSON.stringify(other)));
    const comment = await store.comment('proj-a1b', 'next');
    expect(comment.id).toBe(8); // comment ids stay unique across the store
  });

  it('uses the prefix of an existing br store and of init', async () => {
    const adopted = await tempWorkspace();
    await writeIssueLines(adopted, [
      {
        id: 'proj-a1b',
        title: 'x',
        status: 'open',
        priority: 2,
        issue_type: 'task',
        created_at: '2026-01-21T21:46:54Z',
        updated_at: '2026-01-21T21:46:54Z',
      },
    ]);
    expect((await createEmbeddedStore({ cwd: adopted }).create({ title: 'y' })).id).toMatch(
      /^proj-[a-z0-9]+$/,
    );

    const { cwd, store } = await initialisedStore({ prefix: 'fx' });
    expect((await store.create({ title: 'y' })).id).toMatch(/^fx-[a-z0-9]{3,}$/);
    expect(JSON.parse(await readFile(join(cwd, '.beads', 'forge-embedded.json'), 'utf8'))).toEqual({
      prefix: 'fx',
    });
    await store.init({ prefix: 'fx' });
    const error = await store.init({ prefix: 'other' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BeadStoreError);
    expect((error as BeadStoreError).code).toBe('CONFIG_ERROR');
  });

  it("says the store is not initialised rather than creating one behind the user's back", async () => {
    const cwd = await tempWorkspace();
    const store = createEmbeddedStore({ cwd });
    for (const attempt of [
      () => store.create({ title: 'x' }),
      () => store.list(),
      () => store.show('bd-1'),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BeadStoreError);
      expect((error as BeadStoreError).code).toBe('NOT_INITIALIZED');
    }
  });
});
