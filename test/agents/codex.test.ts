// The Codex adapter against a fake `codex` that prints recorded `exec --json` event shapes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCodexRunner } from '../../src/agents/codex.js';
import type { AgentActivity, AgentRequest, AgentRunnerOptions } from '../../src/agents/types.js';
import {
  agentMessage,
  commandCompleted,
  commandStarted,
  error,
  fileChange,
  reasoning,
  threadStarted,
  turnCompleted,
  turnFailed,
  turnStarted,
} from '../support/fake-agents/codex-lines.js';
import { eventually, isGone, setUpFakeAgents } from '../support/fake-agents/harness.js';
import type { FakeAction } from '../support/fake-agents/harness.js';

const lines = (...events: unknown[]): FakeAction[] => events.map((line) => ({ line }));

async function runCodex(
  actions: FakeAction[],
  request: Partial<AgentRequest> = {},
  options: AgentRunnerOptions = {},
  model?: string,
) {
  const fakes = await setUpFakeAgents();
  const activity: AgentActivity[] = [];
  const runner = createCodexRunner({ cli: 'codex', text: 'codex', ...(model ? { model } : {}) }, options);
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

const success = lines(
  threadStarted(),
  turnStarted(),
  reasoning('Looking at the tree.'),
  commandStarted('bash -lc ls'),
  commandCompleted('bash -lc ls', 0, 'src\n'),
  fileChange('notes.md'),
  agentMessage('Wrote notes.md.'),
  turnCompleted(),
);

describe('codex adapter: argv', () => {
  it('runs full mode bypassing approvals and sandbox, with -C, the model and the prompt on stdin', async () => {
    const prompt = 'Fix "$(rm -rf /)" && `id`; $HOME\n';
    const { calls, fakes } = await runCodex(success, { prompt }, {}, 'gpt-5-codex');
    const call = calls[0]!;
    expect(call.name).toBe('codex');
    expect(call.argv).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--disable',
      'memories',
      '-C',
      fakes.work,
      '-m',
      'gpt-5-codex',
      '--dangerously-bypass-approvals-and-sandbox',
      '-',
    ]);
    expect(call.stdin).toBe(prompt);
    expect(call.cwd).toBe(fakes.work);
  });

  it('runs read-only mode in the read-only sandbox with approvals off', async () => {
    const { calls, fakes, result } = await runCodex(success, { mode: 'read-only' });
    expect(calls[0]!.argv).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--disable',
      'memories',
      '-C',
      fakes.work,
      '-s',
      'read-only',
      '-c',
      'approval_policy=never',
      '--ephemeral',
      '-',
    ]);
    expect(calls[0]!.argv).not.toContain('--dangerously-bypass-approvals-and-sandbox');
    expect(result.readOnly).toEqual({ enforcement: 'sandbox', attempts: ['edit notes.md'] });
  });
});

describe('codex adapter: results', () => {
  it('takes the last agent message as final text and usage from turn.completed, without cost', async () => {
    const { result, activity } = await runCodex(success);
    expect(result).toMatchObject({
      outcome: 'ok',
      finalText: 'Wrote notes.md.',
      exitCode: 0,
      usage: { inputTokens: 600, cacheReadTokens: 1800, outputTokens: 350, cacheWriteTokens: 0 },
      agent: 'codex',
      scripted: false,
    });
    expect(result.costUsd).toBeUndefined();
    expect(activity).toContainEqual({ type: 'tool', name: 'shell', detail: 'bash -lc ls' });
  });

  it('records failed commands as tool errors and declined ones as denials', async () => {
    const actions = lines(
      threadStarted(),
      commandCompleted('bash -lc "touch x"', 1, 'touch: cannot touch x: Read-only file system\n'),
      commandCompleted('bash -lc "rm -rf /"', 0, '', 'declined'),
      agentMessage('{"score": 3}'),
      turnCompleted(),
    );
    const { result } = await runCodex(actions, { mode: 'read-only' });
    expect(result.outcome).toBe('ok');
    expect(result.toolErrors).toEqual([
      'shell: bash -lc "touch x" (exit 1): touch: cannot touch x: Read-only file system',
    ]);
    expect(result.permissionDenials).toEqual([{ tool: 'shell', input: { command: 'bash -lc "rm -rf /"' } }]);
  });

  it('writes the transcript', async () => {
    const fakes = await setUpFakeAgents();
    const transcriptPath = join(fakes.dir, 'logs', 'codex.log');
    await createCodexRunner({ cli: 'codex', text: 'codex' }).run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env(success),
      mode: 'full',
      transcriptPath,
    });
    const text = await readFile(transcriptPath, 'utf8');
    expect(text).toContain(JSON.stringify(agentMessage('Wrote notes.md.')));
    expect(text).toContain('"forge":"end"');
  });
});

