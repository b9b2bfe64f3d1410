// The opencode adapter against a fake `opencode` replaying streams recorded from the real 1.18.33.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  OPENCODE_READ_ONLY_PERMISSION,
  createOpencodeRunner,
  opencodeConfigContent,
} from '../../src/agents/opencode.js';
import type { AgentActivity, AgentRequest } from '../../src/agents/types.js';
import { isGone, eventually, setUpFakeAgents } from '../support/fake-agents/harness.js';
import type { FakeAction } from '../support/fake-agents/harness.js';
import { recorded, replay, replayStderr } from './recorded-streams.js';

async function runOpencode(actions: FakeAction[], request: Partial<AgentRequest> = {}, model?: string) {
  const fakes = await setUpFakeAgents();
  const activity: AgentActivity[] = [];
  const text = model === undefined ? 'opencode' : `opencode-${model}`;
  const runner = createOpencodeRunner(
    { cli: 'opencode', text, ...(model ? { model } : {}) },
    { killGraceMs: 200 },
  );
  const result = await runner.run({
    prompt: 'Do the task.',
    cwd: fakes.work,
    env: fakes.env(actions),
    mode: 'full',
    timeoutMs: 20_000,
    onActivity: (event) => activity.push(event),
    ...request,
  });
  return { result, activity, calls: await fakes.calls(), fakes };
}

describe('opencode adapter: argv and env', () => {
  it('runs full mode with --auto, JSON events, logs on stderr, the model, and the prompt on stdin only', async () => {
    const prompt = 'Fix "$(touch pwned)" && `id`; $HOME\n';
    const { calls } = await runOpencode(
      replay('opencode-1.18.33-full.jsonl'),
      { prompt },
      'anthropic/claude-sonnet-4-5',
    );
    const call = calls[0]!;
    expect(call.name).toBe('opencode');
    expect(call.argv).toEqual([
      'run',
      '--format',
      'json',
      '--print-logs',
      '--log-level',
      'WARN',
      '--title=Forge',
      '-m',
      'anthropic/claude-sonnet-4-5',
      '--auto',
    ]);
    expect(call.stdin).toBe(prompt);
    expect(call.env.OPENCODE_PERMISSION).toBeUndefined();
    // A doer works in its repository, where opencode stops looking upward at the git root.
    expect(call.env.OPENCODE_DISABLE_PROJECT_CONFIG).toBeUndefined();
    // No snapshot store of the tree: Forge commits and reverts itself.
    expect(JSON.parse(call.env.OPENCODE_CONFIG_CONTENT ?? '{}')).toEqual({ snapshot: false });
  });

  it("keeps the caller's own config content, with Forge's keys over it", () => {
    expect(JSON.parse(opencodeConfigContent('{"model":"a/b","snapshot":true}') ?? '')).toEqual({
      model: 'a/b',
      snapshot: false,
    });
    // Not a JSON object (JSONC, a list): passed on as written.
    expect(opencodeConfigContent('{ // mine\n "model": "a/b" }')).toBe('{ // mine\n "model": "a/b" }');
    expect(opencodeConfigContent('[1]')).toBe('[1]');
    expect(opencodeConfigContent(undefined)).toBe('{"snapshot":false}');
  });

  it('runs read-only without --auto and with every writing permission denied, whatever the caller set', async () => {
    const fakesEnv = {
      OPENCODE_PERMISSION: '{"edit":"allow","bash":"allow"}',
      OPENCODE_DISABLE_PROJECT_CONFIG: '0',
    };
    const fakes = await setUpFakeAgents();
    const runner = createOpencodeRunner({ cli: 'opencode', text: 'opencode' });
    const result = await runner.run({
      prompt: 'Judge.',
      cwd: fakes.work,
      env: fakes.env(replay('opencode-1.18.33-read-only.jsonl'), fakesEnv),
      mode: 'read-only',
      timeoutMs: 20_000,
      bead: { id: 'bd-7q.2', title: 'Judge "it" $(id)', labels: ['role:judge'] },
    });
    const call = (await fakes.calls())[0]!;
    expect(call.argv).not.toContain('--auto');
    // A title of Forge's own, so opencode does not spend a model request naming the session.
    expect(call.argv.filter((arg) => arg.startsWith('--title'))).toEqual(['--title=Forge bd-7q.2']);
    expect(JSON.parse(call.env.OPENCODE_PERMISSION ?? '{}')).toMatchObject({
      edit: 'deny',
      bash: 'deny',
      webfetch: 'deny',
      task: 'deny',
    });
    expect(call.env.OPENCODE_PERMISSION).toBe(OPENCODE_READ_ONLY_PERMISSION);
    // No AGENTS.md, CLAUDE.md or opencode.json from the directories above the judge's copy.
    expect(call.env.OPENCODE_DISABLE_PROJECT_CONFIG).toBe('1');
    // The recorded judge asked for Bash, which the read-only run did not offer.
    expect(result.outcome).toBe('ok');
    expect(result.readOnly).toEqual({ enforcement: 'tools', attempts: ['bash'] });
    expect(result.toolErrors[0]).toMatch(/^bash: .*unavailable tool 'Bash'/);
    expect(result.message).toMatch(/after trying 1 tool call/);
  });
});

