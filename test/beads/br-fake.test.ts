// The fake br itself: it must behave as reference/br.md says br does, or the adapter tests prove nothing.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runProcess } from '../../src/infra/process.js';
import { createFakeBrWorkspace } from '../support/fake-br/fake-br-env.js';

async function fakeBr(version: string) {
  const workspace = await createFakeBrWorkspace({ version });
  onTestFinished(() => workspace.cleanup());
  const beadsDir = join(workspace.root, '.beads');
  const env = { ...workspace.env, BEADS_DIR: beadsDir };
  const br = async (...args: string[]) => {
    const result = await runProcess({ file: 'br', args }, { cwd: workspace.root, env });
    return {
      ...result,
      json: args.includes('--json') ? (JSON.parse(result.stdout || 'null') as unknown) : undefined,
    };
  };
  const create = async (...args: string[]) =>
    ((await br('--json', 'create', ...args)).json as { id: string }).id;
  const ids = async (...args: string[]) =>
    ((await br('--json', 'ready', '--limit', '0', ...args)).json as { id: string }[]).map((row) => row.id);
  expect((await br('init')).exitCode).toBe(0);
  return { br, create, ids, beadsDir };
}

describe('fake br', () => {
  it('0.1.12: rejects `ready --parent` as clap does, logs INFO lines, lists epics and in_progress as ready', async () => {
    const { br, create, ids } = await fakeBr('0.1.12');
    const epic = await create('-t', 'epic', '--', 'Epic');
    const child = await create(`--parent=${epic}`, '--', 'child');
    await br('--json', 'update', child, '--claim');
    const usage = await br('--json', 'ready', '--parent', epic);
    expect(usage).toMatchObject({ exitCode: 2, stdout: '' });
    expect(usage.stderr).toContain("error: unexpected argument '--parent' found");
    expect((await br('--json', 'ready')).stderr).toMatch(/^\S+ {2}INFO /);
    expect(await ids()).toEqual([epic, child]);
    const missing = await br('--json', 'show', 'bd-nope');
    expect(missing).toMatchObject({ exitCode: 3, stdout: '' });
    expect(missing.stderr).toContain('"code": "ISSUE_NOT_FOUND"');
  });

  it('0.1.30: list envelope, {closed, skipped} and NOTHING_TO_DO on stderr; epics with open children not ready', async () => {
    const { br, create, ids } = await fakeBr('0.1.30');
    const epic = await create('-t', 'epic', '--', 'Epic');
    const child = await create(`--parent=${epic}`, '--', 'child');
    expect((await br('--json', 'list', '--limit', '0')).json).toMatchObject({ total: 2, has_more: false });
    expect(await ids()).toEqual([child]);
    await br('--json', 'close', child);
    const again = await br('--json', 'close', child);
    expect(again.exitCode).toBe(3);
    expect(again.json).toEqual({ closed: [], skipped: [{ id: child, reason: 'already closed' }] });
    expect(again.stderr).toContain('NOTHING_TO_DO');
  });

  it('0.2.19: errors on stdout, labels in ready rows, --epic for descendants', async () => {
    const { br, create, ids } = await fakeBr('0.2.19');
    const epic = await create('-t', 'epic', '--', 'Epic');
    const feature = await create(`--parent=${epic}`, '-t', 'feature', '-l', 'a,b', '--', 'feature');
    const leaf = await create(`--parent=${feature}`, '--', 'leaf');
    expect(await ids(`--parent=${epic}`)).toEqual([feature]);
    expect(await ids(`--epic=${epic}`)).toEqual([feature, leaf]);
    const rows = (await br('--json', 'ready', '--parent', epic)).json as { labels: string[] }[];
    expect(rows[0]!.labels).toEqual(['a', 'b']);
    const invalid = await br('--json', 'update', leaf, '--add-label=has space');
    expect(invalid.exitCode).toBe(4);
    expect(invalid.stdout).toContain('"code": "VALIDATION_FAILED"');
  });

  it('blocks on blocking edge types and on a missing blocker, and a blocked parent blocks its children', async () => {
    const { br, create, ids, beadsDir } = await fakeBr('0.2.19');
    const [gate, a, b, c, d] = [
      await create('--', 'gate'),
      await create('--', 'a'),
      await create('--', 'b'),
      await create('--', 'c'),
      await create('--', 'd'),
    ] as [string, string, string, string, string];
    const child = await create(`--parent=${d}`, '--', 'child of d');
    await br('--json', 'dep', 'add', a, gate, '-t', 'conditional-blocks');
    await br('--json', 'dep', 'add', b, gate, '-t', 'waits-for');
    await br('--json', 'dep', 'add', c, gate, '-t', 'related');
    await br('--json', 'dep', 'add', d, gate);
    expect((await ids()).sort()).toEqual([gate, c].sort());
    await br('--json', 'close', gate);
    expect((await ids()).sort()).toEqual([a, b, c, d, child].sort());
    const statePath = join(beadsDir, 'fake-br-state.json');
    const state = JSON.parse(await readFile(statePath, 'utf8')) as { issues: Record<string, unknown> };
    delete state.issues[gate];
    await writeFile(statePath, JSON.stringify(state));
    expect(await ids()).toEqual([c]);
  });

  it('sorts hybrid, limits ready to 20 by default before 0.2.16, and numbers children <parent>.<n>', async () => {
    const { br, create, ids, beadsDir } = await fakeBr('0.1.30');
    const parent = await create('-p', '3', '--', 'low parent');
    const urgent = await create('-p', '1', `--parent=${parent}`, '--', 'urgent');
    const normal = await create('-p', '2', `--parent=${parent}`, '--', 'normal');
    expect([urgent, normal]).toEqual([`${parent}.1`, `${parent}.2`]);
    expect(await ids()).toEqual([urgent, parent, normal]);
    const statePath = join(beadsDir, 'fake-br-state.json');
    const state = JSON.parse(await readFile(statePath, 'utf8')) as { issues: Record<string, object> };
    for (let i = 0; i < 20; i += 1) {
      const stamp = `2099-01-01T00:00:${String(i).padStart(2, '0')}.000000000Z`;
      state.issues[`bd-f${i}`] = {
        ...{ id: `bd-f${i}`, title: `filler ${i}`, status: 'open', priority: 2, issue_type: 'task' },
        ...{ created_at: stamp, updated_at: stamp, labels: [] },
      };
    }
    await writeFile(statePath, JSON.stringify(state));
    expect((await br('--json', 'ready')).json).toHaveLength(20);
    expect(await ids()).toHaveLength(23);
  });

  it('refuses a self-dependency and a cycle with exit 5', async () => {
    const { br, create } = await fakeBr('0.2.19');
    const a = await create('--', 'a');
    const b = await create('--', 'b');
    expect((await br('--json', 'dep', 'add', a, a)).exitCode).toBe(5);
    expect((await br('--json', 'dep', 'add', b, a)).json).toMatchObject({ status: 'ok' });
    const cycle = await br('--json', 'dep', 'add', a, b);
    expect(cycle.exitCode).toBe(5);
    expect(cycle.stdout).toContain('CYCLE_DETECTED');
  });
});