describe('codex adapter: classification', () => {
  it('is an error when the turn fails for an unrecognised reason', async () => {
    const { result } = await runCodex([
      ...lines(threadStarted(), turnFailed('model produced invalid tool call')),
      { exit: 1 },
    ]);
    expect(result).toMatchObject({ outcome: 'error', exitCode: 1 });
    expect(result.message).toContain('model produced invalid tool call');
  });

  it('stops at once on a 401 and calls it auth', async () => {
    const actions: FakeAction[] = [
      ...lines(threadStarted(), error('unexpected status 401 Unauthorized: Incorrect API key provided')),
      { hang: true },
    ];
    const { result, calls } = await runCodex(actions, { timeoutMs: 60_000 });
    expect(result.outcome).toBe('auth');
    expect(result.message).toContain('codex login');
    expect(await eventually(() => isGone(calls[0]!.pid))).toBe(true);
  });

  it('classifies 429 and a usage limit with its reset time as rate_limited', async () => {
    const { result: tooMany } = await runCodex([
      ...lines(threadStarted(), turnFailed('exceeded retry limit, last status: 429 Too Many Requests')),
      { exit: 1 },
    ]);
    expect(tooMany.outcome).toBe('rate_limited');
    expect(tooMany.resetAt).toBeUndefined();

    const now = new Date(2026, 2, 10, 14, 0).getTime();
    const { result: usage } = await runCodex(
      [
        ...lines(
          threadStarted(),
          error("You've hit your usage limit. Upgrade to Pro or try again in 2 hours 10 minutes."),
        ),
        { exit: 1 },
      ],
      {},
      { clock: { now: () => now, sleep: async () => {} } },
    );
    expect(usage).toMatchObject({
      outcome: 'rate_limited',
      resetAt: now + 130 * 60_000,
      retryAfterMs: 130 * 60_000,
    });
  });

  it('classifies an overloaded service as overloaded', async () => {
    const { result } = await runCodex([
      ...lines(
        threadStarted(),
        turnFailed('unexpected status 503 Service Unavailable: server is overloaded'),
      ),
      { exit: 1 },
    ]);
    expect(result.outcome).toBe('overloaded');
  });

  it('reports reconnects live, and a timeout while reconnecting on 429 is rate_limited', async () => {
    const actions: FakeAction[] = [
      ...lines(threadStarted(), error('Reconnecting... 1/5 (stream error: 429 Too Many Requests)')),
      { hang: true },
    ];
    // Long enough that the reconnect line is read before the timeout on a loaded machine.
    const { result, activity } = await runCodex(actions, { timeoutMs: 5000 }, { killGraceMs: 200 });
    expect(result.outcome).toBe('rate_limited');
    expect(activity).toContainEqual({
      type: 'retry',
      status: 429,
      error: 'Reconnecting... 1/5 (stream error: 429 Too Many Requests)',
    });
  });

  it('succeeds after a reconnect that recovered', async () => {
    const { result } = await runCodex([
      ...lines(threadStarted(), error('Reconnecting... 1/5 (stream disconnected before completion)')),
      ...success,
    ]);
    expect(result.outcome).toBe('ok');
  });

  it('is an error when it exits 0 without finishing a turn', async () => {
    const { result } = await runCodex(lines(threadStarted(), turnStarted()));
    expect(result.outcome).toBe('error');
    expect(result.message).toContain('without finishing a turn');
  });

  it('always has a hard timeout, even when the caller gives none', async () => {
    const { result } = await runCodex(
      [{ line: threadStarted() }, { hang: true }],
      { timeoutMs: undefined },
      { codexDefaultTimeoutMs: 600, killGraceMs: 200 },
    );
    expect(result.outcome).toBe('timeout');
  });

  it('kills the whole group on timeout', async () => {
    const fakes = await setUpFakeAgents();
    const pidFile = join(fakes.dir, 'grandchild.pid');
    const result = await createCodexRunner({ cli: 'codex', text: 'codex' }, { killGraceMs: 200 }).run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([{ grandchild: pidFile }, { hang: true }]),
      mode: 'full',
      // The grandchild's pid is written before the timeout, however loaded the machine.
      timeoutMs: 5000,
    });
    expect(result.outcome).toBe('timeout');
    expect(await eventually(async () => isGone(Number(await readFile(pidFile, 'utf8'))))).toBe(true);
  });

  it('aborts', async () => {
    const controller = new AbortController();
    const { result } = await runCodex([...lines(threadStarted(), agentMessage('thinking')), { hang: true }], {
      signal: controller.signal,
      onActivity: (event) => {
        if (event.type === 'text') controller.abort();
      },
    });
    expect(result.outcome).toBe('aborted');
  });

  it('reports a missing binary clearly, as fatal', async () => {
    const fakes = await setUpFakeAgents();
    const result = await createCodexRunner({ cli: 'codex', text: 'codex' }).run({
      prompt: 'x',
      cwd: fakes.work,
      env: { PATH: fakes.work },
      mode: 'full',
    });
    expect(result).toMatchObject({ outcome: 'error', fatal: true });
    expect(result.message).toContain('`codex` was not found');
  });
});
