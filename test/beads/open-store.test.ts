// Choosing the store: `auto` follows whichever store made .beads/, and never falls back over br's beads.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { beadsDirOwner, openBeadStore, type StoreFactories } from '../../src/beads/open-store.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import { systemClock } from '../../src/infra/clock.js';
import { AppError, ExitCode } from '../../src/infra/errors.js';

async function repoWith(files: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-open-store-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  if (files.length > 0) await mkdir(join(dir, '.beads'));
  for (const file of files) await writeFile(join(dir, '.beads', file), '');
  return dir;
}

function factories(brOnPath: boolean): StoreFactories {
  return {
    createBrStore: () => ({ ...createMemoryBeadStore(), kind: 'br' }),
    createEmbeddedStore: () => createMemoryBeadStore(),
    probeBr: () => Promise.resolve(brOnPath ? { path: '/bin/br', version: '0.2.19' } : undefined),
  };
}

const open = (cwd: string, brOnPath: boolean, choice: 'auto' | 'br' | 'embedded' = 'auto') =>
  openBeadStore(factories(brOnPath), { cwd, env: {}, choice, actor: 't', clock: systemClock });

describe('beadsDirOwner', () => {
  it.each([
    [['beads.db'], 'br'],
    [['metadata.json', 'issues.jsonl'], 'br'],
    [['config.yaml'], 'br'],
    [['issues.jsonl', 'forge-embedded.json'], 'embedded'],
    // Adopted by br (br init && br sync --import-only): br's from then on.
    [['issues.jsonl', 'forge-embedded.json', 'beads.db'], 'br'],
    [['issues.jsonl'], undefined],
    [[], undefined],
  ])('%j → %s', async (files, owner) => {
    expect(await beadsDirOwner(await repoWith(files))).toBe(owner);
  });
});

describe('openBeadStore', () => {
  it('refuses with exit 3 when br is missing and .beads/ is br’s, naming PATH', async () => {
    const error = await open(await repoWith(['beads.db', 'issues.jsonl']), false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).exitCode).toBe(ExitCode.environment);
    expect((error as AppError).message).toContain('belongs to br');
    expect((error as AppError).hint).toContain('PATH');
  });

  it('keeps the embedded store its .beads/ holds although br is on PATH', async () => {
    const opened = await open(await repoWith(['issues.jsonl', 'forge-embedded.json']), true);
    expect(opened.store.kind).toBe('embedded');
  });

  it('otherwise: br when on PATH, else the embedded store; an explicit choice is taken', async () => {
    expect((await open(await repoWith([]), true)).store.kind).toBe('br');
    expect((await open(await repoWith([]), false)).store.kind).toBe('embedded');
    expect((await open(await repoWith(['beads.db']), true)).store.kind).toBe('br');
    expect((await open(await repoWith(['forge-embedded.json']), true, 'br')).store.kind).toBe('br');
  });
});

describe('which br is run', () => {
  it('the first br on PATH outside the working tree: one an agent could put in node_modules/.bin is passed over', async () => {
    const repo = await repoWith([]);
    await mkdir(join(repo, '.git'));
    const inside = join(repo, 'node_modules', '.bin');
    const outside = await mkdtemp(join(tmpdir(), 'forge-br-bin-'));
    onTestFinished(() => rm(outside, { recursive: true, force: true }));
    for (const dir of [inside, outside]) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'br'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    }
    const probed: string[] = [];
    const created: string[] = [];
    const recording: StoreFactories = {
      ...factories(true),
      probeBr: ({ brPath }) => {
        probed.push(brPath);
        return Promise.resolve({ path: brPath, version: '0.2.19' });
      },
      createBrStore: ({ brPath }) => {
        created.push(brPath);
        return { ...createMemoryBeadStore(), kind: 'br' };
      },
    };
    const env = { PATH: [inside, 'bin', outside, '/usr/bin'].join(':') };
    await openBeadStore(recording, {
      cwd: join(repo, 'node_modules'),
      env,
      choice: 'br',
      actor: 't',
      clock: systemClock,
    });
    expect(probed).toEqual([join(outside, 'br')]);
    expect(created).toEqual([join(outside, 'br')]);
    // A path the user gave (br_path) is used as given.
    await openBeadStore(recording, {
      cwd: repo,
      env,
      choice: 'br',
      actor: 't',
      clock: systemClock,
      brPath: join(inside, 'br'),
    });
    expect(probed.at(-1)).toBe(join(inside, 'br'));
  });
});
