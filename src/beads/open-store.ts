// Chooses the bead store for a workspace: br when asked or when it is on PATH, else the embedded store.
import type { Clock } from '../infra/clock.js';
import { EnvironmentError } from '../infra/errors.js';
import type { BeadStore } from './types.js';

export type StoreChoice = 'auto' | 'br' | 'embedded';

export interface StoreFactories {
  createBrStore(options: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    actor: string;
    brPath: string;
    clock: Clock;
  }): BeadStore | Promise<BeadStore>;
  createEmbeddedStore(options: { cwd: string; actor: string; clock: Clock }): BeadStore | Promise<BeadStore>;
  probeBr(options: {
    env: NodeJS.ProcessEnv;
    brPath: string;
  }): Promise<{ path: string; version: string } | undefined>;
}

export interface OpenStoreOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  choice: StoreChoice;
  actor: string;
  brPath?: string;
  clock: Clock;
}

export interface OpenedStore {
  store: BeadStore;
  /** Why this store was chosen, for `doctor` and `--debug`. */
  reason: string;
  brVersion?: string;
}

export async function openBeadStore(
  factories: StoreFactories,
  options: OpenStoreOptions,
): Promise<OpenedStore> {
  const brPath = options.brPath ?? 'br';
  const embedded = (): BeadStore | Promise<BeadStore> =>
    factories.createEmbeddedStore({ cwd: options.cwd, actor: options.actor, clock: options.clock });
  const br = (): BeadStore | Promise<BeadStore> =>
    factories.createBrStore({
      cwd: options.cwd,
      env: options.env,
      actor: options.actor,
      brPath,
      clock: options.clock,
    });

  if (options.choice === 'embedded') return { store: await embedded(), reason: 'store: embedded (chosen)' };
  const probe = await factories.probeBr({ env: options.env, brPath });
  if (options.choice === 'br') {
    if (probe === undefined) {
      throw new EnvironmentError(`br was asked for but '${brPath}' could not be run.`, {
        hint: 'Install br (beads_rust) and put it on PATH, or use --store embedded.',
      });
    }
    return { store: await br(), reason: `store: br ${probe.version} (chosen)`, brVersion: probe.version };
  }
  if (probe !== undefined) {
    return {
      store: await br(),
      reason: `store: br ${probe.version} (found on PATH)`,
      brVersion: probe.version,
    };
  }
  return { store: await embedded(), reason: 'store: embedded (br not found on PATH)' };
}
