// What a Claude Code result line and API statuses mean: outcomes, token usage, cost, denials.
import type { z } from 'zod';
import type { ClaudeResult, UsageSchema } from './claude-events.js';
import type { PermissionDenial, TokenUsage } from './types.js';

export type StatusOutcome = 'auth' | 'rate_limited' | 'overloaded';

/** Maps an API status (or Claude's error kind) to the outcome it means, if it means one. */
export function statusOutcome(status: number | undefined, error?: string): StatusOutcome | undefined {
  if (status === 401 || error === 'authentication_failed' || error === 'authentication_error') return 'auth';
  if (status === 429 || error === 'rate_limit' || error === 'rate_limit_error') return 'rate_limited';
  if (status === 529 || error === 'overloaded' || error === 'overloaded_error') return 'overloaded';
  return undefined;
}

/** Outcome suggested by the text of a failed run (never applied to a successful one). */
export function errorTextOutcome(text: string): StatusOutcome | undefined {
  if (
    /invalid api key|authentication[_ ](?:error|failed)|please run \/login|oauth token has (?:expired|been revoked)|\b401\b/i.test(
      text,
    )
  ) {
    return 'auth';
  }
  if (/\b429\b|rate[_ ]limit/i.test(text)) return 'rate_limited';
  if (/\b529\b|overloaded/i.test(text)) return 'overloaded';
  return undefined;
}

/** The tokens of `modelUsage`, over every model: cumulative since the start of the session. */
export function modelUsageTotal(result: ClaudeResult): TokenUsage | undefined {
  if (result.modelUsage === undefined) return undefined;
  const total = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const usage of Object.values(result.modelUsage)) {
    total.inputTokens += usage.inputTokens ?? 0;
    total.outputTokens += usage.outputTokens ?? 0;
    total.cacheReadTokens += usage.cacheReadInputTokens ?? 0;
    total.cacheWriteTokens += usage.cacheCreationInputTokens ?? 0;
  }
  return total;
}

export function resultCost(result: ClaudeResult): number | undefined {
  if (result.total_cost_usd !== undefined) return result.total_cost_usd;
  if (result.modelUsage === undefined) return undefined;
  return Object.values(result.modelUsage).reduce((sum, usage) => sum + (usage.costUSD ?? 0), 0);
}

export function resultDenials(result: ClaudeResult | undefined): PermissionDenial[] {
  return (result?.permission_denials ?? []).map((denial) => ({
    tool: denial.tool_name,
    input: denial.tool_input,
  }));
}

export function sumUsage(usages: Iterable<TokenUsage>): TokenUsage {
  const total = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const usage of usages) {
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    total.cacheReadTokens += usage.cacheReadTokens;
    total.cacheWriteTokens += usage.cacheWriteTokens;
  }
  return total;
}

export function toUsage(usage: z.infer<typeof UsageSchema>): TokenUsage {
  return {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    cacheReadTokens: usage.cache_read_input_tokens ?? 0,
    cacheWriteTokens: usage.cache_creation_input_tokens ?? 0,
  };
}
