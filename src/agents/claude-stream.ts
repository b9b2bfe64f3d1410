// Reads Claude Code's `--output-format stream-json` lines into what the adapter needs to classify a run.
import type { z } from 'zod';
import {
  ApiRetrySchema,
  AssistantEventSchema,
  ClaudeResultSchema,
  RateLimitEventSchema,
  SystemInitSchema,
  TextBlockSchema,
  ToolResultBlockSchema,
  ToolUseBlockSchema,
  UserEventSchema,
  type ClaudeResult,
} from './claude-events.js';
import { modelUsageTotal, resultCost, statusOutcome, sumUsage, toUsage } from './claude-result.js';
import { isUsageLimitText, parseResetTime } from './limits.js';
import type { AgentActivity, TokenUsage } from './types.js';

export interface ApiRetrySeen {
  status?: number | undefined;
  error?: string | undefined;
  delayMs?: number | undefined;
}

/** Tools a read-only Claude run has; using anything else is an attempt to write or run something. */
export const READ_ONLY_TOOLS = ['Read', 'Grep', 'Glob'] as const;

export interface ClaudeStreamOptions {
  readOnly: boolean;
  now: () => number;
  onActivity: (event: AgentActivity) => void;
}

/** What `push` asks of the adapter: stop now (`auth`), or the run has given its answer (`answered`). */
export type StreamSignal = 'auth' | 'answered';

/**
 * What a stream-json run said, accumulated line by line.
 *
 * The first `result` is the run's answer. Claude Code 2.1.330 does not exit after it while tasks it
 * started with `run_in_background` are running: it waits for them, runs another turn and prints another
 * `result` (which answers "your background task ended", not the task Forge gave). So the outcome, the
 * final text and the denials come from the first result; tokens and cost cover every result seen.
 */
export class ClaudeStream {
  /** Every result, in order; the adapter stops the run shortly after the first. */
  readonly results: ClaudeResult[] = [];
  model: string | undefined;
  lastAssistantText = '';
  /** Whether that text came from Claude Code itself (an API error, a limit), not from the model. */
  private lastTextSynthetic = false;
  lastRetry: ApiRetrySeen | undefined;
  /** A usage-limit message in assistant or result text (never in tool output). */
  usageLimitText: string | undefined;
  /** A `rate_limit_event` that refused the request. */
  rateLimitRejected: { resetAt?: number | undefined } | undefined;
  /** An API error kind from an assistant error message (`rate_limit`, `authentication_failed`, …). */
  assistantError: string | undefined;
  readonly toolErrors: string[] = [];
  readonly readOnlyAttempts: string[] = [];
  private readonly toolNames = new Map<string, string>();
  private readonly usageByMessage = new Map<string, TokenUsage>();
  private readonly messagesSinceResult = new Set<string>();

  constructor(private readonly options: ClaudeStreamOptions) {}

  /** The run's answer: its first result. */
  get result(): ClaudeResult | undefined {
    return this.results[0];
  }

  /** Takes one stdout line; says when the run should be stopped now (`auth`) or has answered. */
  push(line: string): StreamSignal | undefined {
    const json = parseJson(line);
    if (json === undefined) return undefined;

    const result = ClaudeResultSchema.safeParse(json);
    if (result.success) {
      // The result repeats the last text: a limit only when Claude Code wrote it, or marks it an error.
      if (this.results.length === 0 && (this.lastTextSynthetic || result.data.is_error === true)) {
        this.checkUsageLimitText(result.data.result);
      }
      this.results.push(result.data);
      this.messagesSinceResult.clear();
      return 'answered';
    }
    const assistant = AssistantEventSchema.safeParse(json);
    // After the answer only the tokens count: what a later turn says or suffers does not change the run.
    if (this.results.length > 0) {
      if (assistant.success) this.countUsage(assistant.data.message);
      return undefined;
    }
    if (assistant.success) return this.onAssistant(assistant.data);
    const user = UserEventSchema.safeParse(json);
    if (user.success) return this.onUser(user.data);
    const retry = ApiRetrySchema.safeParse(json);
    if (retry.success) return this.onRetry(retry.data);
    const rateLimit = RateLimitEventSchema.safeParse(json);
    if (rateLimit.success) return this.onRateLimit(rateLimit.data);
    const init = SystemInitSchema.safeParse(json);
    if (init.success) this.model = init.data.model ?? this.model;
    return undefined;
  }

  /** Token usage summed over the assistant messages seen: the estimate when no result arrived. */
  streamedUsage(): TokenUsage {
    return sumUsage(this.usageByMessage.values());
  }

  /**
   * The run's tokens. Each result's `usage` covers only the turns since the previous result (its
   * `modelUsage` is cumulative), so the results' usages are summed; messages after the last result (a
   * turn the stop cut short) are added from the stream. Without any result, the stream's estimate.
   */
  usage(): TokenUsage {
    const last = this.results.at(-1);
    if (last === undefined) return this.streamedUsage();
    const reported = this.results.flatMap((result) => (result.usage ? [toUsage(result.usage)] : []));
    const fromResults =
      reported.length === this.results.length
        ? sumUsage(reported)
        : (modelUsageTotal(last) ?? this.streamedUsage());
    const unreported = [...this.messagesSinceResult].flatMap((id) => this.usageByMessage.get(id) ?? []);
    return sumUsage([fromResults, ...unreported]);
  }

