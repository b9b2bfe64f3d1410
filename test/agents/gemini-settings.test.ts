// The settings Forge gives Gemini CLI on every run: a system settings file of its own, merged with the
// user's, in a directory Gemini CLI accepts; and what happens when that cannot be done or is refused.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGeminiRunner } from '../../src/agents/gemini.js';
import { geminiSettingsEnv, mergeSettings } from '../../src/agents/gemini-settings.js';
import type { AgentMode } from '../../src/agents/types.js';
import { setUpFakeAgents } from '../support/fake-agents/harness.js';
import type { FakeAction } from '../support/fake-agents/harness.js';
import { replay } from './recorded-streams.js';

async function run(mode: AgentMode, actions: FakeAction[], extra: Record<string, string> = {}) {
  const fakes = await setUpFakeAgents();
  const env = fakes.env(actions, extra);
  const result = await createGeminiRunner({ cli: 'gemini', text: 'gemini' }, { killGraceMs: 200 }).run({
    prompt: 'Judge.',
    cwd: fakes.work,
    env,
    mode,
    timeoutMs: 20_000,
  });
  return { fakes, env, result, calls: await fakes.calls() };
}

describe('gemini adapter: per-run system settings', () => {
  it.each<AgentMode>(['full', 'read-only'])(
    'a %s run gets a settings file under HOME without the directory tree or GEMINI.md from parents',
    async (mode) => {
      const { fakes, calls, result } = await run(mode, replay('gemini-0.61.0-full.jsonl'));
      expect(result.outcome).toBe('ok');
      const path = calls[0]!.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? '';
      expect(path.startsWith(join(fakes.dir, '.cache', 'forge', 'gemini') + '/')).toBe(true);
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
        context: { includeDirectoryTree: false, memoryBoundaryMarkers: [] },
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
    const env = await geminiSettingsEnv({ HOME: fakes.dir, GEMINI_CLI_SYSTEM_SETTINGS_PATH: admin });
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
    await geminiSettingsEnv({ HOME: fakes.dir });
    expect((await stat(join(fakes.dir, '.cache', 'forge', 'gemini'))).mode & 0o777).toBe(0o700);
  });

  it('does not start Gemini CLI when the system settings in force are not JSON, and says which file', async () => {
    const fakes = await setUpFakeAgents();
    const admin = join(fakes.dir, 'admin.json');
    await writeFile(admin, '{ // a comment\n }');
    const env = fakes.env(replay('gemini-0.61.0-full.jsonl'), { GEMINI_CLI_SYSTEM_SETTINGS_PATH: admin });
    const result = await createGeminiRunner({ cli: 'gemini', text: 'gemini' }).run({
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
    const path = (await geminiSettingsEnv({ HOME: fakes.dir })).GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? '';
    const warning = `Security Warning: Skipping system settings file '${path}': Parent directory '/x' is insecure`;
    const actions: FakeAction[] = [
      { stderr: warning },
      { sleepMs: 10_000 },
      ...replay('gemini-0.61.0-full.jsonl'),
    ];
    const result = await createGeminiRunner({ cli: 'gemini', text: 'gemini' }, { killGraceMs: 200 }).run({
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

  it('merges objects key by key and lets anything else replace', () => {
    expect(mergeSettings({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [] }, d: { e: 2 } })).toEqual({
      a: { b: 1, c: [] },
      d: { e: 2 },
    });
  });
});
