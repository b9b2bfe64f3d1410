// The shapes of Claude Code's `--output-format stream-json` lines, as zod schemas (the wire format only).
import { z } from 'zod';

// Every schema is a plain z.object: unknown fields are dropped, and a line of an unknown shape is skipped.
export const UsageSchema = z.object({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cache_read_input_tokens: z.number().optional(),
  cache_creation_input_tokens: z.number().optional(),
});

export const SystemInitSchema = z.object({
  type: z.literal('system'),
  subtype: z.literal('init'),
  model: z.string().optional(),
});

export const ApiRetrySchema = z.object({
  type: z.literal('system'),
  subtype: z.literal('api_retry'),
  attempt: z.number().optional(),
  max_retries: z.number().optional(),
  retry_delay_ms: z.number().optional(),
  error_status: z.number().nullable().optional(),
  error: z.string().optional(),
});

export const RateLimitInfoSchema = z.object({
  status: z.string(),
  resetsAt: z.number().nullable().optional(),
  rateLimitType: z.string().optional(),
  isUsingOverage: z.boolean().optional(),
});
export const RateLimitEventSchema = z.object({
  type: z.literal('rate_limit_event'),
  rate_limit_info: RateLimitInfoSchema.optional(),
  status: z.string().optional(),
  resetsAt: z.number().nullable().optional(),
});

export const AssistantEventSchema = z.object({
  type: z.literal('assistant'),
  message: z.object({
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.array(z.unknown()),
    usage: UsageSchema.optional(),
  }),
  /** Set on API-error messages by recent versions (`rate_limit`, `authentication_failed`, …). */
  error: z.string().optional(),
});

export const UserEventSchema = z.object({
  type: z.literal('user'),
  message: z.object({ content: z.union([z.string(), z.array(z.unknown())]) }),
});

export const TextBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
export const ToolUseBlockSchema = z.object({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
export const ToolResultBlockSchema = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.unknown().optional(),
  is_error: z.boolean().nullable().optional(),
});

export const ClaudeResultSchema = z.object({
  type: z.literal('result'),
  subtype: z.string(),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  num_turns: z.number().optional(),
  duration_ms: z.number().optional(),
  total_cost_usd: z.number().optional(),
  usage: UsageSchema.optional(),
  modelUsage: z
    .record(
      z.string(),
      z.object({
        inputTokens: z.number().optional(),
        outputTokens: z.number().optional(),
        cacheReadInputTokens: z.number().optional(),
        cacheCreationInputTokens: z.number().optional(),
        costUSD: z.number().optional(),
      }),
    )
    .optional(),
  permission_denials: z.array(z.object({ tool_name: z.string(), tool_input: z.unknown() })).optional(),
  terminal_reason: z.string().optional(),
  api_error_status: z.number().nullable().optional(),
  errors: z.array(z.string()).optional(),
});
export type ClaudeResult = z.infer<typeof ClaudeResultSchema>;
