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
