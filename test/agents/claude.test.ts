// The Claude Code adapter against a fake `claude` that prints recorded stream-json shapes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClaudeRunner, type ClaudeRunnerOptions } from '../../src/agents/claude.js';
import type { AgentActivity, AgentRequest } from '../../src/agents/types.js';
import {
  MODEL,
  answerThenBackgroundResults,
  apiErrorResult,
  apiRetry,
  assistantText,
  syntheticText,
  backgroundBash,
  init,
  rateLimitEvent,
  result,
  toolResult,
  toolUse,
} from '../support/fake-agents/claude-lines.js';
import { eventually, isGone, setUpFakeAgents } from '../support/fake-agents/harness.js';
import type { FakeAction } from '../support/fake-agents/harness.js';

const lines = (...events: unknown[]): FakeAction[] => events.map((line) => ({ line }));

async function runClaude(
  actions: FakeAction[],
  request: Partial<AgentRequest> = {},
  options: ClaudeRunnerOptions = {},
  model?: string,
) {
  const fakes = await setUpFakeAgents();
  const activity: AgentActivity[] = [];
  const runner = createClaudeRunner(
    { cli: 'claude', text: 'claude', ...(model ? { model } : {}) },
    { runningAsRoot: false, ...options },
  );
  const outcome = await runner.run({
    prompt: 'Do the task.',
    cwd: fakes.work,
    env: fakes.env(actions),
    mode: 'full',
    timeoutMs: 20_000,
    onActivity: (event) => activity.push(event),
    ...request,
  });
  return { result: outcome, activity, calls: await fakes.calls(), fakes };
}

const success = lines(init(), assistantText('Writing the notes.'), result());

describe('claude adapter: argv and environment', () => {
  it('runs full mode with skipped permissions, the model, stream-json and the prompt on stdin', async () => {
    const { calls } = await runClaude(success, {}, { runningAsRoot: true }, 'opus');
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.name).toBe('claude');
    expect(call.argv).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'opus',
      '--dangerously-skip-permissions',
    ]);
    expect(call.stdin).toBe('Do the task.');
    expect(call.env.IS_SANDBOX).toBe('1');
    expect(call.env.CLAUDE_CODE_MAX_RETRIES).toBe('3');
    // Claude would otherwise put recent commit subjects (which can carry scores) into every request.
    expect(call.env.CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS).toBe('1');
    // A doer may load deferred tools (its MCP servers'); only a read-only run turns that off.
    expect(call.env.ENABLE_TOOL_SEARCH).toBeUndefined();
  });

  it('runs read-only mode with only Read, Grep and Glob, dontAsk, no MCP servers, never skipping permissions', async () => {
    const { calls, result: run } = await runClaude(success, { mode: 'read-only' }, { runningAsRoot: true });
    const call = calls[0]!;
    expect(call.argv).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--tools',
      'Read,Grep,Glob',
      '--permission-mode',
      'dontAsk',
      '--strict-mcp-config',
      '--restricted',
      '--no-session-persistence',
    ]);
    expect(call.argv).not.toContain('--dangerously-skip-permissions');
    expect(call.env.IS_SANDBOX).toBeUndefined();
    // Without it 2.1.330 adds a DeferredToolPlaceholder that keeps deferred tool loading on.
    expect(call.env.ENABLE_TOOL_SEARCH).toBe('false');
    expect(run.readOnly).toEqual({ enforcement: 'tools', attempts: [] });
  });

  it('adds IS_SANDBOX only as root, and keeps the caller’s own retry setting', async () => {
    const fakes = await setUpFakeAgents();
    const runner = createClaudeRunner({ cli: 'claude', text: 'claude' }, { runningAsRoot: false });
    await runner.run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env(success, {
        CLAUDE_CODE_MAX_RETRIES: '7',
        CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS: '0',
        CLAUDE_CODE_DISABLE_AUTO_MEMORY: '0',
      }),
      mode: 'full',
    });
    const [call] = await fakes.calls();
    expect(call!.env.IS_SANDBOX).toBeUndefined();
    expect(call!.env.CLAUDE_CODE_MAX_RETRIES).toBe('7');
    expect(call!.env.CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS).toBe('0');
    // Memory an earlier run left is never the caller's to turn back on.
    expect(call!.env.CLAUDE_CODE_DISABLE_AUTO_MEMORY).toBe('1');
    expect(call!.cwd).toBe(fakes.work);
  });

  it('passes a prompt full of shell metacharacters through stdin byte for byte', async () => {
    const prompt = 'Fix "$(rm -rf /)" && echo `id`; it\'s | > out.txt\n$HOME ~ *.ts \\n 😀\n\n  trailing  ';
    const { calls } = await runClaude(success, { prompt });
    expect(calls[0]!.stdin).toBe(prompt);
    expect(calls[0]!.argv.join(' ')).not.toContain('rm -rf');
  });

  it('does not read process.env: only the env it is given reaches the child', async () => {
    process.env.FORGE_TEST_LEAK = 'leaked';
    try {
      const { calls } = await runClaude(success);
      expect(calls[0]!.env.FORGE_TEST_LEAK).toBeUndefined();
    } finally {
      delete process.env.FORGE_TEST_LEAK;
    }
  });
});

