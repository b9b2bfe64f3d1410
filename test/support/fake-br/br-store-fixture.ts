// Test helper: a br store over the fake br in a fresh temp project, cleaned up when the test finishes.
import { onTestFinished } from 'vitest';
import { createBrStore } from '../../../src/beads/br/index.js';
import type { BrStoreOptions } from '../../../src/beads/br/index.js';
import type { BeadStore } from '../../../src/beads/types.js';
import type { Clock } from '../../../src/infra/clock.js';
import type { FakeBrWorkspace, FakeBrWorkspaceOptions } from './fake-br-env.js';
import { createFakeBrWorkspace } from './fake-br-env.js';

/** A clock whose sleeps return at once and are recorded, so retry backoff costs no time. */
export interface RecordingClock extends Clock {
  sleeps: number[];
  advance(ms: number): void;
}

export function recordingClock(start = 1_700_000_000_000): RecordingClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    async sleep(ms) {
      sleeps.push(ms);
      now += ms;
    },
  };
}

export interface BrFixture {
  store: BeadStore;
  workspace: FakeBrWorkspace;
  clock: RecordingClock;
}

export async function makeBrFixture(
  options: FakeBrWorkspaceOptions & { init?: boolean; store?: Partial<BrStoreOptions> } = {},
): Promise<BrFixture> {
  const workspace = await createFakeBrWorkspace(options);
  onTestFinished(() => workspace.cleanup());
  const clock = recordingClock();
  const store = createBrStore({ cwd: workspace.root, env: workspace.env, clock, ...options.store });
  if (options.init !== false) await store.init();
  return { store, workspace, clock };
}
