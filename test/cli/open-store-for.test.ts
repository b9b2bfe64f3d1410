// The store opens on the config's store settings, and the whole config is read once the store is open
// (on br, zod and the config's schemas load while br answers); a config error is still reported first.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreFactories } from '../../src/beads/open-store.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import { openStoreFor, openStoreThenConfig } from '../../src/cli/common.js';
import { loadForgeConfig } from '../../src/cli/forge-config.js';
import type { CliDeps } from '../../src/cli/deps.js';
import { systemClock } from '../../src/infra/clock.js';
import { ConfigError, EnvironmentError } from '../../src/infra/errors.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function repo(config?: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-open-store-'));
  dirs.push(dir);
  await mkdir(join(dir, '.forge'));
  if (config !== undefined) await writeFile(join(dir, '.forge', 'config.json'), JSON.stringify(config));
  return dir;
}

function depsWith(cwd: string, createEmbeddedStore: StoreFactories['createEmbeddedStore']): CliDeps {
  const storeFactories: StoreFactories = {
    createEmbeddedStore,
    createBrStore: () => {
      throw new Error('br is not used here');
    },
    probeBr: () => Promise.resolve(undefined),
  };
  return { cwd, env: {}, clock: systemClock, storeFactories } as unknown as CliDeps;
}

describe('openStoreThenConfig', () => {
  it('reads the same config as a plain load', async () => {
    const cwd = await repo({ runner: { max_attempts: 2 } });
    const asked = openStoreThenConfig(
      depsWith(cwd, () => createMemoryBeadStore()),
      {},
    );
    expect(await asked.config).toEqual(await loadForgeConfig(cwd));
  });

  it('reads the config only once the store is open', async () => {
    const cwd = await repo({ runner: { max_attempts: 4 } });
    let open: () => void = () => undefined;
    const opening = new Promise<void>((resolve) => (open = resolve));
    const deps = depsWith(cwd, async () => {
      await opening;
      return createMemoryBeadStore();
    });
    const asked = openStoreThenConfig(deps, { store: 'embedded' });
    let configRead = false;
    void asked.config.then(() => (configRead = true));
    // The config's module is loaded already (imported above): read at once, it would be done by now.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(configRead).toBe(false);
    open();
    expect((await asked.opened).store.kind).toBe('embedded');
    expect((await asked.config).runner.max_attempts).toBe(4);
  });

  it('opens the store on a config whose store settings are sound, and fails the config on the rest', async () => {
    const cwd = await repo({ store: 'embedded', runner: { max_attempts: 'three' } });
    const asked = openStoreThenConfig(
      depsWith(cwd, () => createMemoryBeadStore()),
      {},
    );
    expect((await asked.opened).reason).toContain('embedded');
    await expect(asked.config).rejects.toThrow(ConfigError);
    await expect(
      openStoreFor(
        depsWith(cwd, () => createMemoryBeadStore()),
        {},
      ),
    ).rejects.toThrow(/max_attempts/);
  });

  it("reports a bad config before the store's own failure", async () => {
    const cwd = await repo({ store: 'embedded', runner: { max_attempts: 'three' } });
    const failing = depsWith(cwd, () => Promise.reject(new EnvironmentError('the store is broken')));
    await expect(openStoreFor(failing, {})).rejects.toThrow(ConfigError);
    // With a sound config the store's failure is what is reported.
    await writeFile(join(cwd, '.forge', 'config.json'), JSON.stringify({ store: 'embedded' }));
    await expect(openStoreFor(failing, {})).rejects.toThrow('the store is broken');
  });
});