describe('claude adapter: results', () => {
  it('reads final text, cost, tokens, turns and the model from the result', async () => {
    const { result: run } = await runClaude(success);
    expect(run).toMatchObject({
      outcome: 'ok',
      finalText: 'Done: wrote notes.md.',
      exitCode: 0,
      costUsd: 0.0421,
      numTurns: 3,
      usage: { inputTokens: 42, outputTokens: 310, cacheReadTokens: 9000, cacheWriteTokens: 1500 },
      agent: 'claude',
      model: MODEL,
      scripted: false,
      permissionDenials: [],
      toolErrors: [],
    });
    expect(run.message).toMatch(/finished in 3 turn/);
  });

  it('surfaces permission denials in full mode: exit 0 that may have done nothing', async () => {
    const denied = result({
      permission_denials: [
        {
          tool_name: 'Write',
          tool_use_id: 'toolu_1',
          tool_input: { file_path: '/w/notes.md', content: 'x' },
        },
        { tool_name: 'Bash', tool_use_id: 'toolu_2', tool_input: { command: 'npm test' } },
      ],
    });
    const { result: run } = await runClaude(lines(init(), denied));
    expect(run.outcome).toBe('ok');
    expect(run.permissionDenials).toEqual([
      { tool: 'Write', input: { file_path: '/w/notes.md', content: 'x' } },
      { tool: 'Bash', input: { command: 'npm test' } },
    ]);
    expect(run.message).toMatch(/2 tool call\(s\) were denied \(Write, Bash\)/);
  });

  it('collects tool_result errors, e.g. a read-only judge that tried to Write', async () => {
    const actions = lines(
      init({ tools: ['Read', 'Grep', 'Glob'], permissionMode: 'dontAsk' }),
      toolUse('toolu_01', 'Write', { file_path: '/w/hack.txt', content: 'x' }),
      toolResult('toolu_01', '<tool_use_error>Error: No such tool available: Write</tool_use_error>', true),
      toolUse('toolu_02', 'Read', { file_path: '/w/spec.md' }),
      toolResult('toolu_02', 'the spec'),
      result({ result: '{"score": 7}' }),
    );
    const { result: run, activity } = await runClaude(actions, { mode: 'read-only' });
    expect(run.outcome).toBe('ok');
    expect(run.toolErrors).toEqual([
      'Write: <tool_use_error>Error: No such tool available: Write</tool_use_error>',
    ]);
    expect(run.readOnly).toEqual({ enforcement: 'tools', attempts: ['Write /w/hack.txt'] });
    expect(run.message).toContain('read-only');
    expect(activity).toContainEqual({ type: 'tool', name: 'Write', detail: '/w/hack.txt' });
  });

  it('ignores lines it does not know and fields it does not use', async () => {
    const actions: FakeAction[] = [
      { line: 'not json at all' },
      { line: { type: 'stream_event', event: { type: 'message_start' } } },
      { line: { type: 'system', subtype: 'hook_response', anything: [1, 2] } },
      ...success,
    ];
    const { result: run } = await runClaude(actions);
    expect(run.outcome).toBe('ok');
  });

  it('is an error when the result says so', async () => {
    const actions = lines(
      init(),
      result({ subtype: 'error_max_turns', is_error: true, result: undefined, terminal_reason: 'max_turns' }),
    );
    const { result: run } = await runClaude([...actions, { exit: 1 }]);
    expect(run.outcome).toBe('error');
    expect(run.message).toContain('max_turns');
  });

  it('is an error when it exits non-zero without a result, quoting stderr', async () => {
    const { result: run } = await runClaude([
      { line: init() },
      { stderr: 'Error: something broke inside' },
      { exit: 2 },
    ]);
    expect(run).toMatchObject({ outcome: 'error', exitCode: 2 });
    expect(run.message).toContain('exited 2 without a result: Error: something broke inside');
  });

  it('is an error when it exits 0 without a result', async () => {
    const { result: run } = await runClaude(lines(init(), assistantText('half way')));
    expect(run.outcome).toBe('error');
    expect(run.finalText).toBe('half way');
    expect(run.usage.outputTokens).toBe(25);
  });

  it('writes the raw stream to the transcript as it arrives, with the prompt and the outcome', async () => {
    const fakes = await setUpFakeAgents();
    const transcriptPath = join(fakes.dir, 'logs', 'deep', 'bd-1.log');
    const runner = createClaudeRunner({ cli: 'claude', text: 'claude' }, { runningAsRoot: false });
    await runner.run({
      prompt: 'P!',
      cwd: fakes.work,
      env: fakes.env([...success, { stderr: 'a warning' }]),
      mode: 'full',
      transcriptPath,
    });
    const text = await readFile(transcriptPath, 'utf8');
    const records = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[0]).toMatchObject({ forge: 'start', prompt: 'P!', mode: 'full' });
    expect(text).toContain(`${JSON.stringify(result())}\n`);
    expect(records).toContainEqual(expect.objectContaining({ forge: 'stderr', line: 'a warning' }));
    expect(records.at(-1)).toMatchObject({ forge: 'end', outcome: 'ok' });
  });

  it('appends to the transcript while the agent is still running', async () => {
    const fakes = await setUpFakeAgents();
    const transcriptPath = join(fakes.dir, 'live.log');
    const controller = new AbortController();
    const runner = createClaudeRunner({ cli: 'claude', text: 'claude' }, { runningAsRoot: false });
    const running = runner.run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([...lines(init(), assistantText('first thoughts')), { hang: true }]),
      mode: 'full',
      transcriptPath,
      signal: controller.signal,
    });
    const seen = await eventually(async () =>
      (await readFile(transcriptPath, 'utf8').catch(() => '')).includes('first thoughts'),
    );
    controller.abort();
    expect(seen).toBe(true);
    expect((await running).outcome).toBe('aborted');
  });

  it('keeps running when the activity listener throws', async () => {
    const { result: run } = await runClaude(success, {
      onActivity: () => {
        throw new Error('listener bug');
      },
    });
    expect(run.outcome).toBe('ok');
  });
});

