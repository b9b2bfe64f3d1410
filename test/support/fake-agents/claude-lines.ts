// Claude Code stream-json lines in the shapes the real CLI (2.1.x) prints, for the fake `claude`.

const SESSION = '3f1c2a9e-8d4b-4c1e-9a57-2b6d0e4f7a13';
export const MODEL = 'claude-sonnet-4-5-20250929';

export function init(overrides: Record<string, unknown> = {}) {
  return {
    type: 'system',
    subtype: 'init',
    cwd: '/work',
    session_id: SESSION,
    tools: ['Task', 'Bash', 'Glob', 'Grep', 'Read', 'Edit', 'Write'],
    mcp_servers: [],
    model: MODEL,
    permissionMode: 'bypassPermissions',
    slash_commands: [],
    apiKeySource: 'ANTHROPIC_API_KEY',
    claude_code_version: '2.1.330',
    output_style: 'default',
    uuid: 'e1a2b3c4-0000-4000-8000-000000000001',
    ...overrides,
  };
}

const usage = (input: number, output: number) => ({
  input_tokens: input,
  cache_creation_input_tokens: 120,
  cache_read_input_tokens: 3000,
  output_tokens: output,
  service_tier: 'standard',
});

function assistant(id: string, content: unknown[], extra: Record<string, unknown> = {}) {
  return {
    type: 'assistant',
    message: {
      model: MODEL,
      id,
      type: 'message',
      role: 'assistant',
      content,
      stop_reason: null,
      stop_sequence: null,
      usage: usage(10, 25),
      context_management: null,
    },
    parent_tool_use_id: null,
    session_id: SESSION,
    uuid: `u-${id}`,
    ...extra,
  };
}

export function assistantText(text: string, id = 'msg_01TEXT', extra: Record<string, unknown> = {}) {
  return assistant(id, [{ type: 'text', text }], extra);
}

/** Text Claude Code writes itself (an API error, a plan's usage limit): its model is "<synthetic>". */
export function syntheticText(text: string, id = 'msg_01SYNTH') {
  const made = assistant(id, [{ type: 'text', text }]);
  return { ...made, message: { ...made.message, model: '<synthetic>' } };
}

export function toolUse(toolId: string, name: string, input: Record<string, unknown>, id = `msg_${toolId}`) {
  return assistant(id, [{ type: 'tool_use', id: toolId, name, input }]);
}

export function toolResult(toolId: string, content: string, isError = false) {
  return {
    type: 'user',
    message: {
      role: 'user',
      content: [
        { tool_use_id: toolId, type: 'tool_result', content, ...(isError ? { is_error: true } : {}) },
      ],
    },
    parent_tool_use_id: null,
    session_id: SESSION,
    uuid: `r-${toolId}`,
    tool_use_result: isError ? `Error: ${content}` : { type: 'text', file: { content } },
  };
}

export function apiRetry(status: number | null, error: string, attempt = 1) {
  return {
    type: 'system',
    subtype: 'api_retry',
    attempt,
    max_retries: 3,
    retry_delay_ms: 500 * 2 ** (attempt - 1),
    error_status: status,
    error,
    session_id: SESSION,
    uuid: `retry-${attempt}`,
  };
}

export function rateLimitEvent(status: string, resetsAt?: number, extra: Record<string, unknown> = {}) {
  return {
    type: 'rate_limit_event',
    rate_limit_info: {
      status,
      ...(resetsAt === undefined ? {} : { resetsAt }),
      rateLimitType: 'five_hour',
      isUsingOverage: false,
      ...extra,
    },
    uuid: 'rl-1',
    session_id: SESSION,
  };
}

export function result(overrides: Record<string, unknown> = {}) {
  return {
    type: 'result',
    subtype: 'success',
    is_error: false,
    duration_ms: 4210,
    duration_api_ms: 3900,
    num_turns: 3,
    result: 'Done: wrote notes.md.',
    session_id: SESSION,
    total_cost_usd: 0.0421,
    usage: {
      input_tokens: 42,
      cache_creation_input_tokens: 1500,
      cache_read_input_tokens: 9000,
      output_tokens: 310,
      server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
      service_tier: 'standard',
    },
    modelUsage: {
      [MODEL]: {
        inputTokens: 42,
        outputTokens: 310,
        cacheReadInputTokens: 9000,
        cacheCreationInputTokens: 1500,
        webSearchRequests: 0,
        costUSD: 0.0421,
        contextWindow: 200000,
      },
    },
    permission_denials: [],
    terminal_reason: 'completed',
    uuid: 'res-1',
    ...overrides,
  };
}

/** The result of a run that failed on an API error, as with CLAUDE_CODE_MAX_RETRIES exhausted. */
export function apiErrorResult(status: number, text: string) {
  return result({
    is_error: true,
    num_turns: 1,
    result: text,
    total_cost_usd: 0,
    terminal_reason: 'api_error',
    api_error_status: status,
  });
}

/** A Bash tool call that Claude Code runs as a background task (2.1.330 waits for it before exiting). */
export function backgroundBash(toolId: string, command: string) {
  return toolUse(toolId, 'Bash', {
    command,
    description: 'start in the background',
    run_in_background: true,
  });
}

/**
 * The two results 2.1.330 prints when a background task outlives the answer, in the shapes seen: the
 * answer, then (once the task ends) a turn about the task. `usage` covers only the turns since the
 * previous result; `total_cost_usd` and `modelUsage` are cumulative over the session.
 */
export function answerThenBackgroundResults(answer: string, later: string) {
  const modelUsage = (input: number, output: number, cost: number) => ({
    [MODEL]: {
      inputTokens: input,
      outputTokens: output,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      webSearchRequests: 0,
      costUSD: cost,
      contextWindow: 1000000,
    },
  });
  const usage = (input: number, output: number) => ({
    input_tokens: input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: output,
    service_tier: 'standard',
  });
  const first = result({
    result: answer,
    num_turns: 2,
    total_cost_usd: 0.016,
    usage: usage(2000, 400),
    modelUsage: modelUsage(2000, 400, 0.016),
    result_index: 0,
    uuid: 'res-1',
  });
  const second = result({
    result: later,
    num_turns: 1,
    total_cost_usd: 0.024,
    usage: usage(1000, 200),
    modelUsage: modelUsage(3000, 600, 0.024),
    origin: { kind: 'task-notification', producer: 'session-task' },
    result_index: 1,
    uuid: 'res-2',
  });
  return [first, second] as const;
}
