// The Gemini CLI adapter against a fake `gemini` replaying streams recorded from the real 0.61.0.
import { describe, expect, it } from 'vitest';
import { createGeminiRunner } from '../../src/agents/gemini.js';
import type { AgentActivity, AgentRequest } from '../../src/agents/types.js';
import { eventually, isGone, setUpFakeAgents } from '../support/fake-agents/harness.js';
import type { FakeAction } from '../support/fake-agents/harness.js';
import { replay, replayStderr } from './recorded-streams.js';

async function runGemini(actions: FakeAction[], request: Partial<AgentRequest> = {}, model?: string) {
  const fakes = await setUpFakeAgents();
  const activity: AgentActivity[] = [];
  const text = model === undefined ? 'gemini' : `gemini-${model}`;
  const runner = createGeminiRunner(
    { cli: 'gemini', text, ...(model ? { model } : {}) },
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
  return { result, activity, calls: await fakes.calls() };
}

describe('gemini adapter: argv', () => {
  it('runs full mode in yolo with stream-json, the model, and the prompt on stdin only', async () => {
    const prompt = 'Fix "$(touch pwned)" && `id`; $HOME\n';
    const { calls } = await runGemini(replay('gemini-0.61.0-full.jsonl'), { prompt }, 'gemini-2.5-pro');
    expect(calls[0]!.name).toBe('gemini');
    expect(calls[0]!.argv).toEqual([
      '--output-format',
      'stream-json',
      '--skip-trust',
      '--model',
      'gemini-2.5-pro',
      '--approval-mode',
      'yolo',
    ]);
    expect(calls[0]!.stdin).toBe(prompt);
  });

  it('asks Gemini CLI not to start itself a second time, unless the user said otherwise', async () => {
    const { calls } = await runGemini(replay('gemini-0.61.0-full.jsonl'));
    expect(calls[0]!.env.GEMINI_CLI_NO_RELAUNCH).toBe('true');
    const fakes = await setUpFakeAgents();
    const runner = createGeminiRunner({ cli: 'gemini', text: 'gemini' }, { killGraceMs: 200 });
    await runner.run({
      prompt: 'Do the task.',
      cwd: fakes.work,
      env: { ...fakes.env(replay('gemini-0.61.0-full.jsonl')), GEMINI_CLI_NO_RELAUNCH: '' },
      mode: 'full',
      timeoutMs: 20_000,
    });
    expect((await fakes.calls())[0]!.env.GEMINI_CLI_NO_RELAUNCH).toBe('');
  });

  it('runs read-only in plan mode and reports the refused writes it saw', async () => {
    const { calls, result } = await runGemini(replay('gemini-0.61.0-read-only.jsonl'), { mode: 'read-only' });
    expect(calls[0]!.argv.slice(-2)).toEqual(['--approval-mode', 'plan']);
    expect(result.outcome).toBe('ok');
    expect(result.finalText).toBe('{"score": 5}');
    expect(result.readOnly?.enforcement).toBe('tools');
    expect(result.readOnly?.attempts).toHaveLength(3);
    expect(result.toolErrors).toHaveLength(3);
    expect(result.toolErrors[0]).toMatch(/^write_file: Access denied/);
    expect(result.toolErrors[1]).toMatch(/^run_shell_command: Tool "run_shell_command" not found/);
  });
});

describe('gemini adapter: results', () => {
  it('takes the answer after the last tool call, and tokens from the result stats, without cost', async () => {
    const { result, activity } = await runGemini(replay('gemini-0.61.0-full.jsonl'));
    expect(result.outcome).toBe('ok');
    expect(result.finalText).toBe('Done.');
    expect(result.usage).toEqual({
      inputTokens: 2000,
      outputTokens: 400,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(result.costUsd).toBeUndefined();
    expect(result.model).toBe('gemini-2.5-pro');
    expect(activity).toContainEqual({
      type: 'tool',
      name: 'run_shell_command',
      detail: 'echo hi > hello.txt',
    });
  });

  it('is an error when it ends without a result', async () => {
    const { result } = await runGemini([...replay('gemini-0.61.0-full.jsonl').slice(0, 3), { exit: 1 }]);
    expect(result.outcome).toBe('error');
    expect(result.message).toMatch(/exited 1 without a result/);
  });
});

describe('gemini adapter: classification', () => {
  it('calls the recorded 401 result auth', async () => {
    const { result } = await runGemini([...replay('gemini-0.61.0-401.jsonl'), { exit: 1 }]);
    expect(result.outcome).toBe('auth');
    expect(result.message).toMatch(/UNAUTHENTICATED|invalid x-api-key/);
  });

  it('lets one 429 retry pass and stops it at the second as rate_limited', async () => {
    const retries = replayStderr('gemini-0.61.0-429.stderr');
    const { result, activity, calls } = await runGemini([...retries, { hang: true }]);
    expect(result.outcome).toBe('rate_limited');
    expect(result.message).toMatch(/Forge stopped it after 2 failed attempts/);
    expect(activity).toContainEqual(expect.objectContaining({ type: 'stopping' }));
    expect(
      activity
        .filter((event) => event.type === 'retry')
        .map((event) => event.type === 'retry' && event.status),
    ).toEqual([429, 429]);
    expect(await eventually(() => isGone(calls[0]!.pid))).toBe(true);
  });

  it('recovers by itself after one 429 retry', async () => {
    const [first] = replayStderr('gemini-0.61.0-429.stderr');
    const { result } = await runGemini([first!, ...replay('gemini-0.61.0-full.jsonl')]);
    expect(result.outcome).toBe('ok');
  });

  it('reads a quota reset from a failed result', async () => {
    const line = JSON.stringify({
      type: 'result',
      status: 'error',
      error: {
        type: 'unknown',
        message: '[API Error: You exceeded your current quota. Please retry in 37.5s.]',
      },
      stats: { input_tokens: 0, output_tokens: 0, cached: 0 },
    });
    const { result } = await runGemini([{ line }, { exit: 1 }]);
    expect(result.outcome).toBe('rate_limited');
    expect(result.retryAfterMs).toBeGreaterThan(37_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(38_000);
  });

  it('times out', async () => {
    const { result } = await runGemini([{ hang: true }], { timeoutMs: 500 });
    expect(result.outcome).toBe('timeout');
  });
});