describe('claude adapter: classification', () => {
  it('kills the run at the first 401 retry instead of letting it retry for minutes', async () => {
    const actions: FakeAction[] = [
      { line: init() },
      { line: apiRetry(401, 'authentication_failed') },
      { hang: true },
    ];
    const { result: run, activity, calls } = await runClaude(actions, { timeoutMs: 60_000 });
    expect(run.outcome).toBe('auth');
    expect(run.message).toContain('401');
    expect(activity).toContainEqual(expect.objectContaining({ type: 'stopping' }));
    expect(await eventually(() => isGone(calls[0]!.pid))).toBe(true);
  });

  it('classifies a 401 result and an invalid-key message as auth', async () => {
    const { result: byStatus } = await runClaude([
      ...lines(init(), apiErrorResult(401, 'Invalid API key · Please run /login')),
      { exit: 1 },
    ]);
    expect(byStatus.outcome).toBe('auth');
    const { result: byText } = await runClaude([
      ...lines(init(), result({ is_error: true, result: 'Invalid API key · Please run /login' })),
      { exit: 1 },
    ]);
    expect(byText.outcome).toBe('auth');
  });

  it('reports 429 retries live and ends rate_limited', async () => {
    const actions: FakeAction[] = [
      ...lines(init(), apiRetry(429, 'rate_limit', 1), apiRetry(429, 'rate_limit', 2)),
      ...lines(apiErrorResult(429, 'API Error: Request rejected (429) · rate limited')),
      { exit: 1 },
    ];
    const { result: run, activity } = await runClaude(actions);
    expect(run.outcome).toBe('rate_limited');
    expect(run.retryAfterMs).toBe(1000);
    expect(activity.filter((event) => event.type === 'retry')).toEqual([
      { type: 'retry', status: 429, error: 'rate_limit', delayMs: 500, attempt: 1, maxRetries: 3 },
      { type: 'retry', status: 429, error: 'rate_limit', delayMs: 1000, attempt: 2, maxRetries: 3 },
    ]);
  });

  it('classifies 529 as overloaded', async () => {
    const { result: run } = await runClaude([
      ...lines(init(), apiRetry(529, 'overloaded'), apiErrorResult(529, 'API Error: Overloaded')),
      { exit: 1 },
    ]);
    expect(run.outcome).toBe('overloaded');
  });

  it('reads the usage-limit text with an epoch, even with exit 0', async () => {
    const text = 'Claude AI usage limit reached|1760000000';
    const { result: run } = await runClaude(
      lines(init(), syntheticText(text), result({ result: text, num_turns: 1 })),
    );
    expect(run).toMatchObject({ outcome: 'rate_limited', resetAt: 1_760_000_000_000, exitCode: 0 });
  });

  it('never takes the model’s own words for a usage limit, in its text or its answer', async () => {
    // What a doer can answer to have the runner sleep for 20 days (red team).
    const text = `Claude AI usage limit reached|${Math.floor(Date.now() / 1000) + 20 * 86_400}`;
    const { result: run } = await runClaude(
      lines(init(), assistantText(text), result({ result: text, num_turns: 1 })),
    );
    expect(run.outcome).toBe('ok');
    expect(run.resetAt).toBeUndefined();
  });

  it('reads "resets 3:45pm" as the next 3:45pm, local time', async () => {
    const now = new Date(2026, 2, 10, 14, 0).getTime();
    const clock = { now: () => now, sleep: async () => {} };
    const text = "You've hit your limit · resets 3:45pm";
    const { result: run } = await runClaude(
      [...lines(init(), syntheticText(text), result({ is_error: true, result: text })), { exit: 1 }],
      {},
      { clock },
    );
    expect(run.outcome).toBe('rate_limited');
    expect(run.resetAt).toBe(new Date(2026, 2, 10, 15, 45).getTime());
    expect(run.retryAfterMs).toBe(105 * 60_000);
  });

  it('is not fooled by the phrase inside a tool result (an agent reading a file)', async () => {
    const file =
      "Claude AI usage limit reached|1760000000\nYou've hit your limit · resets 3:45pm\nInvalid API key";
    const actions = lines(
      init(),
      toolUse('toolu_9', 'Read', { file_path: '/w/fixtures/limits.txt' }),
      toolResult('toolu_9', file),
      toolUse('toolu_10', 'Bash', { command: 'cat fixtures/limits.txt' }),
      toolResult('toolu_10', file, true),
      assistantText('The fixture file contains the usage-limit banner; tests updated.'),
      result({ result: 'Updated the tests for the usage-limit banner.' }),
    );
    const { result: run } = await runClaude(actions);
    expect(run.outcome).toBe('ok');
    expect(run.resetAt).toBeUndefined();
  });

  it('treats a rejected rate_limit_event as rate_limited with its reset time', async () => {
    const actions = [
      ...lines(
        init(),
        rateLimitEvent('rejected', 1_760_003_600),
        apiErrorResult(429, 'API Error: Request rejected (429)'),
      ),
      { exit: 1 },
    ];
    const { result: run, activity } = await runClaude(actions);
    expect(run).toMatchObject({ outcome: 'rate_limited', resetAt: 1_760_003_600_000 });
    expect(activity).toContainEqual({ type: 'rate_limit', status: 'rejected', resetAt: 1_760_003_600_000 });
  });

  it('lets a run that succeeded despite a rejected rate_limit_event stay ok', async () => {
    const { result: run } = await runClaude(
      lines(init(), rateLimitEvent('rejected', 1_760_003_600), result()),
    );
    expect(run.outcome).toBe('ok');
  });

  it('ignores an allowed rate_limit_event and a rejection covered by overage', async () => {
    const { result: allowed } = await runClaude(
      lines(init(), rateLimitEvent('allowed', 1_760_003_600), result()),
    );
    expect(allowed.outcome).toBe('ok');
    const { result: overage } = await runClaude(
      lines(init(), rateLimitEvent('rejected', 1_760_003_600, { isUsingOverage: true }), result()),
    );
    expect(overage.outcome).toBe('ok');
  });

  it('calls a timeout during 429 retries rate_limited, not a plain timeout', async () => {
    const { result: run } = await runClaude(
      [...lines(init(), apiRetry(429, 'rate_limit', 4)), { hang: true }],
      // Long enough for the retry line to be read first on a loaded machine (a fake agent's start took
      // over 500 ms in a run of the whole suite): this is a timeout after it, not one before it.
      { timeoutMs: 5000 },
      { killGraceMs: 200 },
    );
    expect(run.outcome).toBe('rate_limited');
    expect(run.message).toContain('timeout');
  });
});

