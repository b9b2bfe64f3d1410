// Epics of no-op beads to run: on the embedded store through its own module, and in the fake br's database
// through the fake's own create handler (one `br create` process per bead would cost more than the run).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import {
  createFakeBrWorkspace,
  FAKE_BR_SCRIPT,
  type FakeBrWorkspace,
} from '../../test/support/fake-br/fake-br-env.js';
import { expectSuccess, runTimed } from './support.js';

export interface SeededEpic {
  epicId: string;
  beadIds: string[];
}

export const BEAD_DESCRIPTION = 'A no-op bead for the benchmark: there is nothing to do; finish at once.';

/** An epic with `count` independent open beads in `<dir>/.beads` (embedded store). */
export async function seedEmbeddedEpic(dir: string, count: number): Promise<SeededEpic> {
  const store = createEmbeddedStore({ cwd: dir, actor: 'bench' });
  await store.init({ prefix: 'bd' });
  const epic = await store.create({ title: 'bench: no-op epic', type: 'epic', priority: 1 });
  const beadIds: string[] = [];
  for (let i = 1; i <= count; i += 1) {
    const bead = await store.create({ title: `no-op ${i}`, parent: epic.id, description: BEAD_DESCRIPTION });
    beadIds.push(bead.id);
  }
  return { epicId: epic.id, beadIds };
}

interface FakeBrState {
  issues: Record<string, unknown>;
}
interface FakeBrStateModule {
  emptyState(prefix: string): FakeBrState;
  saveState(beadsDir: string, state: FakeBrState): void;
}
interface FakeBrCommandsModule {
  COMMAND_HANDLERS: {
    create(ctx: {
      state: FakeBrState;
      options: Record<string, unknown>;
      positionals: Record<string, unknown>;
      actor: string;
    }): { id: string };
  };
}

async function importFake<T>(name: string): Promise<T> {
  const url = pathToFileURL(join(FAKE_BR_SCRIPT, '..', name)).href;
  return (await import(url)) as T;
}

export interface FakeBrEpic extends SeededEpic {
  workspace: FakeBrWorkspace;
  /** The workspace's `.beads` directory (BEADS_DIR for br calls made outside the adapter). */
  beadsDir: string;
}

/**
 * A fake br workspace (version 0.2.19 unless told) holding an epic with `count` open beads, written
 * through the fake's own state and create code, then checked with a real `br ready` so a change in the
 * fake's format fails here rather than skewing the numbers. The call log starts empty.
 */
export async function seedFakeBrEpic(count: number, version = '0.2.19'): Promise<FakeBrEpic> {
  const workspace = await createFakeBrWorkspace({ version });
  const beadsDir = join(workspace.root, '.beads');
  await mkdir(beadsDir, { recursive: true });
  const { emptyState, saveState } = await importFake<FakeBrStateModule>('state.mjs');
  const { COMMAND_HANDLERS } = await importFake<FakeBrCommandsModule>('commands.mjs');
  const state = emptyState('bd');
  const create = (title: string, options: Record<string, unknown>) =>
    COMMAND_HANDLERS.create({ state, options, positionals: { title }, actor: 'bench' }).id;
  const epicId = create('bench: no-op epic', { type: 'epic', priority: '1' });
  const beadIds: string[] = [];
  for (let i = 1; i <= count; i += 1) {
    beadIds.push(create(`no-op ${i}`, { parent: epicId, description: BEAD_DESCRIPTION }));
  }
  saveState(beadsDir, state);

  const env = brEnv(workspace);
  const ready = expectSuccess(
    await runTimed('br', ['--json', 'ready', '--limit', '0', `--parent=${epicId}`], {
      cwd: workspace.root,
      env,
    }),
    'br ready (checking the seeded fake br)',
  );
  const listed = (JSON.parse(ready.stdout) as unknown[]).length;
  if (listed !== count) {
    throw new Error(
      `The seeded fake br lists ${listed} ready bead(s), not ${count}: its state format changed; update scripts/bench/seed.ts.`,
    );
  }
  await writeFile(env.FAKE_BR_LOG!, '');
  return { epicId, beadIds, workspace, beadsDir };
}

/** The fake br workspace's env as a plain record (what children get). */
export function brEnv(workspace: FakeBrWorkspace): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(workspace.env)) if (value !== undefined) env[key] = value;
  return { LANG: 'C.UTF-8', NO_COLOR: '1', ...env };
}

export interface BrCallCounts {
  total: number;
  byCommand: Record<string, number>;
}

/** The fake br's call log, counted by command (`update --claim` counted as `claim`). */
export async function countBrCalls(workspace: FakeBrWorkspace): Promise<BrCallCounts> {
  const calls = await workspace.calls();
  const byCommand: Record<string, number> = {};
  for (const call of calls) {
    let name = call.command ?? '?';
    if (name === 'update' && call.argv.includes('--claim')) name = 'claim';
    byCommand[name] = (byCommand[name] ?? 0) + 1;
  }
  return { total: calls.length, byCommand };
}
