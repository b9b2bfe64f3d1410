// `ralph-loop status` through the executable's short path and through the full commander program:
// the same stdout, stderr and exit code for the same command line, and the short path loads neither
// commander nor zod. Lines the short path does not take still reach commander.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createBenchLoop, growLedger } from '../../scripts/bench/loop-fixture.js';
import { loadLedgerSummary } from '../../src/autoresearch/ledger-summary.js';
import { createBrStore } from '../../src/beads/br/index.js';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import { SETTLE_MS, STATUS_CACHE_FILE } from '../../src/cli/epic-status-cache.js';
import { assertBuilt, BIN, ROOT } from '../support/cli.js';
import { createFakeBrWorkspace, type FakeBrWorkspace } from '../support/fake-br/fake-br-env.js';
import { moduleTrace, packagesOf } from '../support/module-trace.js';

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Packages the process loaded, by name, sorted. */
  packages: string[];
  /** Node's own modules it imported (`node:…`), sorted. */
  builtins: string[];
  /** The files of dist/bundle/ it loaded, in order. */
  files: string[];
  /** Forge's own modules it loaded (dist/ paths), whichever bundle file they came in. */
  modules: string[];
}

let base: string;
let loopRepo: string;
let loopEpic: string;
let epicRepo: string;
let plainEpic: string;
let br: FakeBrWorkspace;
let brEpic: string;
let fullScript: string;
let traceCount = 0;

beforeAll(async () => {
  await assertBuilt();
  base = await mkdtemp(join(tmpdir(), 'forge-status-shortcut-'));
  loopRepo = join(base, 'loop');
  await mkdir(loopRepo);
  const loop = await createBenchLoop(loopRepo, { maxIterations: 0 });
  await growLedger(loop, 40);
  // The arbiter keeps the ledger's summary fresh; a stale one is re-read (and validated) by status.
  const params = { direction: loop.config.metric.direction, target: loop.config.target };
  await loadLedgerSummary(loop.ctx.files, loop.ledgerPath, params);
  loopEpic = loop.epicId;

  epicRepo = join(base, 'epic');
  await mkdir(epicRepo);
  const store = createEmbeddedStore({ cwd: epicRepo, actor: 'test' });
  await store.init({ prefix: 'fx' });
  const epic = await store.create({ title: 'plain epic', type: 'epic' });
  const first = await store.create({ title: 'first', parent: epic.id });
  await store.create({ title: 'after first', parent: epic.id, dependsOn: [first.id] });
  const done = await store.create({ title: 'done', parent: epic.id });
  await store.close(done.id, 'finished');
  const failed = await store.create({ title: 'failed', parent: epic.id, labels: ['ralph:failed'] });
  await store.comment(failed.id, 'ralph-loop attempt 2 of 2 failed: the agent exited 1');
  plainEpic = epic.id;

  // On br, the short path takes br's store (and zod, for its output) from the split build.
  br = await createFakeBrWorkspace();
  const brStore = createBrStore({ cwd: br.root, env: br.env });
  await brStore.init();
  const brEpicBead = await brStore.create({ title: 'epic on br', type: 'epic' });
  const brDone = await brStore.create({ title: 'done on br', parent: brEpicBead.id });
  await brStore.create({ title: 'open on br', parent: brEpicBead.id });
  await brStore.close(brDone.id, 'finished');
  brEpic = brEpicBead.id;

  // The full program, as the executable ran every status before the short path.
  fullScript = join(base, 'full.mjs');
  await writeFile(
    fullScript,
    `import { runRalphLoop } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'cli', 'main.js')).href)};
await runRalphLoop(process.argv);
`,
  );
}, 60_000);

afterAll(async () => {
  if (base !== undefined) await rm(base, { recursive: true, force: true });
  await br?.cleanup();
});

