// The settings Forge gives Gemini CLI on every run: a system settings file of its own, merged with the
// user's, in a directory Gemini CLI accepts; and what happens when that cannot be done or is refused.
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGeminiRunner } from '../../src/agents/gemini.js';
import { geminiRunHome } from '../../src/agents/gemini-home.js';
import { mergeSettings, systemSettingsEnv, withForgeSettings } from '../../src/agents/gemini-settings.js';
import type { AgentMode } from '../../src/agents/types.js';
import { setUpFakeAgents } from '../support/fake-agents/harness.js';
import type { FakeAction } from '../support/fake-agents/harness.js';
import { deadPid } from '../support/pids.js';
import { replay } from './recorded-streams.js';

/** Plan mode's way out, sub-agents, and the web tools. */
const READ_ONLY_EXCLUDED = ['exit_plan_mode', 'invoke_agent', 'google_web_search', 'web_fetch'];

async function run(
  mode: AgentMode,
  actions: FakeAction[],
  runningAsRoot = true,
  prepare: (dir: string) => Promise<void> = async () => {},
) {
  const fakes = await setUpFakeAgents();
  await prepare(fakes.dir);
  const env = fakes.env(actions);
  const runner = createGeminiRunner({ cli: 'gemini', text: 'gemini' }, { killGraceMs: 200, runningAsRoot });
  const result = await runner.run({
    prompt: 'Judge.',
    cwd: fakes.work,
    env,
    mode,
    timeoutMs: 20_000,
  });
  return { fakes, env, result, calls: await fakes.calls() };
}

