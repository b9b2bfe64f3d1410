// A finished agent run for tests whose fake agent succeeds: the fields every AgentResult carries.
import type { AgentResult } from '../../src/agents/types.js';

export function okAgentResult(overrides: Partial<AgentResult> = {}): AgentResult {
  return {
    outcome: 'ok',
    message: 'done',
    finalText: '',
    exitCode: 0,
    durationMs: 1,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    permissionDenials: [],
    toolErrors: [],
    agent: 'fake',
    scripted: false,
    ...overrides,
  };
}
