// Chooses the bead store for a workspace: br when asked or when it is on PATH, else the embedded store;
// never the embedded store over a `.beads/` that br made, nor br over one the embedded store made.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../infra/clock.js';
import { EnvironmentError } from '../infra/errors.js';
import { outsideTree } from '../infra/trusted-path.js';
import type { BeadStore } from './types.js';

export type StoreChoice = 'auto' | 'br' | 'embedded';

export interface StoreFactories {
  createBrStore(options: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    actor: string;
    brPath: string;
    clock: Clock;
    /**
     * The version `probeBr` found (or will find), so the store does not ask br again (absent, or
     * answered undefined: the store asks).
     */
    version?: string | Promise<string | undefined>;
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
  brPath?: string | undefined;
  clock: Clock;
  /**
   * Given the br store as soon as it is made, before br has said its version: reads whose call is the
   * same in every version (the epic's graph) can start beside `br version`. The store returned is this
   * one when br is chosen; when it is not (br could not be run), what was read on it must be dropped.
   */
  early?: ((store: BeadStore) => void) | undefined;
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
  // br by name is the first on PATH outside the working tree (infra/trusted-path.ts); a path is as given.
  const brFile = await outsideTree(brPath, options.cwd, options.env);
  const embedded = (): BeadStore | Promise<BeadStore> =>
    factories.createEmbeddedStore({ cwd: options.cwd, actor: options.actor, clock: options.clock });
  // One `br version` per process: the probe's answer goes to the store, which keys its protocol on it.
  const br = (version: string | Promise<string | undefined>): BeadStore | Promise<BeadStore> =>
    factories.createBrStore({
      cwd: options.cwd,
      env: options.env,
      actor: options.actor,
      brPath: brFile,
      clock: options.clock,
      ...(version === 'unknown' ? {} : { version }),
    });

  if (options.choice === 'embedded') return { store: await embedded(), reason: 'store: embedded (chosen)' };
  const owner = options.choice === 'auto' ? await beadsDirOwner(options.cwd) : undefined;
  if (owner === 'embedded') {
    return { store: await embedded(), reason: 'store: embedded (.beads/ holds the embedded store)' };
  }
  const probing = factories.probeBr({ env: options.env, brPath: brFile });
  // With br found, its store is made now on the version to come, for the caller's early reads.
  const early =
    options.early !== undefined && brFile.includes('/')
      ? await br(probing.then((found) => (found?.version === 'unknown' ? undefined : found?.version)))
      : undefined;
  if (early !== undefined) options.early?.(early);
  const probe = await probing;
  const chosen = async (version: string) => early ?? br(version);
  if (options.choice === 'br') {
    if (probe === undefined) {
      throw new EnvironmentError(`br was asked for but '${brPath}' could not be run.`, {
        hint: 'Install br (beads_rust) and put it on PATH, or use --store embedded.',
      });
    }
    return {
      store: await chosen(probe.version),
      reason: `store: br ${probe.version} (chosen)`,
      brVersion: probe.version,
    };
  }
  if (probe !== undefined) {
    return {
      store: await chosen(probe.version),
      reason: `store: br ${probe.version} (found on PATH)`,
      brVersion: probe.version,
    };
  }
  if (owner === 'br') {
    throw new EnvironmentError(
      `.beads/ in ${options.cwd} belongs to br (${BR_FILES.join(', ')}), but '${brPath}' could not be run; Forge will not use its embedded store over br's beads.`,
      {
        hint: `Put the directory that holds br on PATH (check: command -v ${brPath}), or set "br_path" in .forge/config.json to br's full path.`,
      },
    );
  }
  return { store: await embedded(), reason: 'store: embedded (br not found on PATH)' };
}

/** Files only br writes in `.beads/`: its database, and what `br init` adds beside it (kept in git). */
const BR_FILES = ['beads.db', 'metadata.json', 'config.yaml'];
/** The embedded store's own file (it writes nothing else br would not). */
const EMBEDDED_FILE = 'forge-embedded.json';

/**
 * Which store made the repository's `.beads/`: br (its database, or the files `br init` writes and a
 * clone carries), else the embedded store (its metadata file), else none yet.
 */
export async function beadsDirOwner(cwd: string): Promise<'br' | 'embedded' | undefined> {
  const has = (name: string) =>
    stat(join(cwd, '.beads', name)).then(
      () => true,
      () => false,
    );
  const [br, embedded] = await Promise.all([
    Promise.all(BR_FILES.map(has)).then((found) => found.some(Boolean)),
    has(EMBEDDED_FILE),
  ]);
  return br ? 'br' : embedded ? 'embedded' : undefined;
}