describe('gemini adapter as root: per-run system settings', () => {
  it.each<AgentMode>(['full', 'read-only'])(
    'a %s run gets a settings file under HOME without the directory tree or GEMINI.md from parents',
    async (mode) => {
      const { fakes, calls, result } = await run(mode, replay('gemini-0.61.0-full.jsonl'));
      expect(result.outcome).toBe('ok');
      const path = calls[0]!.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? '';
      expect(path.startsWith(join(fakes.dir, '.cache', 'forge', 'gemini') + '/')).toBe(true);
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
        context: { includeDirectoryTree: false, memoryBoundaryMarkers: [] },
        // A read-only run also loses plan mode's way out and sub-agents.
        ...(mode === 'read-only' ? { tools: { exclude: READ_ONLY_EXCLUDED } } : {}),
      });
      // Gemini CLI skips a system settings file that anyone but its owner can write, or any parent of.
      for (const dir of [join(fakes.dir, '.cache', 'forge'), join(fakes.dir, '.cache', 'forge', 'gemini')])
        expect((await stat(dir)).mode & 0o777).toBe(0o700);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    },
  );

  it("keeps the system settings already in force, with Forge's keys over them, and leaves that file alone", async () => {
    const fakes = await setUpFakeAgents();
    const admin = join(fakes.dir, 'admin.json');
    const original = JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' } },
      context: { includeDirectoryTree: true, fileName: ['AGENTS.md'] },
    });
    await writeFile(admin, original);
    const env = await systemSettingsEnv({ HOME: fakes.dir, GEMINI_CLI_SYSTEM_SETTINGS_PATH: admin }, 'full');
    expect(env.GEMINI_CLI_SYSTEM_SETTINGS_PATH).not.toBe(admin);
    expect(JSON.parse(await readFile(env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? '', 'utf8'))).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
      context: { includeDirectoryTree: false, fileName: ['AGENTS.md'], memoryBoundaryMarkers: [] },
    });
    expect(await readFile(admin, 'utf8')).toBe(original);
  });

  it('tightens a cache directory that already existed with a looser mode', async () => {
    const fakes = await setUpFakeAgents();
    await mkdir(join(fakes.dir, '.cache', 'forge', 'gemini'), { recursive: true, mode: 0o777 });
    await systemSettingsEnv({ HOME: fakes.dir }, 'full');
    expect((await stat(join(fakes.dir, '.cache', 'forge', 'gemini'))).mode & 0o777).toBe(0o700);
  });

  it('does not start Gemini CLI when the system settings in force are not JSON, and says which file', async () => {
    const fakes = await setUpFakeAgents();
    const admin = join(fakes.dir, 'admin.json');
    await writeFile(admin, '{ // a comment\n }');
    const env = fakes.env(replay('gemini-0.61.0-full.jsonl'), { GEMINI_CLI_SYSTEM_SETTINGS_PATH: admin });
    const result = await createGeminiRunner({ cli: 'gemini', text: 'gemini' }, { runningAsRoot: true }).run({
      prompt: 'Judge.',
      cwd: fakes.work,
      env,
      mode: 'read-only',
      timeoutMs: 20_000,
    });
    expect(result.outcome).toBe('error');
    expect(result.fatal).toBe(true);
    expect(result.message).toContain(admin);
    expect(await fakes.calls()).toEqual([]);
    expect(await readFile(admin, 'utf8')).toBe('{ // a comment\n }');
  });

  it('stops a run whose Gemini CLI skips the settings file, as an error of the machine', async () => {
    const fakes = await setUpFakeAgents();
    const path =
      (await systemSettingsEnv({ HOME: fakes.dir }, 'read-only')).GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? '';
    const warning = `Security Warning: Skipping system settings file '${path}': Parent directory '/x' is insecure`;
    const actions: FakeAction[] = [
      { stderr: warning },
      { sleepMs: 10_000 },
      ...replay('gemini-0.61.0-full.jsonl'),
    ];
    const runner = createGeminiRunner(
      { cli: 'gemini', text: 'gemini' },
      { killGraceMs: 200, runningAsRoot: true },
    );
    const result = await runner.run({
      prompt: 'Judge.',
      cwd: fakes.work,
      env: fakes.env(actions),
      mode: 'read-only',
      timeoutMs: 20_000,
    });
    expect(result.outcome).toBe('error');
    expect(result.fatal).toBe(true);
    expect(result.environment).toBe(true);
    expect(result.message).toContain('is insecure');
    expect(result.finalText).toBe('');
  });

  it("adds a read-only run's excluded tools to those the settings in force exclude, keeping the rest", async () => {
    const fakes = await setUpFakeAgents();
    const admin = join(fakes.dir, 'admin.json');
    await writeFile(
      admin,
      JSON.stringify({ tools: { exclude: ['web_fetch', 'invoke_agent'], core: ['read_file'] } }),
    );
    const env = await systemSettingsEnv(
      { HOME: fakes.dir, GEMINI_CLI_SYSTEM_SETTINGS_PATH: admin },
      'read-only',
    );
    const written: unknown = JSON.parse(await readFile(env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? '', 'utf8'));
    expect(written).toMatchObject({
      tools: {
        exclude: ['web_fetch', 'invoke_agent', 'exit_plan_mode', 'google_web_search'],
        core: ['read_file'],
      },
    });
  });

  it('gives a read-only run nothing that starts a command, pre-approves a tool or widens what it reads', () => {
    const base = {
      mcpServers: { scoring: { command: 'sh' } },
      hooks: { BeforeAgent: [] },
      hooksConfig: { enabled: true },
      tools: { discoveryCommand: 'x', callCommand: 'y', allowed: ['run_shell_command'], core: ['read_file'] },
      context: { includeDirectories: ['/'], fileName: 'BOOST.md', loadMemoryFromIncludeDirectories: true },
      security: { auth: { selectedType: 'gemini-api-key' } },
    };
    expect(withForgeSettings(base, 'read-only')).toEqual({
      tools: { core: ['read_file'], exclude: READ_ONLY_EXCLUDED },
      context: { includeDirectoryTree: false, memoryBoundaryMarkers: [] },
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
    // A doer's run keeps the user's own, with Forge's keys over them.
    expect(withForgeSettings(base, 'full')).toEqual({
      ...base,
      context: { ...base.context, includeDirectoryTree: false, memoryBoundaryMarkers: [] },
    });
  });

  it('merges objects key by key and lets anything else replace', () => {
    expect(mergeSettings({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [] }, d: { e: 2 } })).toEqual({
      a: { b: 1, c: [] },
      d: { e: 2 },
    });
  });
});