describe('opencode adapter: results', () => {
  it('takes the last step’s text as the answer, and sums tokens and cost over the steps', async () => {
    const { result, activity } = await runOpencode(replay('opencode-1.18.33-full.jsonl'));
    expect(result.outcome).toBe('ok');
    expect(result.finalText).toBe('Done.');
    expect(result.usage).toEqual({
      inputTokens: 2000,
      outputTokens: 400,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(result.costUsd).toBeCloseTo(0.012, 6);
    expect(result.numTurns).toBe(2);
    expect(result.agent).toBe('opencode');
    expect(activity).toContainEqual({ type: 'tool', name: 'bash', detail: 'echo hi > hello.txt' });
  });

  it('writes the raw stream and an end line to the transcript', async () => {
    const fakes = await setUpFakeAgents();
    const transcriptPath = join(fakes.dir, 'logs', 't.jsonl');
    const runner = createOpencodeRunner({ cli: 'opencode', text: 'opencode' });
    await runner.run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env(replay('opencode-1.18.33-full.jsonl')),
      mode: 'full',
      transcriptPath,
    });
    const lines = (await readFile(transcriptPath, 'utf8')).split('\n').filter((line) => line !== '');
    expect(lines).toEqual(expect.arrayContaining(recorded('opencode-1.18.33-full.jsonl')));
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ forge: 'end', outcome: 'ok' });
  });

  it('is an error when it exits 0 but its last step did not finish', async () => {
    const stream = recorded('opencode-1.18.33-full.jsonl').slice(0, 3);
    const { result } = await runOpencode(stream.map((line) => ({ line })));
    expect(result.outcome).toBe('error');
    expect(result.message).toMatch(/middle of a step/);
  });
});

describe('opencode adapter: classification', () => {
  it('calls the recorded 401 error event auth', async () => {
    const { result } = await runOpencode([...replay('opencode-1.18.33-401.jsonl'), { exit: 1 }]);
    expect(result.outcome).toBe('auth');
    expect(result.message).toMatch(/invalid x-api-key/);
  });

  it('lets two logged 429s pass, and stops it at the third as rate_limited', async () => {
    const retry = replayStderr('opencode-1.18.33-429.stderr')[0]!;
    const { result, activity, calls } = await runOpencode([retry, retry, retry, { hang: true }]);
    expect(result.outcome).toBe('rate_limited');
    expect(result.message).toMatch(/rate limit/);
    expect(result.message).toMatch(/Forge stopped it after 3 failed attempts/);
    expect(activity.filter((event) => event.type === 'retry')).toHaveLength(3);
    expect(activity).toContainEqual(expect.objectContaining({ type: 'stopping' }));
    expect(await eventually(() => isGone(calls[0]!.pid))).toBe(true);
  });

  it('recovers by itself after one logged 429', async () => {
    const retry = replayStderr('opencode-1.18.33-429.stderr')[0]!;
    const { result } = await runOpencode([retry, ...replay('opencode-1.18.33-full.jsonl')]);
    expect(result.outcome).toBe('ok');
  });

  it('times out, stopping the group', async () => {
    const { result } = await runOpencode([{ hang: true }], { timeoutMs: 500 });
    expect(result.outcome).toBe('timeout');
  });

  it('reports a missing binary clearly, as fatal', async () => {
    const fakes = await setUpFakeAgents();
    const runner = createOpencodeRunner({ cli: 'opencode', text: 'opencode' });
    const result = await runner.run({
      prompt: 'x',
      cwd: fakes.work,
      env: { PATH: '/nonexistent' },
      mode: 'full',
    });
    expect(result).toMatchObject({ outcome: 'error', fatal: true, environment: true });
    expect(result.message).toMatch(/`opencode` was not found/);
  });
});
