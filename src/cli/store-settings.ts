// Which bead store a command opens: the flags, the store a loop was made on, then `.forge/config.json`.
// `status` reads only the three settings it needs from the config, checked by hand (no zod); a config
// it cannot read that way goes through the full check, which reports what is wrong.
import { join } from 'node:path';
import type { OpenedStore, StoreChoice } from '../beads/open-store.js';
import type { BeadStore } from '../beads/types.js';
import { readFileIfExists } from '../infra/atomic-file.js';
import { isJsonObject } from '../infra/json-object.js';
import type { CliDeps } from './deps.js';
import type { GlobalOptions } from './global-options.js';

export interface StoreSettings {
  store: StoreChoice;
  actor?: string | undefined;
  br_path?: string | undefined;
}

const CONFIG_PATH = join('.forge', 'config.json');

/** The config's store settings, without validating the rest of it (runner, gates, agents, hooks). */
export async function readStoreSettings(cwd: string): Promise<StoreSettings> {
  const text = await readFileIfExists(join(cwd, CONFIG_PATH));
  if (text === undefined) return { store: 'auto' };
  const settings = storeSettingsOf(text);
  if (settings !== undefined) return settings;
  // Bad JSON or a wrong store, actor or br_path: the full check names the problem.
  const { loadForgeConfig } = await import('./forge-config.js');
  return loadForgeConfig(cwd);
}

function storeSettingsOf(text: string): StoreSettings | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(json)) return undefined;
  const store = json.store === undefined ? 'auto' : storeChoice(json.store);
  const { actor, br_path: brPath } = json;
  if (store === undefined || !isName(actor) || !isName(brPath)) return undefined;
  return { store, actor, br_path: brPath };
}

function storeChoice(value: unknown): StoreChoice | undefined {
  return value === 'auto' || value === 'br' || value === 'embedded' ? value : undefined;
}

/** Unset, or a non-empty string (the config's rule for actor and br_path). */
function isName(value: unknown): value is string | undefined {
  return value === undefined || (typeof value === 'string' && value !== '');
}

/**
 * Opens the store the flags and settings ask for. For an epic's loop, the store the loop was created
 * on (in `.forge/loops.json`) comes before the config: its beads are there.
 */
export async function openStoreWith(
  deps: Pick<CliDeps, 'env' | 'clock' | 'storeFactories'>,
  options: GlobalOptions,
  cwd: string,
  settings: StoreSettings,
  epicId?: string,
  early?: (store: BeadStore) => void,
): Promise<OpenedStore> {
  const [{ readLoopsRegistry }, { openBeadStore }] = await Promise.all([
    import('../autoresearch/workspace.js'),
    import('../beads/open-store.js'),
  ]);
  const loopStore =
    options.store === undefined && epicId !== undefined
      ? (await readLoopsRegistry(cwd))[epicId]?.store
      : undefined;
  return openBeadStore(deps.storeFactories, {
    cwd,
    env: deps.env,
    choice: options.store ?? loopStore ?? settings.store,
    actor: options.actor ?? settings.actor ?? 'forge',
    brPath: settings.br_path,
    clock: deps.clock,
    early,
  });
}