describe('gemini adapter as another user: a home of Forge’s with its settings', () => {
  const user = {
    security: { auth: { selectedType: 'oauth-personal' } },
    context: { includeDirectoryTree: true },
  };
  const prepareHome = async (dir: string) => {
    await mkdir(join(dir, '.gemini', 'tmp'), { recursive: true });
    await writeFile(join(dir, '.gemini', 'settings.json'), JSON.stringify(user));
    await writeFile(join(dir, '.gemini', 'oauth_creds.json'), '{"token":"t"}');
    await writeFile(join(dir, '.env'), 'GEMINI_API_KEY=k\n');
  };

  it("points GEMINI_CLI_HOME at a home of the run's own, removed when the run ends", async () => {
    const { fakes, calls, result } = await run(
      'read-only',
      replay('gemini-0.61.0-full.jsonl'),
      false,
      prepareHome,
    );
    expect(result.outcome).toBe('ok');
    const env = calls[0]!.env;
    expect(env.GEMINI_CLI_SYSTEM_SETTINGS_PATH).toBeUndefined();
    const home = env.GEMINI_CLI_HOME ?? '';
    expect(home.startsWith(join(fakes.dir, '.cache', 'forge', 'gemini', 'run-'))).toBe(true);
    expect(home).toContain('-read-only-');
    expect(existsSync(home)).toBe(false);
    expect(JSON.parse(await readFile(join(fakes.dir, '.gemini', 'settings.json'), 'utf8'))).toEqual(user);
  });

  it("holds the user's settings with Forge's keys over them, the rest of ~/.gemini linked, and an empty tmp", async () => {
    const fakes = await setUpFakeAgents();
    await prepareHome(fakes.dir);
    await mkdir(join(fakes.dir, '.gemini', 'tmp', 'repo', 'memory'), { recursive: true });
    await writeFile(join(fakes.dir, '.gemini', 'tmp', 'repo', 'memory', 'MEMORY.md'), '- a note\n');
    await mkdir(join(fakes.dir, '.gemini', 'tmp', 'bin'));
    await writeFile(join(fakes.dir, '.gemini', 'GEMINI.md'), '- mine\n');
    const first = await geminiRunHome({ HOME: fakes.dir }, 'read-only', true);
    const second = await geminiRunHome({ HOME: fakes.dir }, 'read-only', true);
    const home = first.env.GEMINI_CLI_HOME ?? '';
    // Two runs at once never share a home.
    expect(second.env.GEMINI_CLI_HOME).not.toBe(home);
    expect(JSON.parse(await readFile(join(home, '.gemini', 'settings.json'), 'utf8'))).toEqual({
      security: { auth: { selectedType: 'oauth-personal' } },
      context: { includeDirectoryTree: false, memoryBoundaryMarkers: [] },
      tools: { exclude: READ_ONLY_EXCLUDED },
    });
    expect(await readlink(join(home, '.gemini', 'oauth_creds.json'))).toBe(
      join(fakes.dir, '.gemini', 'oauth_creds.json'),
    );
    expect((await lstat(join(home, '.gemini', 'tmp'))).isDirectory()).toBe(true);
    expect(await readdir(join(home, '.gemini', 'tmp'))).toEqual(['bin']);
    expect(await readlink(join(home, '.gemini', 'tmp', 'bin'))).toBe(
      join(fakes.dir, '.gemini', 'tmp', 'bin'),
    );
    expect(await readlink(join(home, '.env'))).toBe(join(fakes.dir, '.env'));
    // The global memory is a copy: a run's write to it stays in its home.
    expect((await lstat(join(home, '.gemini', 'GEMINI.md'))).isFile()).toBe(true);
    await writeFile(join(home, '.gemini', 'GEMINI.md'), '- a run note\n');
    expect(await readFile(join(fakes.dir, '.gemini', 'GEMINI.md'), 'utf8')).toBe('- mine\n');
    await first.remove();
    await second.remove();
    expect(existsSync(home)).toBe(false);
    // Removing the home removed links, never what they pointed at.
    expect(await readFile(join(fakes.dir, '.gemini', 'oauth_creds.json'), 'utf8')).toBe('{"token":"t"}');
    expect(existsSync(join(fakes.dir, '.gemini', 'tmp', 'repo', 'memory', 'MEMORY.md'))).toBe(true);
  });

  it('removes the homes a killed Forge left, never one whose maker still runs', async () => {
    const fakes = await setUpFakeAgents();
    await prepareHome(fakes.dir);
    const dir = join(fakes.dir, '.cache', 'forge', 'gemini');
    const hash = 'a'.repeat(20);
    // A pid that was a process and is gone: a child that has exited.
    const dead = deadPid();
    const made = {
      dead: join(dir, `run-${hash}-full-${dead}-AbC123`),
      live: join(dir, `run-${hash}-read-only-${process.ppid}-XyZ789`),
      oldUnnamed: join(dir, `run-${hash}-full-Qq1234`),
      newUnnamed: join(dir, `run-${hash}-full-Rr5678`),
    };
    for (const path of Object.values(made)) {
      await mkdir(join(path, '.gemini', 'tmp', 'repo'), { recursive: true });
      await writeFile(join(path, '.gemini', 'tmp', 'repo', 'chat.json'), '{"note":"the doer was here"}');
    }
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    await utimes(made.oldUnnamed, twoDaysAgo, twoDaysAgo);
    const run = await geminiRunHome({ HOME: fakes.dir }, 'full', true);
    expect(existsSync(made.dead)).toBe(false);
    expect(existsSync(made.oldUnnamed)).toBe(false);
    expect(existsSync(made.live)).toBe(true);
    expect(existsSync(made.newUnnamed)).toBe(true);
    // The new home is named by this process, so a run after a kill finds it.
    expect(run.env.GEMINI_CLI_HOME).toMatch(new RegExp(`-full-${process.pid}-[A-Za-z0-9]{6}$`));
    await run.remove();
  });

  it('links the user settings as they are when Forge does not write its own (a root run)', async () => {
    const fakes = await setUpFakeAgents();
    await prepareHome(fakes.dir);
    const run = await geminiRunHome({ HOME: fakes.dir }, 'full', false);
    const home = run.env.GEMINI_CLI_HOME ?? '';
    expect(await readlink(join(home, '.gemini', 'settings.json'))).toBe(
      join(fakes.dir, '.gemini', 'settings.json'),
    );
    await run.remove();
  });

  it('does not start Gemini CLI when the user settings are not plain JSON, and says which file', async () => {
    const { fakes, calls, result } = await run(
      'full',
      replay('gemini-0.61.0-full.jsonl'),
      false,
      async (dir) => {
        await mkdir(join(dir, '.gemini'));
        await writeFile(join(dir, '.gemini', 'settings.json'), '{ // mine\n }');
      },
    );
    expect(result.outcome).toBe('error');
    expect(result.fatal).toBe(true);
    expect(result.message).toContain(join(fakes.dir, '.gemini', 'settings.json'));
    expect(calls).toEqual([]);
  });

  it('is not stopped by a warning about a system settings file Forge did not give it', async () => {
    const warning =
      "Security Warning: Skipping system settings file '/etc/gemini-cli/settings.json': not owned by root";
    const actions: FakeAction[] = [
      { stderr: 'YOLO mode is enabled. All tool calls will be automatically approved.' },
      { stderr: warning },
      ...replay('gemini-0.61.0-full.jsonl'),
    ];
    const fakes = await setUpFakeAgents();
    const runner = createGeminiRunner({ cli: 'gemini', text: 'gemini' }, { runningAsRoot: false });
    const result = await runner.run({
      prompt: 'Do it.',
      cwd: fakes.work,
      // The user's own system settings path, which Gemini CLI skips when not run by root.
      env: fakes.env(actions, { GEMINI_CLI_SYSTEM_SETTINGS_PATH: '/etc/gemini-cli/settings.json' }),
      mode: 'full',
      timeoutMs: 20_000,
    });
    expect(result.outcome).toBe('ok');
  });
});
