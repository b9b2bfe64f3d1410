// The real Gemini CLI run by the adapter as it runs for anyone but root (who cannot write a system
// settings file Gemini CLI accepts: root must own it): through a home of Forge's, the tree is still not
// shown, and the user's own settings file is left as it was.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGeminiRunner } from '../../src/agents/gemini.js';
import type { AgentMode, AgentResult } from '../../src/agents/types.js';
import { text, toolUse } from '../support/model-server/index.js';
import { DIRECTORY_TREE } from './cli-cases.js';
import { GEMINI_BIN, requireCli } from './cli-setup.js';
import { createAgentWorld, type AgentWorld } from './harness.js';

beforeAll(async () => {
  await requireCli(GEMINI_BIN, '@google/gemini-cli');
});

/** One run of the real Gemini CLI through the adapter in `world`; `why` explains a failed assertion. */
async function runGemini(
  world: AgentWorld,
  prompt: string,
  mode: AgentMode,
  runningAsRoot = false,
): Promise<{ result: AgentResult; why: string }> {
  const runner = createGeminiRunner({ cli: 'gemini', text: 'gemini' }, { runningAsRoot });
  const result = await runner.run({ prompt, cwd: world.repo, env: world.env, mode, timeoutMs: 120_000 });
  return { result, why: `${result.message}\n${world.explain()}` };
}

describe('the Gemini CLI adapter as another user than root', () => {
  it('runs the real binary with its settings from a home of Forge’s: no tree, user settings untouched', async () => {
    const world = await createAgentWorld({ files: { 'bench/score.mjs': 'console.log(1)\n' } });
    world.server.addRule({ name: 'doer', match: 'marker:gemini-home', turns: [text('Done.')] });
    const userSettings = join(world.home, '.gemini', 'settings.json');
    const before = await readFile(userSettings, 'utf8');

    const { result, why } = await runGemini(world, 'marker:gemini-home\nSay done.', 'full');
    expect(result.outcome, why).toBe('ok');
    const turns = world.server.turnsOf('doer');
    expect(turns, why).toHaveLength(1);
    expect(turns[0]!.prompt, why).not.toMatch(DIRECTORY_TREE);
    expect(turns[0]!.prompt, why).not.toContain('score.mjs');
    // Its auth choice still came from the user's settings (the scripted server answered it).
    expect(await readFile(userSettings, 'utf8')).toBe(before);
  });

  it('holds a read-only run there too: leaving plan mode is refused, and so is the write after it', async () => {
    const world = await createAgentWorld();
    const target = join(world.repo, 'pwned.txt');
    world.server.addRule({
      name: 'judge',
      match: 'marker:gemini-home-judge',
      turns: [
        toolUse('exit_plan_mode', { plan_filename: 'plan.md' }),
        toolUse('write_file', { file_path: target, content: 'judged' }),
        text('{"score": 1}'),
      ],
    });
    const { result, why } = await runGemini(world, 'marker:gemini-home-judge\nJudge.', 'read-only');
    expect(result.outcome, why).toBe('ok');
    const answers = world.server.turnsOf('judge').flatMap((turn) => turn.latestToolResults);
    expect(answers, why).toHaveLength(2);
    for (const answer of answers) expect(answer.isError, why).toBe(true);
    expect(existsSync(target), why).toBe(false);
  });

  it.each([
    ['as root', true],
    ['as another user', false],
  ])(
    'a read-only run %s starts no MCP server and no hook from the user’s settings (a doer could write them)',
    async (_as, runningAsRoot) => {
      const world = await createAgentWorld();
      const started = join(world.tmp, 'mcp-started');
      const hooked = join(world.tmp, 'hook-ran');
      const userSettings = join(world.home, '.gemini', 'settings.json');
      const settings = JSON.parse(await readFile(userSettings, 'utf8')) as Record<string, unknown>;
      await writeFile(
        userSettings,
        `${JSON.stringify({
          ...settings,
          mcpServers: { scoring: { command: 'sh', args: ['-c', `touch ${started}; sleep 2`] } },
          hooks: { BeforeAgent: [{ hooks: [{ type: 'command', command: `touch ${hooked}` }] }] },
        })}\n`,
      );
      world.server.addRule({
        name: 'judge',
        match: 'marker:gemini-settings-judge',
        turns: [text('{"score": 1}')],
      });
      const { result, why } = await runGemini(
        world,
        'marker:gemini-settings-judge\nJudge.',
        'read-only',
        runningAsRoot,
      );
      expect(result.outcome, why).toBe('ok');
      expect(world.server.turnsOf('judge'), why).toHaveLength(1);
      expect(existsSync(started), 'the MCP server was started').toBe(false);
      expect(existsSync(hooked), 'the hook ran').toBe(false);
    },
  );
});
