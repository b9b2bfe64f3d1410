// Every agent run starts fresh: a note a first run saves through the CLI's own memory (Claude Code's
// auto memory, Gemini CLI's private project memory) or leaves in its temp directory never reaches a
// second run in the same working directory. Real binaries, scripted model server.
import { existsSync } from 'node:fs';
import { readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClaudeRunner } from '../../src/agents/claude.js';
import { createCodexRunner } from '../../src/agents/codex.js';
import { createGeminiRunner } from '../../src/agents/gemini.js';
import type { AgentRunner } from '../../src/agents/types.js';
import { bash, text, toolUse } from '../support/model-server/index.js';
import { GEMINI_BIN, requireCli } from './cli-setup.js';
import { createAgentWorld, requireClaude, requireCodex, type AgentWorld } from './harness.js';

const NOTE = 'forge-memory-note-7f3a: the metric favours short files';

beforeAll(async () => {
  await requireClaude();
  await requireCodex();
  await requireCli(GEMINI_BIN, '@google/gemini-cli');
});

/**
 * Runs `runner` twice in one repository: the first run writes NOTE with `tool` to the path `where` finds
 * (from its system prompt), the second only answers. Returns the first system prompt, the path, and all
 * the second run's request text.
 */
async function twoRuns(
  world: AgentWorld,
  runner: AgentRunner,
  tool: string,
  where: (system: string) => string | undefined,
): Promise<{ first: string; path: string | undefined; second: string }> {
  let first = '';
  let path: string | undefined;
  world.server.addRule({
    name: 'first',
    match: 'marker:first-run',
    turns: ({ request, turnIndex }) => {
      if (turnIndex > 0) return text('Saved.');
      first = request.system;
      path = where(request.system);
      return path === undefined
        ? text('No memory here.')
        : toolUse(tool, { file_path: path, content: `- ${NOTE}\n` });
    },
  });
  world.server.addRule({ name: 'second', match: 'marker:second-run', turns: [text('Done.')] });
  for (const marker of ['first-run', 'second-run']) {
    const result = await runner.run({
      prompt: `marker:${marker}\nRemember that the metric favours short files.`,
      cwd: world.repo,
      env: world.env,
      mode: 'full',
      timeoutMs: 120_000,
    });
    expect(result.outcome, `${result.message}\n${world.explain()}`).toBe('ok');
  }
  // The first run's write went through (else the second run proves nothing).
  const results = world.server.turnsOf('first').flatMap((turn) => turn.latestToolResults);
  expect(results, world.explain()).toHaveLength(1);
  expect(results[0]!.isError, world.explain()).toBe(false);
  const second = world.server.turnsOf('second');
  expect(second, world.explain()).toHaveLength(1);
  return { first, path, second: `${second[0]!.system}\n${second[0]!.prompt}` };
}

describe('each agent run starts without the memory an earlier run left', () => {
  it('Claude Code: a note written to its auto memory folder is not loaded by the next run', async () => {
    const world = await createAgentWorld();
    // Where Claude Code 2.1 keeps a directory's memory: its real path with every other character a dash.
    const project = (await realpath(world.repo)).replace(/[^a-zA-Z0-9]/g, '-');
    const memory = join(world.home, '.claude', 'projects', project, 'memory', 'MEMORY.md');
    const runner = createClaudeRunner({ cli: 'claude', text: 'claude' });
    const { first, second } = await twoRuns(world, runner, 'Write', () => memory);
    expect(existsSync(memory), world.explain()).toBe(true);
    // Memory on, the system prompt offers the folder and the next run loads its MEMORY.md.
    expect(second).not.toContain(NOTE);
    expect(first).not.toContain('persistent file-based memory');
    expect(second).not.toContain('persistent file-based memory');
  });

  it('Claude Code: a note left in its temp directory is not there for the next run', async () => {
    const world = await createAgentWorld();
    world.server.addRule({
      name: 'leave',
      match: 'marker:leave-note',
      turns: [bash(`printf '%s\\n' '${NOTE}' > "$TMPDIR/handoff.txt" && echo saved`), text('Saved.')],
    });
    world.server.addRule({
      name: 'find',
      match: 'marker:find-note',
      turns: [bash('cat "$TMPDIR/handoff.txt"'), text('Done.')],
    });
    const runner = createClaudeRunner({ cli: 'claude', text: 'claude' });
    for (const marker of ['leave-note', 'find-note']) {
      const result = await runner.run({
        prompt: `marker:${marker}`,
        cwd: world.repo,
        env: world.env,
        mode: 'full',
        timeoutMs: 120_000,
      });
      expect(result.outcome, `${result.message}\n${world.explain()}`).toBe('ok');
    }
    const [saved] = world.server.turnsOf('leave')[1]?.latestToolResults ?? [];
    expect(saved?.isError, world.explain()).toBe(false);
    expect(saved?.text, world.explain()).toContain('saved');
    const [found] = world.server.turnsOf('find')[1]?.latestToolResults ?? [];
    expect(found?.text, world.explain()).toMatch(/No such file/);
    expect(found?.text).not.toContain(NOTE);
    expect(await readdir(world.tmp)).toEqual([]);
  });

  it('Gemini CLI: a note saved in its private project memory is not loaded by the next run', async () => {
    const world = await createAgentWorld();
    const runner = createGeminiRunner({ cli: 'gemini', text: 'gemini' });
    const { path, second } = await twoRuns(
      world,
      runner,
      'write_file',
      (system) => /\(`([^`]+\/memory\/MEMORY\.md)`\)/.exec(system)?.[1],
    );
    expect(path, 'the private project memory path in the first system prompt').toBeDefined();
    expect(second).not.toContain(NOTE);
    // The run's own home is gone, and the note with it; the user's ~/.gemini/tmp never held it.
    expect(existsSync(path!)).toBe(false);
    expect(existsSync(join(world.home, '.gemini', 'tmp', 'repo', 'memory', 'MEMORY.md'))).toBe(false);
  });

  it('Codex: with memories on in the user config, no run starts consolidating earlier runs into a memory summary', async () => {
    const world = await createAgentWorld();
    const config = join(world.home, '.codex', 'config.toml');
    await writeFile(
      config,
      (await readFile(config, 'utf8')).replace('[features]\n', '[features]\nmemories = true\n'),
    );
    // Left alone, a run starts Codex's consolidation agent in ~/.codex/memories_v2, asking the model to
    // write the memory_summary.md put at the head of every later session. (It asks without tools, which
    // the scripted server answers with a default and cannot script: the request itself is the evidence.)
    world.server.addRule({ name: 'runs', match: 'marker:codex-run', turns: [text('Done.')] });
    const runner = createCodexRunner({ cli: 'codex', text: 'codex' });
    for (const run of [1, 2]) {
      const result = await runner.run({
        prompt: `marker:codex-run ${run}\nSay done.`,
        cwd: world.repo,
        env: world.env,
        mode: 'full',
        timeoutMs: 120_000,
      });
      expect(result.outcome, `${result.message}\n${world.explain()}`).toBe('ok');
    }
    expect(world.server.turnsOf('runs'), world.explain()).toHaveLength(2);
    const memoryWork = world.server.requests.filter((request) =>
      request.prompt.includes('memory_summary.md'),
    );
    expect(memoryWork, world.explain()).toHaveLength(0);
    expect(existsSync(join(world.home, '.codex', 'memories_v2'))).toBe(false);
  });
});
