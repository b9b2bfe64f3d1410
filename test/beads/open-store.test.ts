// Choosing the store: `auto` follows whichever store made .beads/, and never falls back over br's beads.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { beadsDirOwner, openBeadStore, type StoreFactories } from '../../src/beads/open-store.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import type { BeadStore } from '../../src/beads/types.js';
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

describe('openBeadStore: the br store before br has said its version', () => {
  /** Factories whose probe answers when the test says, recording the version each br store was given. */
  function pendingProbe(found: boolean) {
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const given: (string | Promise<string | undefined> | undefined)[] = [];
    const made: BeadStore[] = [];
    const recording: StoreFactories = {
      ...factories(found),
      probeBr: async ({ brPath }) => {
        await answered;
        return found ? { path: brPath, version: '0.2.19' } : undefined;
      },
      createBrStore: ({ version }) => {
        given.push(version);
        const store: BeadStore = { ...createMemoryBeadStore(), kind: 'br' };
        made.push(store);
        return store;
      },
    };
    return { recording, answer, given, made };
  }

  /**
   * Opens with an `early` hook, answering the probe only once the hook has the store: what was handed
   * over, what was opened, and the versions the br stores were made on.
   */
  async function openEarly(found: boolean) {
    const probe = pendingProbe(found);
    let handOver: (store: BeadStore) => void = () => undefined;
    const handedOver = new Promise<BeadStore>((resolve) => {
      handOver = resolve;
    });
    const opening = openBeadStore(probe.recording, {
      cwd: await repoWith([]),
      env: {},
      choice: 'auto',
      actor: 't',
      clock: systemClock,
      brPath: '/opt/br/bin/br',
      early: handOver,
    });
    // The probe answers only once the store was handed over: a hook called after it would hang here.
    const early = await handedOver;
    probe.answer();
    return { opened: await opening, early, made: probe.made, given: probe.given };
  }

  it('hands the store over before the version is known, and opens that same store', async () => {
    const { opened, early, made, given } = await openEarly(true);
    expect(opened.store).toBe(early);
    expect(made).toHaveLength(1);
    // The store was made on the answer to come, which is the version the probe found.
    expect(await given[0]).toBe('0.2.19');
    expect(opened.reason).toBe('store: br 0.2.19 (found on PATH)');
  });

  it('opens the embedded store, not the early one, when the br found cannot be run', async () => {
    const { opened, early } = await openEarly(false);
    expect(opened.store.kind).toBe('embedded');
    expect(opened.store).not.toBe(early);
  });

  it('makes no early store when no br was found on PATH', async () => {
    let called = false;
    const opened = await openBeadStore(factories(false), {
      cwd: await repoWith([]),
      env: { PATH: '/nonexistent-forge-bin' },
      choice: 'auto',
      actor: 't',
      clock: systemClock,
      early: () => {
        called = true;
      },
    });
    expect(called).toBe(false);
    expect(opened.store.kind).toBe('embedded');
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
