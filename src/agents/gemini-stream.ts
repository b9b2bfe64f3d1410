// Reads `gemini -o stream-json` (one JSON event a line) and the retry notices Gemini CLI prints on stderr.
import { z } from 'zod';
import { lastLine, parseStreamEvent } from './agent-process.js';
import type { AgentActivity, TokenUsage } from './types.js';

const StatsSchema = z.object({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cached: z.number().optional(),
  tool_calls: z.number().optional(),
});
const EventSchema = z.object({
  type: z.string(),
  model: z.string().optional(),
  role: z.string().optional(),
  content: z.string().optional(),
  delta: z.boolean().optional(),
  tool_name: z.string().optional(),
  tool_id: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  status: z.string().optional(),
  output: z.string().optional(),
  message: z.string().optional(),
  severity: z.string().optional(),
  error: z.object({ type: z.string().optional(), message: z.string().optional() }).optional(),
  stats: StatsSchema.optional(),
});

/** Tools that change the tree or run commands; plan mode (read-only) refuses or lacks them. */
const WRITING_TOOLS = new Set(['write_file', 'replace', 'run_shell_command', 'edit', 'smart_edit']);

/** `Attempt 2 failed with status 429. Retrying with backoff... <error>` on stderr. */
const RETRY_NOTICE = /^Attempt (\d+) failed(?: with status (\d{3}))?\. Retrying with backoff\.\.\.\s*(.*)$/;

/** What a Gemini CLI run said, accumulated line by line. */
export class GeminiStream {
  model: string | undefined;
  /** The final `result` event's status and error, once it came. */
  result: { status: string; error: string | undefined } | undefined;
  readonly usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  toolCalls = 0;
  readonly toolErrors: string[] = [];
  readonly readOnlyAttempts: string[] = [];
  private answer: string[] = [];
  private readonly tools = new Map<string, string>();

  constructor(
    private readonly readOnly: boolean,
    private readonly onActivity: (event: AgentActivity) => void,
  ) {}

  /** The assistant's text since its last tool call: the answer. */
  get finalText(): string {
    return this.answer.join('').trim();
  }

  push(line: string): void {
    const event = parseStreamEvent(line, EventSchema);
    if (event === undefined) return;
    switch (event.type) {
      case 'init':
        this.model = event.model;
        return;
      case 'message':
        if (event.role === 'assistant' && event.content !== undefined) {
          if (event.delta !== true) this.answer = [];
          this.answer.push(event.content);
          this.onActivity({ type: 'text', text: event.content.slice(0, 500) });
        }
        return;
      case 'tool_use':
        this.onToolUse(event.tool_name ?? 'tool', event.tool_id, event.parameters ?? {});
        return;
      case 'tool_result':
        if (event.status === 'error') {
          const tool = this.tools.get(event.tool_id ?? '') ?? 'tool';
          this.toolErrors.push(`${tool}: ${lastLine(event.error?.message ?? event.output ?? 'failed', 160)}`);
        }
        return;
      case 'result':
        this.result = { status: event.status ?? 'unknown', error: event.error?.message };
        this.usage.inputTokens = Math.max(0, (event.stats?.input_tokens ?? 0) - (event.stats?.cached ?? 0));
        this.usage.cacheReadTokens = event.stats?.cached ?? 0;
        this.usage.outputTokens = event.stats?.output_tokens ?? 0;
        this.toolCalls = event.stats?.tool_calls ?? this.toolCalls;
        return;
      default:
        return;
    }
  }

  /** A retry notice from stderr: the status and error text, when the line is one. */
  static retryNotice(
    line: string,
  ): { attempt: number; status: number | undefined; text: string } | undefined {
    const match = RETRY_NOTICE.exec(line.trim());
    if (match === null) return undefined;
    return {
      attempt: Number(match[1]),
      status: match[2] === undefined ? undefined : Number(match[2]),
      text: `${match[2] ?? ''} ${match[3] ?? ''}`.trim(),
    };
  }

  private onToolUse(tool: string, id: string | undefined, parameters: Record<string, unknown>): void {
    this.answer = [];
    if (id !== undefined) this.tools.set(id, tool);
    const detail = describeParameters(parameters);
    this.onActivity({ type: 'tool', name: tool, ...(detail === '' ? {} : { detail }) });
    if (this.readOnly && WRITING_TOOLS.has(tool)) this.readOnlyAttempts.push(`${tool} ${detail}`.trim());
  }
}

function describeParameters(parameters: Record<string, unknown>): string {
  for (const key of ['command', 'file_path', 'absolute_path', 'dir_path', 'path', 'pattern']) {
    const value = parameters[key];
    if (typeof value === 'string') return value.slice(0, 120);
  }
  return '';
}
