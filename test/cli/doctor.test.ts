// `forge-pack doctor`: one line per check, a fix for every problem, and an exit code scripts can trust.
import { chmod, cp, mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containmentCheck, programCheck, type DoctorCheck } from '../../src/cli/doctor-checks.js';
import { processStartTicks } from '../../src/infra/pid.js';
import { ROOT } from '../support/cli.js';
import { workspace, type Workspace } from './init-doctor-support.js';

interface Report {
  ok: boolean;
  cwd: string;
  checks: DoctorCheck[];
}

async function doctor(ws: Workspace, args: string[] = [], extra: Parameters<Workspace['forge']>[1] = {}) {
  const run = await ws.forge(['doctor', '--json', ...args], extra);
  const report = JSON.parse(run.stdout) as Report;
  const check = (name: string): DoctorCheck => {
    const found = report.checks.find((c) => c.name === name);
    if (found === undefined) throw new Error(`no check ${name} in ${run.stdout}`);
    return found;
  };
  return { ...run, report, check };
}

const VALID_LOOP = {
  subject: 'parser speed',
  epic_id: 'bd-a1',
  metric: { type: 'hard', command: 'node bench.mjs', score: { from: 'exit-code' } },
  scope: { doer_paths: ['src/'] },
};

describe('forge-pack doctor', () => {
  it('passes on a repo set up with init, one line per check', async () => {
    const ws = await workspace({ claude: '2.1.330 (Claude Code)' });
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    const run = await ws.forge(['doctor']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`Forge doctor: ${ws.dir}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ok {4}node {9}\d+\.\d+\.\d+ \(Forge needs ≥ 20\.11\)$/),
        expect.stringMatching(/^ok {4}git /),
        expect.stringMatching(/^ok {4}config {7}\.forge\/config\.json is valid \(store embedded/),
        expect.stringMatching(/^info {2}br {11}not installed/),
        expect.stringMatching(/^ok {4}store .*\.beads\/issues\.jsonl readable, 0 open beads$/),
        expect.stringMatching(
          /^ok {4}agents {7}claude 2\.1\.330 \(.*\/claude\); not found: codex, opencode, gemini, copilot, qwen, amp, cursor-agent$/,
        ),
        expect.stringMatching(/^ok {4}containment {2}agents run in a PID namespace of their own/),
        expect.stringMatching(/^warn {2}skills /),
      ]),
    );
    expect(run.stdout).toMatch(/Ready, with 1 warning\.\n$/);
  });

  it('prints one JSON document with every check, and fails with exit 3 outside a repo', async () => {
    const ws = await workspace({ git: false });
    const run = await doctor(ws);
    expect(run.code).toBe(3);
    expect(run.report.ok).toBe(false);
    expect(run.report.checks.map((c) => c.name)).toEqual([
      'node',
      'program',
      'git',
      'config',
      'br',
      'store',
      'agents',
      'containment',
      'skills',
      'locks',
      'loops',
    ]);
    expect(run.check('git')).toMatchObject({ status: 'fail', fix: expect.stringContaining('git init') });
    expect(run.check('store')).toMatchObject({ status: 'fail', fix: expect.stringContaining('init') });
    expect(run.check('config')).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('forge-pack init'),
    });
    expect(run.stderr).toContain('2 problems found: git, store.');
    for (const check of run.report.checks.filter((c) => c.status === 'warn' || c.status === 'fail')) {
      expect(check.fix, check.name).toBeTruthy();
    }
  });

  it('fails on a Node older than 20.11', async () => {
    const ws = await workspace();
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    const run = await doctor(ws, [], { nodeVersion: '20.10.0' });
    expect(run.code).toBe(3);
    expect(run.check('node')).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('20.10.0 is too old'),
    });
    expect((await doctor(ws, [], { nodeVersion: '22.1.0' })).check('node').status).toBe('ok');
  });

  it('exits 4 when only a config is wrong, naming the field', async () => {
    const ws = await workspace();
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    await ws.write('.forge/config.json', '{ "store": "embedded", "runner": { "max_attempts": 0 } }\n');
    const run = await doctor(ws);
    expect(run.code).toBe(4);
    expect(run.check('config')).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('.forge/config.json: runner.max_attempts:'),
      fix: expect.stringContaining('forge-pack init --force'),
    });
    expect(run.check('store').status).toBe('ok');
  });

  it('reports br with the features Forge uses, by version', async () => {
    const modern = await workspace({ br: '0.2.19' });
    expect((await modern.forge(['init', '--yes'])).code).toBe(0);
    const ok = await doctor(modern);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.check('br')).toMatchObject({
      status: 'ok',
      summary: expect.stringContaining(
        'ready --parent yes (≥ 0.1.13), --epic yes (≥ 0.2.12), labels in ready rows yes',
      ),
    });
    expect(ok.check('store').summary).toContain('br 0.2.19');

    const old = await workspace({ br: '0.1.12' });
    const warned = await doctor(old);
    expect(warned.check('br')).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('ready --parent no'),
      fix: expect.stringContaining('0.2.12'),
    });
  });

  it('reports the br the runner would run: not one a PATH entry inside the working tree holds', async () => {
    const ws = await workspace({ br: '0.2.19' });
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    const inTree = join(ws.dir, 'node_modules', '.bin');
    await mkdir(inTree, { recursive: true });
    await writeFile(join(inTree, 'br'), '#!/bin/sh\necho \'{"version":"9.9.9"}\'\n');
    await chmod(join(inTree, 'br'), 0o755);
    ws.env.PATH = `${inTree}:${ws.env.PATH ?? ''}`;
    const report = await doctor(ws);
    expect(report.check('br').summary).toContain('0.2.19');
    expect(report.stdout).not.toContain('9.9.9');
  });

  it('fails when the configured br store is not initialised or br is missing', async () => {
    const ws = await workspace({ br: '0.2.19' });
    await ws.write('.forge/config.json', '{ "store": "br" }\n');
    const uninitialised = await doctor(ws);
    expect(uninitialised.code).toBe(3);
    expect(uninitialised.check('store')).toMatchObject({ status: 'fail' });

    const without = await workspace();
    await without.write('.forge/config.json', '{ "store": "br" }\n');
    const missing = await doctor(without);
    expect(missing.code).toBe(3);
    expect(missing.check('br')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('"store": "embedded"'),
    });
  });

  it('gives up on an agent CLI that does not answer, within --timeout', async () => {
    const ws = await workspace({ claude: '2.1.330 (Claude Code)', codex: 'hang' });
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    // The fake codex never answers within the test's timeout: a doctor that waited for it fails by timing out.
    const run = await doctor(ws, ['--timeout', '1']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.check('agents')).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('`codex --version` did not answer within'),
    });
  });

  it('lists every known agent CLI it finds, on PATH and in node_modules/.bin, with its version', async () => {
    const ws = await workspace({
      claude: '2.1.330 (Claude Code)',
      onPath: { copilot: 'GitHub Copilot CLI 1.0.102.', 'cursor-agent': '2026.11.20-abc123' },
      inProjectBin: { opencode: '1.18.33', gemini: '0.61.0' },
    });
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    const run = await doctor(ws);
    const summary = String(run.check('agents')?.summary);
    expect(summary).toMatch(/claude 2\.1\.330 \(.*\/bin\/claude\)/);
    expect(summary).toMatch(/opencode 1\.18\.33 \(.*\/node_modules\/\.bin\/opencode\)/);
    expect(summary).toMatch(/gemini 0\.61\.0 \(.*\/node_modules\/\.bin\/gemini\)/);
    expect(summary).toMatch(/copilot 1\.0\.102 /);
    expect(summary).toMatch(/not found: codex, qwen, amp$/);
  });

  it('warns when the config names an agent CLI that is not installed', async () => {
    const ws = await workspace({ codex: '0.46.0' });
    await ws.write('.forge/config.json', '{ "store": "embedded", "agents": { "doer": "claude-opus" } }\n');
    const run = await doctor(ws);
    expect(run.check('agents')).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('.forge/config.json uses claude'),
      fix: expect.stringContaining('@anthropic-ai/claude-code'),
    });
  });

  it("checks that each of the user's own agents starts a program that exists", async () => {
    const ws = await workspace();
    await ws.write(
      '.forge/config.json',
      JSON.stringify({
        store: 'embedded',
        agents: { judge: './tools/judge.sh --strict' },
        agent_commands: { 'my-agent': ['git', 'status'], 'their-agent': ['their-agent', '--flag'] },
      }),
    );
    const run = await doctor(ws);
    expect(run.check('agent-commands')).toMatchObject({
      status: 'warn',
      summary: expect.stringMatching(
        /^my-agent → git \(.*\/git\); their-agent → their-agent not found; agents\.judge → \.\/tools\/judge\.sh not found$/,
      ),
      fix: expect.stringContaining('`their-agent` and `./tools/judge.sh`'),
    });
    await ws.write('tools/judge.sh', '#!/bin/sh\n');
    await chmod(join(ws.dir, 'tools', 'judge.sh'), 0o755);
    await ws.write(
      '.forge/config.json',
      JSON.stringify({ store: 'embedded', agents: { judge: './tools/judge.sh' } }),
    );
    expect((await doctor(ws)).check('agent-commands')).toMatchObject({ status: 'ok' });
  });

  it("checks that each gate's program exists, on PATH or as a path from the repo, naming the missing", async () => {
    const ws = await workspace();
    await ws.write(
      '.forge/config.json',
      JSON.stringify({
        store: 'embedded',
        gates: {
          test: ['node', 'check.mjs'],
          lint: { argv: ['./tools/lint.sh', '--strict'], timeout_seconds: 60 },
          e2e: ['playwright-nope', 'test'],
        },
      }),
    );
    const run = await doctor(ws);
    expect(run.check('gates')).toMatchObject({
      status: 'warn',
      summary: 'test → node; lint → ./tools/lint.sh not found; e2e → playwright-nope not found',
      fix: expect.stringContaining(
        'Install `./tools/lint.sh` and `playwright-nope` or put it on PATH, or fix the gates lint, e2e',
      ),
    });
    await ws.write('tools/lint.sh', '#!/bin/sh\n');
    await chmod(join(ws.dir, 'tools', 'lint.sh'), 0o755);
    await ws.write(
      '.forge/config.json',
      JSON.stringify({
        store: 'embedded',
        gates: { test: ['node', 'check.mjs'], lint: ['./tools/lint.sh'] },
      }),
    );
    expect((await doctor(ws)).check('gates')).toMatchObject({ status: 'ok' });
  });

  it('names the gates init would find when the config has none, and how to add them', async () => {
    const ws = await workspace();
    await ws.write('pytest.ini', '[pytest]\n');
    await ws.write('Makefile', 'test:\n\tpytest\n');
    // No config of its own: the config check says to run init, and no gates line repeats it.
    expect((await doctor(ws)).report.checks.some((c) => c.name === 'gates')).toBe(false);
    await ws.write('.forge/config.json', JSON.stringify({ store: 'embedded' }));
    const run = await doctor(ws);
    expect(run.check('gates')).toMatchObject({
      status: 'info',
      summary:
        'none configured, so code-writing beads close untested; this repo has test (pytest, from pytest.ini)',
      fix: 'To run them after each code-writing bead, add "gates": {"test":["pytest"]} to .forge/config.json.',
    });
    await ws.write(
      '.forge/config.json',
      JSON.stringify({ store: 'embedded', gates: { test: ['node', 'x.mjs'] } }),
    );
    expect((await doctor(ws)).check('gates')).toMatchObject({ status: 'ok', summary: 'test → node' });
  });

  it('finds installed skills and says when they are out of date', async () => {
    const ws = await workspace();
    const skills = join(ws.env.HOME ?? '', '.claude', 'skills');
    await mkdir(skills, { recursive: true });
    await cp(join(ROOT, 'skills'), skills, { recursive: true });
    const current = await doctor(ws);
    expect(current.check('skills')).toMatchObject({
      status: 'ok',
      summary: expect.stringContaining(`in ${skills}`),
    });

    await writeFile(join(skills, 'forge-init', 'SKILL.md'), '---\nname: forge-init\ndescription: old\n---\n');
    const outdated = await doctor(ws);
    expect(outdated.check('skills')).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('(1 outdated)'),
      fix: expect.stringContaining('forge-pack skills install'),
    });
  });

  it('lists stale runner locks (dead pid on this host) and running ones', async () => {
    const ws = await workspace();
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    const lock = (epic: string, pid: number, pidStart?: number) =>
      ws.write(
        `.forge/epics/${epic}/ralph-loop.lock`,
        JSON.stringify({
          pid,
          host: hostname(),
          started_at: '2026-01-01T00:00:00Z',
          epic,
          run_id: `r-${epic}`,
          pid_start: pidStart,
        }),
      );
    await lock('bd-dead', 4_000_001);
    await lock('bd-live', 4_000_002);
    const run = await doctor(ws, [], { isProcessAlive: (pid) => pid === 4_000_002 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.check('locks')).toMatchObject({
      status: 'warn',
      summary: 'stale: .forge/epics/bd-dead/ralph-loop.lock (pid 4000001, dead)',
      fix: expect.stringContaining('takes a stale lock over'),
    });

    const live = await doctor(ws, [], { isProcessAlive: () => true });
    expect(live.check('locks')).toMatchObject({
      status: 'info',
      summary: expect.stringContaining('bd-dead (pid 4000001'),
    });

    // A live pid that is now another process (its start differs from the lock's) is stale: pid reused.
    const start = processStartTicks(process.pid)!;
    await lock('bd-dead', process.pid, start + 1);
    await lock('bd-live', process.pid, start);
    const reused = await doctor(ws, [], { isProcessAlive: () => true });
    expect(reused.check('locks')).toMatchObject({
      status: 'warn',
      summary: `stale: .forge/epics/bd-dead/ralph-loop.lock (pid ${process.pid}, dead)`,
    });
  });

  it('checks each registered loop: workspace present, config valid', async () => {
    const ws = await workspace();
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    await ws.write('.autoresearch/config.json', JSON.stringify(VALID_LOOP));
    await ws.write(
      '.autoresearch-b/config.json',
      JSON.stringify({ ...VALID_LOOP, caps: { max_iterations: -1 } }),
    );
    await ws.write(
      '.forge/loops.json',
      JSON.stringify({
        'bd-a1': { workspace: '.autoresearch', subject: 'parser speed' },
        'bd-b2': { workspace: '.autoresearch-b' },
        'bd-c3': { workspace: '.autoresearch-gone' },
      }),
    );
    const run = await doctor(ws);
    expect(run.code).toBe(4);
    expect(run.check('loop bd-a1')).toMatchObject({
      status: 'ok',
      summary: expect.stringContaining('"parser speed"'),
    });
    expect(run.check('loop bd-b2')).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('.autoresearch-b/config.json: caps.max_iterations'),
    });
    expect(run.check('loop bd-b2').summary).not.toContain(ws.dir);
    expect(run.check('loop bd-c3')).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('Remove "bd-c3" from .forge/loops.json'),
    });
  });

  it('fails on a malformed .forge/loops.json', async () => {
    const ws = await workspace();
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    await ws.write('.forge/loops.json', '{ "bd-1": "not an object" }');
    const run = await doctor(ws);
    expect(run.code).toBe(4);
    expect(run.check('loops')).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('.forge/loops.json: bd-1'),
    });
  });
});

describe('forge-pack doctor: program', () => {
  const dir = join(ROOT, 'dist', 'bundle');
  const rebuild = `Run \`npm run build\` in ${ROOT} (the copy of Forge these commands run from).`;

  it("says whether commands start from the build's code cache, and how to make it again", () => {
    const clone = { dir, buildable: true };
    expect(programCheck({ status: 'used', ...clone })).toMatchObject({ name: 'program', status: 'ok' });
    for (const status of ['rejected', 'missing'] as const) {
      expect(programCheck({ status, ...clone })).toMatchObject({
        status: 'warn',
        summary: expect.stringContaining('starts ~45 ms slower'),
        fix: rebuild,
      });
    }
    expect(programCheck({ status: 'cache-damaged', ...clone })).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining(`the program's code cache in ${dir} is not the one the build wrote`),
      fix: rebuild,
    });
    expect(programCheck({ status: 'damaged', ...clone })).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining(`the bundled program in ${dir} is not whole`),
      fix: rebuild,
    });
    expect(programCheck({ status: 'unbuilt', ...clone })).toMatchObject({
      status: 'info',
      summary: expect.stringContaining(join(dir, 'program.json')),
    });
  });

  it('never tells an installed package to run a build it does not have', () => {
    // An npm package ships dist/ without src/ or scripts/: `npm run build` would fail there.
    const pkg = { dir, buildable: false };
    for (const status of ['rejected', 'missing'] as const) {
      const check = programCheck({ status, ...pkg });
      expect(check.fix).toContain('install Forge from a clone with ./install.sh');
      expect(check.fix).not.toContain('npm run build');
    }
    for (const status of ['cache-damaged', 'damaged'] as const) {
      expect(programCheck({ status, ...pkg }).fix).toBe(
        `Install Forge again: ${ROOT} is not as it was installed.`,
      );
    }
  });
});

describe('forge-pack doctor: containment', () => {
  it('warns when agents run without a PID namespace, with a fix for why', () => {
    expect(containmentCheck({ kind: 'none', why: 'FORGE_CONTAINMENT=off' })).toMatchObject({
      name: 'containment',
      status: 'warn',
      summary: expect.stringContaining('can outlive its bead'),
      fix: 'Unset FORGE_CONTAINMENT to contain agents again.',
    });
    const denied = containmentCheck({
      kind: 'none',
      why: '`unshare` could not make a PID namespace here (unshare: write failed /proc/self/uid_map: Operation not permitted)',
    });
    expect(denied.summary).toContain('Operation not permitted');
    expect(denied.fix).toMatch(/util-linux.*user namespaces/);
  });
});
