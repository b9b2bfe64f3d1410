// What a plain epic's run loads: the runner, the store and the one agent adapter it runs, not the
// autoresearch loop's parts, the pipeline's, the import parsers or the other agents' adapters.
import { execa } from 'execa';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import { assertBuilt, BIN } from '../support/cli.js';
import { moduleTrace, packagesOf } from '../support/module-trace.js';

let dir: string;

beforeAll(async () => {
  await assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'forge-run-loads-'));
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a plain epic run', () => {
  it('loads neither the loop, the pipeline, the importers nor agents it does not run', async () => {
    const repo = join(dir, 'repo');
    const store = createEmbeddedStore({ cwd: repo, actor: 'test' });
    await store.init({ prefix: 'fx' });
    const epic = await store.create({ title: 'plain', type: 'epic' });
    await store.create({ title: 'one', parent: epic.id });
    const agent = join(dir, 'agent.mjs');
    await writeFile(agent, "process.stdin.resume(); process.stdin.on('end', () => undefined);\n");
    const trace = await moduleTrace(dir);
    const child = await execa(
      process.execPath,
      [
        ...trace.nodeArgs,
        BIN['ralph-loop'],
        '--store',
        'embedded',
        epic.id,
        '--agent',
        `'${process.execPath}' '${agent}'`,
        '--max-attempts',
        '1',
      ],
      { cwd: repo, env: { NO_COLOR: '1', HOME: dir }, reject: false, stdin: 'ignore' },
    );
    expect(child.exitCode, child.stderr).toBe(0);
    expect((await store.show(epic.id)).status).toBe('closed');
    const loaded = await trace.loaded();
    const dist = loaded.flatMap((url) => /\/dist\/(.+)$/.exec(url)?.[1] ?? []);
    expect(dist).toContain('loop/runner.js');
    expect(dist).toContain('agents/command.js');
    expect(
      dist.filter((path) =>
        /^(autoresearch\/(executors|validate-loop|pipeline-state|stamp|config)|beads\/import\/|agents\/(claude|codex|gemini|opencode|scripted|registry)\b)/.test(
          path,
        ),
      ),
    ).toEqual([]);
    // The NDJSON printer is for --json runs only.
    expect(packagesOf(loaded)).not.toContain('ndjson');
    // execa (the agents' and gates' process module, the largest package a run loads) comes after the
    // store is open: the store's first calls do not wait for it to load.
    const firstExeca = loaded.findIndex((url) => url.includes('/node_modules/execa/'));
    const storeOpened = loaded.findIndex((url) => url.includes('/beads/embedded/'));
    expect(storeOpened).toBeGreaterThanOrEqual(0);
    expect(firstExeca).toBeGreaterThan(storeOpened);
  });
});
