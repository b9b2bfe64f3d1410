// A run on br starts its first br calls before zod loads: zod (~30 ms to load here) and the config's
// schemas come in while br answers, not before br is asked. Seen from inside the runner: a preload
// records, at each process the runner starts, whether zod has run yet (zod v4 sets a global as it loads).
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrStore } from '../../src/beads/br/index.js';
import { assertBuilt, BIN } from '../support/cli.js';
import { createFakeBrWorkspace, type FakeBrWorkspace } from '../support/fake-br/fake-br-env.js';

let dir: string;
let br: FakeBrWorkspace;

beforeAll(async () => {
  await assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'forge-run-first-calls-'));
  br = await createFakeBrWorkspace();
});

afterAll(async () => {
  await br?.cleanup();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface Spawned {
  argv: string[];
  zod: boolean;
}

/** A preload that appends one line per child process the runner starts: its argv, and whether zod ran. */
async function spawnProbe(log: string): Promise<string> {
  const probe = join(dir, 'spawn-probe.mjs');
  await writeFile(
    probe,
    `import { ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
const spawn = ChildProcess.prototype.spawn;
ChildProcess.prototype.spawn = function (options) {
  const line = { argv: options.args.map(String), zod: globalThis.__zod_globalConfig !== undefined };
  appendFileSync(${JSON.stringify(log)}, JSON.stringify(line) + '\\n');
  return spawn.call(this, options);
};
`,
  );
  return pathToFileURL(probe).href;
}

describe('a run on br', () => {
  it('asks br before zod and the config schemas load, and has zod by the time it claims', async () => {
    const store = createBrStore({ cwd: br.root, env: br.env });
    await store.init();
    const epic = await store.create({ title: 'first calls', type: 'epic' });
    const bead = await store.create({ title: 'one', parent: epic.id });
    // A config beyond the store's settings needs its schemas: still checked, only later.
    await mkdir(join(br.root, '.forge'), { recursive: true });
    await writeFile(
      join(br.root, '.forge', 'config.json'),
      JSON.stringify({ store: 'br', runner: { max_attempts: 1 }, gates: {} }),
    );
    const agent = join(dir, 'agent.mjs');
    await writeFile(agent, "process.stdin.resume(); process.stdin.on('end', () => undefined);\n");
    const log = join(dir, 'spawned.jsonl');
    await writeFile(log, '');
    const child = await execa(
      process.execPath,
      [
        '--import',
        await spawnProbe(log),
        BIN['ralph-loop'],
        epic.id,
        '--agent',
        `'${process.execPath}' '${agent}'`,
      ],
      { cwd: br.root, env: { ...br.env, NO_COLOR: '1', HOME: dir }, reject: false, stdin: 'ignore' },
    );
    expect(child.exitCode, child.stderr).toBe(0);
    expect((await store.show(bead.id)).status).toBe('closed');

    const spawned = (await readFile(log, 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Spawned);
    const brCalls = spawned.filter((call) => call.argv.includes('--json'));
    const first = brCalls.slice(0, 2);
    expect(first.map((call) => call.argv.find((word) => ['version', 'dep'].includes(word))).sort()).toEqual([
      'dep',
      'version',
    ]);
    expect(
      first.map((call) => call.zod),
      JSON.stringify(spawned),
    ).toEqual([false, false]);
    // The probe sees zod once it has loaded: the claim's answer needed it.
    const claim = brCalls.find((call) => call.argv.includes('--claim'));
    expect(claim?.zod, JSON.stringify(spawned)).toBe(true);
  });

  it('still reports a bad config before a br that cannot be run, as when the config was read first', async () => {
    const missing = await createFakeBrWorkspace({ withoutBr: true });
    try {
      await mkdir(join(missing.root, '.forge'), { recursive: true });
      await writeFile(
        join(missing.root, '.forge', 'config.json'),
        JSON.stringify({ store: 'br', runner: { max_attempts: 'three' } }),
      );
      const child = await execa(process.execPath, [BIN['ralph-loop'], 'bd-any'], {
        cwd: missing.root,
        env: { ...missing.env, NO_COLOR: '1', HOME: dir },
        reject: false,
        stdin: 'ignore',
      });
      expect(child.stderr).toContain('max_attempts');
      expect(child.stderr).not.toContain('could not be run');
      expect(child.exitCode, child.stderr).not.toBe(0);
    } finally {
      await missing.cleanup();
    }
  });
});
