// The store settings status reads from .forge/config.json without zod, and the full check it falls
// back to when it cannot read them.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readStoreSettings } from '../../src/cli/store-settings.js';
import { ConfigError } from '../../src/infra/errors.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function repoWithConfig(config: string | undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-store-settings-'));
  dirs.push(dir);
  if (config !== undefined) {
    await mkdir(join(dir, '.forge'));
    await writeFile(join(dir, '.forge', 'config.json'), config);
  }
  return dir;
}

describe('readStoreSettings', () => {
  it('is auto without a config, and reads store, actor and br_path from one', async () => {
    expect(await readStoreSettings(await repoWithConfig(undefined))).toEqual({ store: 'auto' });
    const config = JSON.stringify({
      store: 'br',
      actor: 'me',
      br_path: '/opt/br',
      runner: { max_attempts: 2 },
    });
    expect(await readStoreSettings(await repoWithConfig(config))).toEqual({
      store: 'br',
      actor: 'me',
      br_path: '/opt/br',
    });
  });

  it('does not judge the settings status does not use', async () => {
    const config = JSON.stringify({ store: 'embedded', gates: { 'bad name!': ['true'] } });
    expect(await readStoreSettings(await repoWithConfig(config))).toMatchObject({ store: 'embedded' });
  });

  it.each([
    ['a store it does not know', JSON.stringify({ store: 'sqlite' }), /store/],
    ['an empty actor', JSON.stringify({ actor: '' }), /actor/],
    ['a br_path that is no string', JSON.stringify({ br_path: 3 }), /br_path/],
    ['JSON that does not parse', '{"store": ', /not valid JSON/],
    ['a document that is no object', '[]', /config\.json/],
  ])('reports %s as the full check does', async (_name, config, field) => {
    const error = await readStoreSettings(await repoWithConfig(config)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(field);
    expect((error as ConfigError).message).toContain('.forge/config.json');
  });
});