describe('claude adapter: a budget', () => {
  it('passes what the run may spend as --max-budget-usd, and reads Claude stopping there as `budget`', async () => {
    const { result: run, calls } = await runClaude(
      [
        ...lines(
          init(),
          result({
            subtype: 'error_max_budget_usd',
            is_error: true,
            terminal_reason: 'budget_exhausted',
            errors: ['Reached maximum budget ($0.25)'],
            result: undefined,
          }),
        ),
        { exit: 1 },
      ],
      { maxBudgetUsd: 0.25 },
    );
    const argv = calls[0]!.argv;
    expect(argv[argv.indexOf('--max-budget-usd') + 1]).toBe('0.2500');
    expect(run.outcome).toBe('budget');
    expect(run.message).toContain('Reached maximum budget ($0.25)');
  });

  it('gives no limit when the run has none', async () => {
    const { calls } = await runClaude(success);
    expect(calls[0]!.argv).not.toContain('--max-budget-usd');
  });
});

describe('claude adapter: the first result ends the run', () => {
  // Claude Code 2.1.330 waits for its background tasks after answering: the fake answers, then stays.
  const startServer = lines(
    init(),
    backgroundBash('toolu_bg', 'npm run dev'),
    toolResult('toolu_bg', 'Command running in background with ID: b1.'),
    assistantText('HYPOTHESIS: caching the parse halves the time'),
  );

  it('stops an agent that keeps running after its answer, promptly, as a normal ok end', async () => {
    const [answer] = answerThenBackgroundResults('HYPOTHESIS: caching the parse halves the time', 'unused');
    const {
      result: run,
      calls,
      activity,
    } = await runClaude(
      [...startServer, { line: answer }, { sleepMs: 60_000 }],
      { timeoutMs: 60_000 },
      { resultGraceMs: 300 },
    );
    expect(run).toMatchObject({
      outcome: 'ok',
      finalText: 'HYPOTHESIS: caching the parse halves the time',
      costUsd: 0.016,
      usage: { inputTokens: 2000, outputTokens: 400 },
      numTurns: 2,
      exitCode: null,
    });
    expect(run.durationMs).toBeLessThan(10_000);
    expect(run.message).toMatch(/finished in 2 turn.*kept running after its answer/);
    expect(activity).toContainEqual({
      type: 'stopping',
      reason: 'it answered but kept running (background tasks)',
    });
    expect(await eventually(() => isGone(calls[0]!.pid))).toBe(true);
  });

  it('sums the tokens of every result, takes the cumulative cost, and keeps the first answer', async () => {
    const [answer, later] = answerThenBackgroundResults(
      'HYPOTHESIS: caching the parse halves the time',
      'The dev server exited.',
    );
    const { result: run } = await runClaude(
      [
        ...startServer,
        { line: answer },
        { sleepMs: 50 },
        { line: later },
        // A turn after the last result that the stop cuts short still used tokens (10 in, 25 out).
        { line: assistantText('Restarting the server.', 'msg_after') },
        { sleepMs: 60_000 },
      ],
      { timeoutMs: 60_000 },
      { resultGraceMs: 1000 },
    );
    expect(run).toMatchObject({
      outcome: 'ok',
      finalText: 'HYPOTHESIS: caching the parse halves the time',
      usage: { inputTokens: 2000 + 1000 + 10, outputTokens: 400 + 200 + 25 },
      costUsd: 0.024,
      numTurns: 3,
    });
    expect(run.durationMs).toBeLessThan(10_000);
  });

  it('lets a later turn’s failure not undo the answer', async () => {
    const [answer] = answerThenBackgroundResults('HYPOTHESIS: fewer allocations', 'unused');
    const { result: run } = await runClaude([
      ...startServer,
      { line: answer },
      { line: apiErrorResult(529, 'API Error: Overloaded') },
      { exit: 1 },
    ]);
    expect(run).toMatchObject({ outcome: 'ok', finalText: 'HYPOTHESIS: fewer allocations', exitCode: 1 });
  });

  it('calls a run whose timeout struck after its answer by its answer, not a timeout', async () => {
    const { result: run } = await runClaude(
      [...lines(init(), result()), { hang: true }],
      // The answer must come first, as it does in the field; a fake agent under a whole suite's load
      // took longer than 500 ms to print it, and that run's timeout was rightly a timeout.
      { timeoutMs: 5000 },
      { resultGraceMs: 30_000, killGraceMs: 200 },
    );
    expect(run).toMatchObject({ outcome: 'ok', finalText: 'Done: wrote notes.md.', exitCode: null });
  });

  it('ends a process the agent started in a session of its own (setsid), after the run', async () => {
    const fakes = await setUpFakeAgents();
    const pidFile = join(fakes.dir, 'escaped.pid');
    const transcriptPath = join(fakes.dir, 'run.log');
    const activity: AgentActivity[] = [];
    const runner = createClaudeRunner(
      { cli: 'claude', text: 'claude' },
      { runningAsRoot: false, killGraceMs: 300 },
    );
    const run = await runner.run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([{ line: init() }, { escape: pidFile }, { line: result() }]),
      mode: 'full',
      timeoutMs: 30_000,
      transcriptPath,
      onActivity: (event) => activity.push(event),
    });
    const escaped = Number(await readFile(pidFile, 'utf8'));
    expect(run.outcome).toBe('ok');
    // It held stdout open and ignored SIGTERM: the run still ended long before its timeout.
    expect(run.durationMs).toBeLessThan(10_000);
    expect(await isGone(escaped)).toBe(true);
    const transcript = await readFile(transcriptPath, 'utf8');
    expect(transcript).toContain(`"forge":"swept","ts"`);
    expect(transcript).toContain(`"pid":${escaped}`);
    expect(activity).toContainEqual({
      type: 'stopping',
      reason: expect.stringMatching(/^ended 1 process\(es\) it left running outside its process group/),
    });
  });
});

