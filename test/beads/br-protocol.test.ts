// The br adapter's call protocol over the fake br: argv, environment, and how many br calls each operation costs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBrStore } from '../../src/beads/br/index.js';
import type { Bead, BeadStore } from '../../src/beads/types.js';
import { makeBrFixture } from '../support/fake-br/br-store-fixture.js';
import type { FakeBrCall, FakeBrWorkspace } from '../support/fake-br/fake-br-env.js';

const GLOBALS = ['--json', '--actor=ralph-loop', '--lock-timeout', '60000'];

/** Runs `action` and returns the br calls it made. */
async function callsOf(workspace: FakeBrWorkspace, action: () => Promise<unknown>): Promise<FakeBrCall[]> {
  const before = (await workspace.calls()).length;
  await action();
  return (await workspace.calls()).slice(before);
}

const commandsOf = (calls: FakeBrCall[]) => calls.map((call) => call.command);

async function epicWithChildren(store: BeadStore, titles: string[]) {
  const epic = await store.create({ title: 'Epic', type: 'epic' });
  const children = [];
  for (const title of titles) children.push(await store.create({ title, parent: epic.id }));
  return { epic, children };
}

describe('br call protocol on 0.2.19', () => {
  it('runs a bead (ready, claim, close) in three br calls, probing the version once per store', async () => {
    const { store, workspace } = await makeBrFixture();
    const { epic, children } = await epicWithChildren(store, ['a', 'b']);
    await store.ready(epic.id); // warm-up: the one version probe
    const calls = await callsOf(workspace, async () => {
      const [next] = await store.ready(epic.id);
      expect((await store.claim(next!.id)).ok).toBe(true);
      expect(await store.close(next!.id, 'done')).toEqual({ ok: true });
    });
    expect(commandsOf(calls)).toEqual(['ready', 'update', 'close']);
    expect(calls[0]!.argv).toEqual([...GLOBALS, 'ready', '--limit', '0', `--parent=${epic.id}`]);
    expect(calls[1]!.argv).toEqual([...GLOBALS, 'update', children[0]!.id, '--claim']);
    expect(calls[2]!.argv).toEqual([...GLOBALS, 'close', children[0]!.id, '--reason=done']);
    expect(commandsOf(await workspace.calls()).filter((c) => c === 'version')).toHaveLength(1);
  });

  it('asks for all descendants with one `ready --epic` call', async () => {
    const { store, workspace } = await makeBrFixture();
    const { epic } = await epicWithChildren(store, ['a']);
    await store.ready(epic.id);
    const calls = await callsOf(workspace, () => store.ready(epic.id, { recursive: true }));
    expect(calls.map((c) => c.argv)).toEqual([[...GLOBALS, 'ready', '--limit', '0', `--epic=${epic.id}`]]);
  });

  it('checks a bead with show before claiming it when no recent ready listed it', async () => {
    const { store, workspace, clock } = await makeBrFixture();
    const { epic, children } = await epicWithChildren(store, ['a', 'b']);
    expect(commandsOf(await callsOf(workspace, () => store.claim(children[0]!.id)))).toEqual([
      'show',
      'update',
    ]);
    await store.ready(epic.id);
    clock.advance(60_000); // the listing is now too old to trust
    expect(commandsOf(await callsOf(workspace, () => store.claim(children[1]!.id)))).toEqual([
      'show',
      'update',
    ]);
  });

  it('claims a bead it has just shown open without showing it again, and shows one it found closed', async () => {
    const { store, workspace, clock } = await makeBrFixture();
    const { children } = await epicWithChildren(store, ['a', 'b', 'c']);
    const [a, b, c] = children as [Bead, Bead, Bead];
    const shownThenClaimed = (id: string) =>
      callsOf(workspace, async () => {
        await store.show(id);
        return store.claim(id);
      });
    expect(commandsOf(await shownThenClaimed(a.id))).toEqual(['show', 'update']);
    // Shown too long ago: checked again.
    await store.show(b.id);
    clock.advance(60_000);
    expect(commandsOf(await callsOf(workspace, () => store.claim(b.id)))).toEqual(['show', 'update']);
    // Shown closed: the claim checks for itself and refuses.
    await store.close(c.id, 'done');
    const calls = await callsOf(workspace, async () => {
      await store.show(c.id);
      expect(await store.claim(c.id)).toMatchObject({ ok: false, reason: `${c.id} is closed, not open` });
    });
    expect(commandsOf(calls)).toEqual(['show', 'show']);
  });

  it('passes the environment br needs and strips output-format overrides, in the project root', async () => {
    const { store, workspace } = await makeBrFixture({
      extraEnv: {
        BR_OUTPUT_FORMAT: 'toon',
        TOON_DEFAULT_FORMAT: 'toon',
        RUST_LOG: 'debug',
        BEADS_DIR: '/elsewhere',
      },
    });
    await store.create({ title: 'x' });
    await store.list();
    for (const call of await workspace.calls()) {
      expect(call.cwd).toBe(workspace.root);
      expect(call.env).toEqual({
        BEADS_DIR: join(workspace.root, '.beads'),
        RUST_LOG: 'error',
        NO_COLOR: '1',
      });
    }
  });

  it('puts --json, the actor and the lock timeout on every call and --limit 0 on list and ready', async () => {
    const { store, workspace } = await makeBrFixture({ store: { actor: 'night-shift' } });
    const { epic } = await epicWithChildren(store, ['a']);
    await store.list({ all: true });
    await store.ready(epic.id);
    const calls = (await workspace.calls()).filter((c) => c.command !== 'init');
    for (const call of calls) {
      expect(call.argv.slice(0, 4)).toEqual(['--json', '--actor=night-shift', '--lock-timeout', '60000']);
    }
    for (const call of calls.filter((c) => c.command === 'list' || c.command === 'ready')) {
      expect(call.argv.join(' ')).toContain('--limit 0');
    }
    const init = (await workspace.calls()).find((c) => c.command === 'init');
    expect(init?.argv).toEqual(['--actor=night-shift', '--lock-timeout', '60000', 'init']);
  });

  it('hands titles, descriptions, reasons and comments to br verbatim, never through a shell', async () => {
    const { store, workspace } = await makeBrFixture();
    const title = '--help -rf $(touch pwned) `touch pwned2` "q" \'s\' ; echo $HOME > leak | cat';
    const description = '-d --json\n$(touch pwned3)';
    const bead = await store.create({ title, description });
    await store.comment(bead.id, '--reason=nope $(touch pwned4)');
    await store.close(bead.id, '--force && touch pwned5');
    const shown = await store.show(bead.id);
    expect(shown).toMatchObject({ title, description, close_reason: '--force && touch pwned5' });
    expect(shown.comments.map((c) => c.text)).toEqual(['--reason=nope $(touch pwned4)']);
    const create = (await workspace.calls()).find((c) => c.command === 'create')!;
    expect(create.argv.slice(-2)).toEqual(['--', title]);
    expect(create.argv).toContain(`--description=${description}`);
    for (const file of ['pwned', 'pwned2', 'pwned3', 'pwned4', 'pwned5', 'leak']) {
      expect(existsSync(join(workspace.root, file))).toBe(false);
    }
  });

  it('creates labels and blockers in the create call itself', async () => {
    const { store, workspace } = await makeBrFixture();
    const first = await store.create({ title: 'first' });
    const calls = await callsOf(workspace, () =>
      store.create({ title: 'second', labels: ['role:judge', 'iter:2'], dependsOn: [first.id] }),
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]!.argv).toContain('--labels=role:judge,iter:2');
    expect(calls[0]!.argv).toContain(`--deps=blocks:${first.id}`);
  });

  it('refuses a label with a comma before calling br, so it cannot be split in two', async () => {
    const { store, workspace } = await makeBrFixture();
    const calls = await callsOf(workspace, () =>
      expect(store.create({ title: 'x', labels: ['a,b'] })).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
      }),
    );
    expect(calls).toEqual([]);
  });

  it('reopens with a comment carrying the reason', async () => {
    const { store, workspace } = await makeBrFixture();
    const bead = await store.create({ title: 'x' });
    await store.claim(bead.id);
    const calls = await callsOf(workspace, () => store.reopen(bead.id, 'runner died'));
    expect(calls.map((c) => c.argv.slice(4))).toEqual([
      ['update', bead.id, '--status', 'open'],
      ['comments', 'add', bead.id, '--', 'runner died'],
    ]);
  });

  it('serialises writes to one workspace, even from two stores', async () => {
    const { store, workspace, clock } = await makeBrFixture({});
    const other = createBrStore({ cwd: workspace.root, env: workspace.env, clock });
    await workspace.setFaults([{ command: 'create', action: 'delay', ms: 150 }]);
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : other).create({ title: `t${i}` })),
    );
    const creates = (await workspace.calls()).filter((c) => c.command === 'create');
    expect(creates).toHaveLength(6);
    expect(creates.filter((c) => c.overlap)).toEqual([]);
    expect(new Set(created.map((b) => b.id)).size).toBe(6);
  });
});