async function run(script: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  traceCount += 1;
  const trace = await moduleTrace(base, `trace-${traceCount}`);
  const child = await execa(process.execPath, [...trace.nodeArgs, script, ...args], {
    cwd,
    env: { ...env, NO_COLOR: '1', LANG: 'C.UTF-8' },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  const loaded = await trace.loaded();
  return {
    exitCode: child.exitCode ?? -1,
    stdout: String(child.stdout),
    // A --debug stack names the files it passed through: the bundle's for the executable, dist/'s
    // modules for the full program. Its frames are left out; that there is a stack is kept.
    stderr: String(child.stderr).replace(/(\n +at [^\n]*)+/g, '\n    at …'),
    packages: packagesOf(loaded),
    builtins: [...new Set(loaded.filter((url) => url.startsWith('node:')))].sort(),
    files: await trace.bundleFiles(),
    modules: loaded.flatMap((url) => /\/dist\/(.+)$/.exec(url)?.[1] ?? []),
  };
}

describe('ralph-loop status, short path and full program', () => {
  const cases: { name: string; repo: () => string; args: () => string[]; env?: () => NodeJS.ProcessEnv }[] = [
    { name: 'a loop', repo: () => loopRepo, args: () => ['status', loopEpic] },
    { name: 'a loop as JSON', repo: () => loopRepo, args: () => ['status', loopEpic, '--json'] },
    { name: 'a loop in ASCII', repo: () => loopRepo, args: () => ['status', '--ascii', loopEpic] },
    {
      name: 'a loop with its beads, from another directory (-C)',
      repo: () => base,
      args: () => ['-C', 'loop', '--json', 'status', loopEpic, '--beads'],
    },
    {
      name: 'a plain epic on the embedded store',
      repo: () => epicRepo,
      args: () => ['--store', 'embedded', 'status', plainEpic],
    },
    { name: 'a plain epic as JSON', repo: () => epicRepo, args: () => ['status', plainEpic, '--json'] },
    { name: 'an unknown epic (an error)', repo: () => epicRepo, args: () => ['status', 'fx-nope'] },
    {
      name: 'an unknown epic, as JSON with --debug',
      repo: () => epicRepo,
      args: () => ['status', 'fx-nope', '--json', '--debug'],
    },
    {
      name: 'a plain epic on br',
      repo: () => br.root,
      args: () => ['--store', 'br', 'status', brEpic],
      env: () => br.env,
    },
    {
      // br's store comes from the split build, its errors too: the short path falls to the full program.
      name: 'an unknown epic on br (an error)',
      repo: () => br.root,
      args: () => ['--store', 'br', 'status', 'bd-nope'],
      env: () => br.env,
    },
  ];

  it.each(cases)('prints the same for $name', async ({ repo, args, env }) => {
    const short = await run(BIN['ralph-loop'], args(), repo(), env?.());
    const full = await run(fullScript, args(), repo(), env?.());
    expect(full.packages).toContain('commander');
    const rest = { packages: [], builtins: [], files: [], modules: [] };
    expect({ ...short, ...rest }).toEqual({ ...full, ...rest });
    // On br the short path loads br's store, with zod, from the split build, and still no commander.
    if (short.exitCode === 0 && env !== undefined) expect(short.packages).toEqual(['zod']);
    if (short.exitCode === 0 && env === undefined) {
      expect(short.packages).toEqual([]);
      // A plain epic's status only reads: node:crypto (random temp names, lock tokens, new ids) would be
      // ~2.5 ms of its start. (A loop's hashes its ledger tail for the summary cache.)
      if (repo() === epicRepo) expect(short.builtins).not.toContain('node:crypto');
      // Its reads are synchronous (src/infra/sync-fs-promises.ts): fs/promises' load and the thread pool
      // it starts were ~6 ms of a status.
      expect(short.builtins).not.toContain('node:fs/promises');
      expect(short.builtins).toContain('node:fs');
    }
  });

  it('prints the plain epic it was shown, with a failed and a blocked bead', async () => {
    const short = await run(BIN['ralph-loop'], ['status', plainEpic], epicRepo);
    expect(short.exitCode, short.stderr).toBe(0);
    // From one file of the build: status-fast.cjs, the short path built as one file, which bin/run-built.js
    // requires (Node's loader pays per file; split, it took ~50, then 3 through the bundle's entry).
    expect(short.files).toEqual(['status-fast.cjs']);
    // Not br's adapter: it is a leaf of its own (scripts/build.mjs ALWAYS_LEAVES), not 36 KB more to parse.
    expect(short.modules).toContain('beads/embedded/store.js');
    expect(short.modules.filter((path) => path.startsWith('beads/br/'))).toEqual([]);
    expect(short.stdout).toContain('4 in all: 1 done, 1 open, 0 in progress, 1 blocked, 1 failed');
    expect(short.stdout).toContain('the agent exited 1');
  });

  it('keeps what it read of a settled store for the next status, and sees the next change', async () => {
    const repo = join(base, 'cached');
    await mkdir(repo);
    const store = createEmbeddedStore({ cwd: repo, actor: 'test' });
    await store.init({ prefix: 'fx' });
    const epic = (await store.create({ title: 'cached epic', type: 'epic' })).id;
    const first = (await store.create({ title: 'first', parent: epic })).id;
    await store.create({ title: 'after first', parent: epic, dependsOn: [first] });
    await mkdir(join(repo, '.forge', 'epics', epic, 'runs'), { recursive: true });
    const cache = join(repo, '.forge', 'epics', epic, STATUS_CACHE_FILE);
    const early = await run(BIN['ralph-loop'], ['status', epic, '--json'], repo);
    expect(early.exitCode, early.stderr).toBe(0);
    // Once the store has settled (epic-status-cache.ts; the in-process tests time the rest).
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 100));
    const made = await run(BIN['ralph-loop'], ['status', epic, '--json'], repo);
    expect(existsSync(cache)).toBe(true);
    const kept = await run(BIN['ralph-loop'], ['status', epic, '--json'], repo);
    const full = await run(fullScript, ['status', epic, '--json'], repo);
    expect(made.stdout).toBe(early.stdout);
    expect(kept.stdout).toBe(early.stdout);
    expect(full.stdout).toBe(early.stdout);
    await store.close(first, 'done');
    const after = await run(BIN['ralph-loop'], ['status', epic], repo);
    expect(after.stdout).toContain('2 in all: 1 done, 1 open, 0 in progress, 0 blocked, 0 failed');
  });

  it('falls to the full program when status-fast.cjs will not load (a half-copied install)', async () => {
    const install = join(base, 'half-copied');
    await cp(join(ROOT, 'bin'), join(install, 'bin'), { recursive: true });
    await cp(join(ROOT, 'package.json'), join(install, 'package.json'));
    const meta = JSON.parse(await readFile(join(ROOT, 'dist', 'bundle', 'meta.json'), 'utf8')) as {
      inputs: Record<string, string[]>;
    };
    for (const file of Object.keys(meta.inputs).filter((name) => name !== 'status-fast.cjs')) {
      await cp(join(ROOT, 'dist', 'bundle', file), join(install, 'dist', 'bundle', file));
    }
    await symlink(join(ROOT, 'node_modules'), join(install, 'node_modules'));
    const args = ['status', plainEpic];
    const half = await run(join(install, 'bin', 'ralph-loop.js'), args, epicRepo);
    const whole = await run(BIN['ralph-loop'], args, epicRepo);
    expect(half.exitCode, half.stderr).toBe(0);
    expect(half.stdout).toBe(whole.stdout);
  });

  // Node's own modules, by the list Node keeps of them (the trace above sees only what is imported).
  // process.stdout to a pipe is a net.Socket; node:fs imported as an ES module reads fs.ReadStream,
  // which loads the stream modules, as a run log read through a stream did; and the summary cache was
  // checked with a sha1. Each cost a status ~4 ms.
  it.each([
    { name: 'a loop', repo: () => loopRepo, epic: () => loopEpic },
    { name: 'a plain epic with a run log', repo: () => epicRepo, epic: () => plainEpic, runLog: true },
  ])("prints the status of $name to a pipe without Node's stream, net or crypto modules", async (each) => {
    if (each.runLog === true) {
      const runs = join(each.repo(), '.forge', 'epics', each.epic(), 'runs');
      await mkdir(runs, { recursive: true });
      const events = [
        { type: 'run_started', ts: '2026-01-01T00:00:00.000Z', run_id: 'r1', epic: each.epic() },
        { type: 'run_finished', ts: '2026-01-01T00:00:09.000Z', run_id: 'r1', reason: 'done' },
      ];
      await writeFile(
        join(runs, '2026-01-01T00-00-00-000Z-r1.jsonl'),
        events.map((event) => `${JSON.stringify(event)}\n`).join(''),
      );
      onTestFinished(() => rm(join(each.repo(), '.forge', 'epics', each.epic()), { recursive: true }));
    }
    const preload = join(base, 'native-modules.cjs');
    const listed = join(base, 'native-modules.txt');
    await writeFile(
      preload,
      // Only what loads after Node's own start: a few of these modules are part of its startup.
      `const before = new Set(process.moduleLoadList);\n` +
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listed)}, process.moduleLoadList.filter((name) => !before.has(name)).join('\\n')));\n`,
    );
    const child = await execa(process.execPath, ['-r', preload, BIN['ralph-loop'], 'status', each.epic()], {
      cwd: each.repo(),
      env: { NO_COLOR: '1', LANG: 'C.UTF-8' },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    expect(child.exitCode, child.stderr).toBe(0);
    expect(child.stdout).toContain(each.epic());
    if (each.runLog === true) expect(child.stdout).toContain('r1');
    const modules = (await readFile(listed, 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('NativeModule '))
      .map((line) => line.slice('NativeModule '.length));
    // The list is this run's (the status read its files through node:fs, synchronously: no fs/promises).
    expect(modules).toContain('os');
    expect(modules).not.toContain('fs/promises');
    expect(modules.filter((name) => /(^|\/)(streams?|net|crypto)(\/|$)/.test(name))).toEqual([]);
    // Nor Node's ES module loader: the executable and status-fast.cjs are CommonJS.
    expect(modules.filter((name) => name.startsWith('internal/modules/esm/'))).toEqual([]);
  });

  it('stops quietly, exit 0, when the reader of its output has gone (EPIPE)', async () => {
    // `true` reads nothing and exits at once: status writes into a pipe nobody holds.
    const line = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN['ralph-loop'])} status ${loopEpic} | true; echo "\${PIPESTATUS[0]}"`;
    const child = await execa('bash', ['-c', line], { cwd: loopRepo, reject: false });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('0');
  });

  it.runIf(existsSync('/dev/full'))(
    'says in one line, exit 1, that stdout refused the status (a full disk)',
    async () => {
      const line = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN['ralph-loop'])} status ${loopEpic} > /dev/full`;
      const child = await execa('bash', ['-c', line], { cwd: loopRepo, reject: false });
      expect(child.exitCode).toBe(1);
      expect(child.stderr).toBe(
        'ralph-loop: could not write the status to stdout: ENOSPC: no space left on device, write',
      );
    },
  );

  it('leaves help, unknown flags and bad values to commander, with its own messages', async () => {
    const bogus = await run(BIN['ralph-loop'], ['status', plainEpic, '--bogus'], epicRepo);
    expect(bogus.exitCode).toBe(2);
    expect(bogus.stderr).toContain("unknown option '--bogus'");
    expect(bogus.packages).toContain('commander');

    const store = await run(BIN['ralph-loop'], ['--store', 'sqlite', 'status', plainEpic], epicRepo);
    expect(store.exitCode).toBe(2);
    expect(store.stderr).toContain("'sqlite' is invalid");

    const help = await run(BIN['ralph-loop'], ['status', '--help'], epicRepo);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Usage: ralph-loop status [options] <epic-id>');
  });
});
