// `forge-pack init`: what it writes, which store it creates, what it refuses, and what it asks.
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgeConfigSchema } from '../../src/cli/forge-config.js';
import { mergeGitignore } from '../../src/cli/init-plan.js';
import { parseYesNo, terminalPrompter } from '../../src/cli/prompt.js';
import { scriptedPrompter, workspace } from './init-doctor-support.js';

const NODE_PROJECT = {
  'README.md': 'hello\n',
  'package.json': JSON.stringify({
    name: 'demo',
    scripts: { test: 'vitest run', lint: 'eslint .', typecheck: 'tsc --noEmit', build: 'tsc', dev: 'vite' },
  }),
};

const readJson = async (path: string): Promise<unknown> =>
  JSON.parse(await readFile(path, 'utf8')) as unknown;

describe('forge-pack init', () => {
  it('writes the config, the .gitignore and the embedded store when br is absent', async () => {
    const ws = await workspace({ files: NODE_PROJECT, claude: '2.1.330 (Claude Code)' });
    const run = await ws.forge(['init', '--yes']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');

    const config = await readJson(join(ws.dir, '.forge', 'config.json'));
    expect(config).toEqual({
      store: 'embedded',
      agents: {
        default: 'claude-sonnet',
        doer: 'claude-opus',
        judge: 'claude-haiku',
        strategist: 'claude-sonnet',
      },
      gates: {
        test: ['npm', 'test'],
        lint: ['npm', 'run', 'lint'],
        typecheck: ['npm', 'run', 'typecheck'],
        build: ['npm', 'run', 'build'],
      },
    });
    expect(forgeConfigSchema.safeParse(config).success).toBe(true);
    expect(await readFile(join(ws.dir, '.beads', 'issues.jsonl'), 'utf8')).toBe('');
    expect(run.stderr).toContain(`Forge is set up in ${ws.dir}`);
    expect(run.stderr).toContain('test: npm test · lint: npm run lint');

    // Run state is ignored by git; the config is not.
    const ignored = (path: string): boolean => {
      try {
        execFileSync('git', ['check-ignore', '-q', '--no-index', path], { cwd: ws.dir, env: ws.repo?.env });
        return true;
      } catch {
        return false;
      }
    };
    expect(ignored('.forge/epics/bd-1/ralph-loop.lock')).toBe(true);
    expect(ignored('.forge/epics/bd-1/runs/r1.jsonl')).toBe(true);
    expect(ignored('.forge/worktrees/bd-1/src/a.ts')).toBe(true);
    expect(ignored('.forge/config.json')).toBe(false);
    expect(ignored('.forge/loops.json')).toBe(false);
  });

  it('is idempotent: a second run changes no file and says what it kept', async () => {
    const ws = await workspace({ files: NODE_PROJECT });
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    const files = async () =>
      Promise.all(
        ['.forge/config.json', '.forge/.gitignore', '.beads/issues.jsonl'].map((p) =>
          readFile(join(ws.dir, p), 'utf8'),
        ),
      );
    const before = await files();

    const again = await ws.forge(['init', '--yes', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(await files()).toEqual(before);
    expect(await readdir(join(ws.dir, '.forge'))).toEqual(['.gitignore', 'config.json']);
    const report = JSON.parse(again.stdout) as { config: { action: string }; gitignore: { action: string } };
    expect(report.config.action).toBe('kept');
    expect(report.gitignore.action).toBe('unchanged');
  });

  it('pins br and runs br init when br is on PATH', async () => {
    const ws = await workspace({ br: '0.2.19', claude: '2.1.330' });
    const run = await ws.forge(['init', '--yes', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { store: { kind: string; version: string } };
    expect(report.store).toMatchObject({ kind: 'br', version: '0.2.19' });
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toMatchObject({ store: 'br' });
    const calls = (await readFile(ws.brLog, 'utf8')).split('\n').filter((l) => l !== '');
    expect(calls.some((line) => (JSON.parse(line) as { command?: string }).command === 'init')).toBe(true);
    // The store works afterwards, through the same CLI.
    expect((await ws.forge(['beads', 'create', 'first', '-t', 'epic'])).code).toBe(0);
  });

  it('uses the embedded store when asked, even with br installed', async () => {
    const ws = await workspace({ br: '0.2.19' });
    const run = await ws.forge(['--store', 'embedded', 'init', '--yes']);
    expect(run.code, run.stderr).toBe(0);
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toMatchObject({ store: 'embedded' });
    expect(await readFile(ws.brLog, 'utf8').catch(() => '')).not.toContain('"init"');
    expect(await readFile(join(ws.dir, '.beads', 'issues.jsonl'), 'utf8')).toBe('');
  });

  it('refuses --store br without br, before writing anything', async () => {
    const ws = await workspace();
    const run = await ws.forge(['init', '--yes', '--store', 'br']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('br is not on PATH');
    expect(run.stderr).toContain('--store embedded');
    expect(await readdir(ws.dir)).not.toContain('.forge');
  });

  it('stops outside a git repository with the fix', async () => {
    const ws = await workspace({ git: false });
    const run = await ws.forge(['init', '--yes']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`${ws.dir} is not inside a git repository.`);
    expect(run.stderr).toContain('git init');
    expect(await readdir(ws.dir)).toEqual([]);
  });

  it('keeps an existing config as it is, and names the gates it lacks', async () => {
    const ws = await workspace({ files: NODE_PROJECT });
    const mine =
      '{\n  "store": "embedded",\n  "agents": { "default": "codex" },\n  "gates": { "test": ["make", "check"] }\n}\n';
    await ws.write('.forge/config.json', mine);
    const run = await ws.forge(['init', '--yes']);
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(join(ws.dir, '.forge', 'config.json'), 'utf8')).toBe(mine);
    expect(run.stderr).toContain('kept as it is');
    expect(run.stderr).toContain(
      'Detected but not in your config: lint (npm run lint), typecheck (npm run typecheck), build (npm run build)',
    );
    expect(await readFile(join(ws.dir, '.forge', '.gitignore'), 'utf8')).toContain('epics/');
  });

  it('replaces an existing config only with --force, keeping the old one as a .bak', async () => {
    const ws = await workspace({ files: NODE_PROJECT });
    const mine = '{ "store": "embedded", "gates": {} }\n';
    await ws.write('.forge/config.json', mine);
    const run = await ws.forge(['init', '--yes', '--force', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { config: { action: string; backup: string } };
    expect(report.config.action).toBe('replaced');
    expect(report.config.backup).toMatch(/^\.forge\/config\.json\.\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.bak$/);
    expect(await readFile(join(ws.dir, report.config.backup), 'utf8')).toBe(mine);
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toMatchObject({
      gates: { lint: ['npm', 'run', 'lint'] },
    });
  });

  it('refuses an invalid config, naming the field, unless --force', async () => {
    const ws = await workspace();
    await ws.write('.forge/config.json', '{ "store": "sqlite", "colour": 1 }\n');
    const run = await ws.forge(['init', '--yes']);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('.forge/config.json: colour: unknown key');
    expect(run.stderr).toContain('.forge/config.json: store:');
    expect(run.stderr).toContain('forge-pack init --force');
    expect(await readdir(join(ws.dir, '.forge'))).toEqual(['config.json']);

    const forced = await ws.forge(['init', '--yes', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toMatchObject({ store: 'embedded' });
  });

  it('refuses a --store that contradicts the kept config', async () => {
    const ws = await workspace({ br: '0.2.19' });
    await ws.write('.forge/config.json', '{ "store": "embedded" }\n');
    const run = await ws.forge(['init', '--yes', '--store', 'br']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('already sets "store": "embedded"');
    expect(run.stderr).toContain('forge-pack init --force --store br');
  });

  it('sets every role to codex when Codex is the only agent CLI', async () => {
    const ws = await workspace({ codex: '0.46.0' });
    expect((await ws.forge(['init', '--yes'])).code).toBe(0);
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toMatchObject({
      agents: { default: 'codex' },
    });
  });

  it('offers a CLI without an adapter by name: Qwen Code as named agents, full and read-only', async () => {
    const ws = await workspace({ onPath: { qwen: '0.15.10' } });
    const run = await ws.forge(['init', '--yes']);
    expect(run.code, run.stderr).toBe(0);
    const written = await readJson(join(ws.dir, '.forge', 'config.json'));
    expect(written).toMatchObject({
      agents: { default: 'qwen', judge: 'qwen-read-only' },
      agent_commands: {
        qwen: ['qwen', '--output-format', 'json', '--approval-mode', 'yolo'],
        'qwen-read-only': ['qwen', '--output-format', 'json', '--approval-mode', 'plan'],
      },
    });
    // The config it wrote is one Forge accepts.
    expect((await ws.forge(['doctor', '--json'])).stdout).toMatch(/"name":\s*"config",\s*"status":\s*"ok"/);
  });

  it('finds an agent CLI installed as a devDependency and offers it', async () => {
    const ws = await workspace({ inProjectBin: { gemini: '0.61.0' } });
    const asked = scriptedPrompter(() => true);
    expect((await ws.forge(['init'], { prompter: asked })).code).toBe(0);
    expect(asked.asked).toContain(
      'Use Gemini CLI (gemini: pro does, flash judges) as the agent for every role?',
    );
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toMatchObject({
      agents: { default: 'gemini-pro', judge: 'gemini-flash' },
    });
  });

  it('warns when no agent CLI is installed, and when run from a subdirectory', async () => {
    const ws = await workspace();
    await ws.write('packages/web/README.md', 'web\n');
    const run = await ws.forge(['init', '--yes', '-C', join(ws.dir, 'packages', 'web')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      'No agent CLI found (claude, codex, opencode, gemini, copilot, qwen, amp, cursor-agent), so the config names none',
    );
    expect(run.stderr).toContain('ralph-loop <epic> --agent');
    // Nothing names an agent this machine does not have: ralph-loop --agent is not overruled.
    const written = await readJson(join(ws.dir, 'packages', 'web', '.forge', 'config.json'));
    expect(written).toMatchObject({ agents: {} });
    expect(JSON.stringify(written)).not.toMatch(/claude|codex/);
    expect(run.stderr).toContain(`subdirectory of the repository ${ws.dir}`);
    expect(await readdir(join(ws.dir, 'packages', 'web', '.forge'))).toContain('config.json');
  });

  it('passes --prefix to the new store', async () => {
    const ws = await workspace();
    expect((await ws.forge(['init', '--yes', '--prefix', 'web'])).code).toBe(0);
    const created = await ws.forge(['beads', 'create', 'first']);
    expect(created.stdout).toMatch(/^web-[a-z0-9]+\n$/);
  });
});

describe('forge-pack init on a terminal', () => {
  it('asks about the store and each gate, then confirms before writing', async () => {
    const ws = await workspace({ files: NODE_PROJECT, br: '0.2.19' });
    const prompter = scriptedPrompter((q) => !q.includes('Keep beads in br') && !q.includes('"lint" gate'));
    const run = await ws.forge(['init'], { prompter });
    expect(run.code, run.stderr).toBe(0);
    expect(prompter.asked).toEqual([
      'br 0.2.19 is installed. Keep beads in br (no: in .beads/issues.jsonl without br)?',
      'Use `npm test` (from package.json) as the "test" gate?',
      'Use `npm run lint` (from package.json) as the "lint" gate?',
      'Use `npm run typecheck` (from package.json) as the "typecheck" gate?',
      'Use `npm run build` (from package.json) as the "build" gate?',
      `Forge will write .forge/config.json, write .forge/.gitignore, set up the embedded bead store in ${ws.dir}. Go ahead?`,
    ]);
    const config = (await readJson(join(ws.dir, '.forge', 'config.json'))) as {
      store: string;
      gates: object;
    };
    expect(config.store).toBe('embedded');
    expect(Object.keys(config.gates)).toEqual(['test', 'typecheck', 'build']);
  });

  it('writes nothing when the user says no at the end', async () => {
    const ws = await workspace({ files: NODE_PROJECT });
    const prompter = scriptedPrompter((q) => !q.endsWith('Go ahead?'));
    const run = await ws.forge(['init'], { prompter });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('nothing was written');
    expect(await readdir(ws.dir)).not.toContain('.forge');
    expect(await readdir(ws.dir)).not.toContain('.beads');
  });

  it('asks before replacing an existing config (default no)', async () => {
    const ws = await workspace();
    await ws.write('.forge/config.json', '{ "store": "embedded" }\n');
    const keep = scriptedPrompter((q) => !q.includes('exists. Replace'));
    expect((await ws.forge(['init'], { prompter: keep })).code).toBe(0);
    expect(keep.asked[0]).toContain('.forge/config.json exists. Replace it');
    expect(await readFile(join(ws.dir, '.forge', 'config.json'), 'utf8')).toBe('{ "store": "embedded" }\n');

    const replace = scriptedPrompter(() => true);
    expect((await ws.forge(['init'], { prompter: replace })).code).toBe(0);
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toHaveProperty('agents');
  });

  it('asks which installed agent CLI to use, and writes none when the user takes neither', async () => {
    const ws = await workspace({ claude: '2.1.330', codex: '0.46.0' });
    const codex = scriptedPrompter((q) => !q.includes('Claude Code'));
    expect((await ws.forge(['init'], { prompter: codex })).code).toBe(0);
    expect(codex.asked.filter((q) => q.includes('agent'))).toEqual([
      'Use Claude Code (claude: opus does, haiku judges, sonnet plans) as the agent for every role?',
      'Use Codex (codex) as the agent for every role?',
    ]);
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toMatchObject({
      agents: { default: 'codex' },
    });

    const neither = scriptedPrompter((q) => !q.includes('as the agent'));
    const run = await ws.forge(['init', '--force'], { prompter: neither });
    expect(run.code, run.stderr).toBe(0);
    expect(await readJson(join(ws.dir, '.forge', 'config.json'))).toMatchObject({ agents: {} });
    expect(run.stderr).toContain('agent_commands');
  });

  it('asks nothing with --yes', async () => {
    const ws = await workspace({ files: NODE_PROJECT, br: '0.2.19' });
    const prompter = scriptedPrompter(() => {
      throw new Error('asked a question under --yes');
    });
    const run = await ws.forge(['init', '--yes'], { prompter });
    expect(run.code, run.stderr).toBe(0);
    expect(prompter.asked).toEqual([]);
  });
});

describe('init helpers', () => {
  it('reads yes/no answers, taking the default on an empty one', () => {
    expect(parseYesNo('', true)).toBe(true);
    expect(parseYesNo('  ', false)).toBe(false);
    expect(parseYesNo('Y', false)).toBe(true);
    expect(parseYesNo('no', true)).toBe(false);
    expect(parseYesNo('maybe', true)).toBeUndefined();
  });

  it('asks on a terminal until the answer is yes or no, and stops on Ctrl-C', async () => {
    expect(terminalPrompter(new PassThrough(), new PassThrough())).toBeUndefined();
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    const prompter = terminalPrompter(input, output);
    if (prompter === undefined) throw new Error('expected a prompter on a TTY');

    const answer = prompter.confirm('Replace it?', false);
    input.write('maybe\r');
    setTimeout(() => input.write('y\r'), 20);
    expect(await answer).toBe(true);
    expect(shown.match(/Replace it\? \[y\/N\]/g)).toHaveLength(2);

    const empty = prompter.confirm('Go ahead?', true);
    input.write('\r');
    expect(await empty).toBe(true);

    const interrupted = prompter.confirm('Go ahead?', true);
    input.write('\x03');
    await expect(interrupted).rejects.toMatchObject({
      exitCode: 130,
      message: expect.stringContaining('nothing was written'),
    });
  });

  it('adds only the missing entries to an existing .forge/.gitignore, keeping the user’s lines', () => {
    const merged = mergeGitignore('# mine\nscratch/\nepics/');
    expect(merged.action).toBe('updated');
    expect(merged.text.startsWith('# mine\nscratch/\nepics/\n')).toBe(true);
    expect(merged.added).toEqual(['worktrees/', 'logs/', '*.lock', '*.tmp', '*.bak']);
    expect(mergeGitignore(merged.text).action).toBe('unchanged');
  });
});