describe('br call protocol with the version still being asked', () => {
  /** A version answer the test gives when it chooses. */
  function pendingVersion() {
    let answer: (version: string | undefined) => void = () => undefined;
    const version = new Promise<string | undefined>((resolve) => {
      answer = resolve;
    });
    return { version, answer };
  }

  it('reads the epic without waiting for the version; ready waits for it and keys its call on it', async () => {
    const { store: setup, workspace, clock } = await makeBrFixture();
    const { epic, children } = await epicWithChildren(setup, ['a']);
    const pending = pendingVersion();
    const store = createBrStore({ cwd: workspace.root, env: workspace.env, clock, version: pending.version });
    const before = (await workspace.calls()).length;
    const graph = await store.graph(epic.id);
    expect(graph.beads.map((b) => b.id)).toEqual([children[0]!.id]);
    let readyDone = false;
    const ready = store.ready(epic.id, { recursive: true }).then((beads) => {
      readyDone = true;
      return beads;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readyDone).toBe(false);
    pending.answer('0.1.30');
    expect((await ready).map((b) => b.id)).toEqual([children[0]!.id]);
    const calls = (await workspace.calls()).slice(before);
    // No probe of its own: the answer given keyed ready on 0.1.30's protocol (--parent -r, then show).
    expect(calls.map((c) => c.command)).toEqual(['dep list', 'show', 'ready', 'show']);
    expect(calls[2]!.argv.slice(4)).toEqual(['ready', '--limit', '0', `--parent=${epic.id}`, '--recursive']);
  });

  it('probes for itself when the answer names no version', async () => {
    const { store: setup, workspace, clock } = await makeBrFixture();
    const { epic } = await epicWithChildren(setup, ['a']);
    // Counted from before the store is made: its probe may start as soon as it learns the answer
    // names no version, and be logged before ready is even asked.
    const calls = await callsOf(workspace, () => {
      const store = createBrStore({
        cwd: workspace.root,
        env: workspace.env,
        clock,
        version: Promise.resolve(undefined),
      });
      return store.ready(epic.id, { recursive: true });
    });
    expect(commandsOf(calls)).toEqual(['version', 'ready']);
  });
});

describe('br call protocol on older versions', () => {
  it('0.1.30: `ready --parent E --recursive`, then one show for the labels ready rows lack', async () => {
    const { store, workspace } = await makeBrFixture({ version: '0.1.30' });
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const a = await store.create({ title: 'a', parent: epic.id, labels: ['role:doer'] });
    await store.ready(epic.id);
    let ready: Bead[] = [];
    const calls = await callsOf(workspace, async () => {
      ready = await store.ready(epic.id, { recursive: true });
    });
    expect(calls.map((c) => c.argv.slice(4))).toEqual([
      ['ready', '--limit', '0', `--parent=${epic.id}`, '--recursive'],
      ['show', a.id],
    ]);
    expect(ready.map((b) => [b.id, b.labels])).toEqual([[a.id, ['role:doer']]]);
  });

  it.each(['0.1.12', '0.1.30', '0.2.19'])('%s: ready beads carry their labels', async (version) => {
    const { store } = await makeBrFixture({ version });
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    await store.create({ title: 'a', parent: epic.id, labels: ['role:judge', 'iter:1'] });
    const [bead] = await store.ready(epic.id);
    expect([...bead!.labels].sort()).toEqual(['iter:1', 'role:judge']);
  });

  it('0.1.12: no `ready --parent`; one ready of the workspace and one show to find the children', async () => {
    const { store, workspace } = await makeBrFixture({ version: '0.1.12' });
    const { epic, children } = await epicWithChildren(store, ['a', 'b']);
    const other = await epicWithChildren(store, ['elsewhere']);
    await store.claim(children[1]!.id);
    await store.ready(epic.id);
    const calls = await callsOf(workspace, async () => {
      expect((await store.ready(epic.id)).map((b) => b.id)).toEqual([children[0]!.id]);
    });
    expect(calls.map((c) => c.argv.slice(4))).toEqual([
      ['ready', '--limit', '0'],
      ['show', children[0]!.id, other.children[0]!.id],
    ]);
  });

  it('0.1.12: descendants found by walking up parents with batched show calls', async () => {
    const { store, workspace } = await makeBrFixture({ version: '0.1.12' });
    const epic = await store.create({ title: 'Epic', type: 'epic' });
    const feature = await store.create({ title: 'feature', type: 'feature', parent: epic.id });
    const leaf = await store.create({ title: 'leaf', parent: feature.id });
    const other = await epicWithChildren(store, ['elsewhere']);
    await store.ready(epic.id);
    let ready: string[] = [];
    const calls = await callsOf(workspace, async () => {
      ready = (await store.ready(epic.id, { recursive: true })).map((b) => b.id);
    });
    expect(ready.sort()).toEqual([feature.id, leaf.id].sort());
    // One show for the ready beads, then one per level of parents not seen yet (here the other epic).
    expect(commandsOf(calls)).toEqual(['ready', 'show', 'show']);
    expect(calls[1]!.argv.slice(5).sort()).toEqual([feature.id, leaf.id, other.children[0]!.id].sort());
    expect(calls[2]!.argv.slice(5)).toEqual([other.epic.id]);
    expect(calls.some((c) => c.argv.some((a) => a.startsWith('--parent')))).toBe(false);
  });
});