  /** The run's cost: `total_cost_usd` (and `modelUsage`) are cumulative, so the last result's figure. */
  costUsd(): number | undefined {
    const last = this.results.at(-1);
    return last && resultCost(last);
  }

  /** Turns over every result (each counts its own since the previous one). */
  numTurns(): number | undefined {
    const turns = this.results.map((result) => result.num_turns).filter((turns) => turns !== undefined);
    return turns.length === 0 ? undefined : turns.reduce((sum, turns) => sum + turns, 0);
  }

  private countUsage(message: z.infer<typeof AssistantEventSchema>['message']): void {
    if (message.usage === undefined) return;
    // Claude Code repeats a message's usage on each content block it streams: count each message once.
    const id = message.id ?? `#${this.usageByMessage.size}`;
    this.usageByMessage.set(id, toUsage(message.usage));
    this.messagesSinceResult.add(id);
  }

  private onAssistant(event: z.infer<typeof AssistantEventSchema>): undefined {
    const { message } = event;
    this.countUsage(message);
    if (event.error !== undefined) this.assistantError = event.error;
    for (const raw of message.content) {
      const text = TextBlockSchema.safeParse(raw);
      if (text.success) {
        this.lastAssistantText = text.data.text;
        // The model's own words are never a limit: a doer whose whole answer was the banner with a
        // reset 20 days on had the runner sleep for it (red team). Claude Code's own messages (an API
        // error, a plan limit) carry the model "<synthetic>".
        this.lastTextSynthetic = message.model === SYNTHETIC_MODEL;
        if (this.lastTextSynthetic) this.checkUsageLimitText(text.data.text);
        this.options.onActivity({ type: 'text', text: text.data.text.slice(0, 500) });
        continue;
      }
      const tool = ToolUseBlockSchema.safeParse(raw);
      if (tool.success) {
        this.toolNames.set(tool.data.id, tool.data.name);
        const detail = describeToolInput(tool.data.input);
        this.options.onActivity({ type: 'tool', name: tool.data.name, ...(detail ? { detail } : {}) });
        if (this.options.readOnly && !(READ_ONLY_TOOLS as readonly string[]).includes(tool.data.name)) {
          this.readOnlyAttempts.push(detail ? `${tool.data.name} ${detail}` : tool.data.name);
        }
      }
    }
    return undefined;
  }

  private onUser(event: z.infer<typeof UserEventSchema>): undefined {
    if (typeof event.message.content === 'string') return undefined;
    for (const raw of event.message.content) {
      const block = ToolResultBlockSchema.safeParse(raw);
      if (!block.success || block.data.is_error !== true) continue;
      const name = this.toolNames.get(block.data.tool_use_id) ?? 'tool';
      this.toolErrors.push(`${name}: ${shorten(toolResultText(block.data.content), 300)}`);
    }
    return undefined;
  }

  private onRetry(event: z.infer<typeof ApiRetrySchema>): StreamSignal | undefined {
    const status = event.error_status ?? undefined;
    this.lastRetry = { status, error: event.error, delayMs: event.retry_delay_ms };
    this.options.onActivity({
      type: 'retry',
      ...this.lastRetry,
      attempt: event.attempt,
      maxRetries: event.max_retries,
    });
    // A rejected key does not start working on the tenth try: stop now instead of minutes later.
    return statusOutcome(status, event.error) === 'auth' ? 'auth' : undefined;
  }

  private onRateLimit(event: z.infer<typeof RateLimitEventSchema>): undefined {
    const info = event.rate_limit_info;
    const status = info?.status ?? event.status;
    if (status === undefined) return undefined;
    const resetsAt = info?.resetsAt ?? event.resetsAt ?? undefined;
    const resetAt = resetsAt === undefined ? undefined : resetsAt < 1e12 ? resetsAt * 1000 : resetsAt;
    this.options.onActivity({ type: 'rate_limit', status, resetAt });
    // Paid overage lets the request through even though the plan's own limit is exhausted.
    if (status === 'rejected' && info?.isUsingOverage !== true) {
      this.rateLimitRejected = { resetAt };
    }
    return undefined;
  }

  private checkUsageLimitText(text: string | undefined): void {
    if (text !== undefined && this.usageLimitText === undefined && isUsageLimitText(text)) {
      this.usageLimitText = text;
    }
  }

  /** When the usage limit seen resets, if the stream said. */
  resetAt(): number | undefined {
    if (this.rateLimitRejected?.resetAt !== undefined) return this.rateLimitRejected.resetAt;
    if (this.usageLimitText !== undefined) return parseResetTime(this.usageLimitText, this.options.now());
    return undefined;
  }
}

/** The model Claude Code names on the assistant messages it makes itself (errors, limits), not a model's. */
const SYNTHETIC_MODEL = '<synthetic>';

function parseJson(line: string): unknown {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        const text = TextBlockSchema.safeParse(part);
        return text.success ? text.data.text : '';
      })
      .join(' ');
  }
  return '';
}

/** The part of a tool call worth a progress line: the file or the command. */
function describeToolInput(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const record = input as Record<string, unknown>;
  for (const key of ['file_path', 'path', 'command', 'pattern', 'url']) {
    const value = record[key];
    if (typeof value === 'string') return shorten(value, 120);
  }
  return undefined;
}

function shorten(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}