describe('claude adapter: stopping', () => {
  it('times out and kills the whole process group, grandchild included, even if they ignore SIGTERM', async () => {
    const fakes = await setUpFakeAgents();
    const pidFile = join(fakes.dir, 'grandchild.pid');
    const runner = createClaudeRunner(
      { cli: 'claude', text: 'claude' },
      { runningAsRoot: false, killGraceMs: 300 },
    );
    const run = await runner.run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([{ grandchild: pidFile }, { ignoreSigterm: true }, { line: init() }, { hang: true }]),
      mode: 'full',
      // The grandchild's pid is written before the timeout, however loaded the machine.
      timeoutMs: 5000,
    });
    expect(run.outcome).toBe('timeout');
    expect(run.exitCode).toBeNull();
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    const [call] = await fakes.calls();
    expect(await eventually(() => isGone(grandchild))).toBe(true);
    expect(await eventually(() => isGone(call!.pid))).toBe(true);
  });

  it('aborts on the caller’s signal and kills the agent', async () => {
    const controller = new AbortController();
    const { result: run, calls } = await runClaude(
      lines(init(), assistantText('working on it')).concat({ hang: true }),
      {
        signal: controller.signal,
        onActivity: (event) => {
          if (event.type === 'text') controller.abort();
        },
      },
    );
    expect(run.outcome).toBe('aborted');
    expect(await eventually(() => isGone(calls[0]!.pid))).toBe(true);
  });

  it('does not start at all when the signal is already aborted', async () => {
    const { result: run, calls } = await runClaude(success, { signal: AbortSignal.abort() });
    expect(run.outcome).toBe('aborted');
    expect(calls).toEqual([]);
  });

  it('reports a missing binary clearly, as fatal', async () => {
    const fakes = await setUpFakeAgents();
    const runner = createClaudeRunner({ cli: 'claude', text: 'claude' });
    const run = await runner.run({ prompt: 'x', cwd: fakes.work, env: { PATH: fakes.work }, mode: 'full' });
    expect(run).toMatchObject({ outcome: 'error', fatal: true, exitCode: null });
    expect(run.message).toContain('`claude` was not found on the PATH');
  });
});
