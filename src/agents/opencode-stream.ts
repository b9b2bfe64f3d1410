// Reads `opencode run --format json` (one JSON event a line) and its `--print-logs` stderr.
import { z } from 'zod';
import { lastLine, parseStreamEvent } from './agent-process.js';
import type { AgentActivity, TokenUsage } from './types.js';

const TokensSchema = z.object({
  input: z.number().optional(),
  output: z.number().optional(),
  reasoning: z.number().optional(),
  cache: z.object({ read: z.number().optional(), write: z.number().optional() }).optional(),
});
const PartSchema = z.object({
  type: z.string().optional(),
  text: z.string().optional(),
  tool: z.string().optional(),
  reason: z.string().optional(),
  cost: z.number().optional(),
  tokens: TokensSchema.optional(),
  state: z
    .object({
      status: z.string().optional(),
      input: z.record(z.string(), z.unknown()).optional(),
      output: z.string().optional(),
      error: z.string().optional(),
    })
    .optional(),
});
const EventSchema = z.object({
  type: z.string(),
  part: PartSchema.optional(),
  error: z
    .object({
      name: z.string().optional(),
      data: z.object({ message: z.string().optional(), statusCode: z.number().optional() }).optional(),
    })
    .optional(),
});
type Part = z.infer<typeof PartSchema>;

/** Tools that change the tree or run commands; a read-only run has none of them. */
const WRITING_TOOLS = new Set(['write', 'edit', 'patch', 'multiedit', 'bash', 'apply_patch']);

/** One API failure opencode logs at `--print-logs`: `message="stream error" … error.error="…"`. */
const STREAM_ERROR = /message="stream error".*?error\.error="((?:[^"\\]|\\.)*)"/;

/** What an opencode run said, accumulated line by line. */
export class OpencodeStream {
  /** Text of the last step that said something: the answer. */
  finalText = '';
  steps = 0;
  /** The last step ended with `stop` (the model was done), not `tool-calls` or `length`. */
  finished = false;
  /** A fatal `error` event: opencode gave up. */
  error: { message: string; status: number | undefined } | undefined;
  costUsd = 0;
  sawCost = false;
  readonly usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  readonly toolErrors: string[] = [];
  readonly readOnlyAttempts: string[] = [];
  private stepText: string[] = [];

  constructor(
    private readonly readOnly: boolean,
    private readonly onActivity: (event: AgentActivity) => void,
  ) {}

  push(line: string): void {
    const event = parseStreamEvent(line, EventSchema);
    if (event === undefined) return;
    if (event.type === 'error') {
      const message = event.error?.data?.message ?? event.error?.name ?? 'error';
      this.error = { message, status: event.error?.data?.statusCode };
      return;
    }
    const part = event.part;
    if (part === undefined) return;
    if (event.type === 'step_start') this.stepText = [];
    else if (event.type === 'text' && part.text !== undefined) {
      this.stepText.push(part.text);
      this.onActivity({ type: 'text', text: part.text.slice(0, 500) });
    } else if (event.type === 'tool_use') this.onTool(part);
    else if (event.type === 'step_finish') this.onStepFinish(part);
  }

  /** The text of one failed API call from the log on stderr, when the line is one. */
  static streamError(line: string): string | undefined {
    const match = STREAM_ERROR.exec(line);
    return match?.[1]?.replace(/\\"/g, '"');
  }

  private onTool(part: Part): void {
    const tool = part.tool ?? 'tool';
    const input = part.state?.input ?? {};
    // A tool the run does not offer comes back as `invalid`, naming the tool the model wanted.
    const wanted = tool === 'invalid' && typeof input.tool === 'string' ? input.tool.toLowerCase() : tool;
    const detail = describeInput(input);
    this.onActivity({ type: 'tool', name: wanted, ...(detail === '' ? {} : { detail }) });
    if (this.readOnly && WRITING_TOOLS.has(wanted)) this.readOnlyAttempts.push(`${wanted} ${detail}`.trim());
    if (part.state?.status === 'error' || tool === 'invalid') {
      const why = part.state?.error ?? part.state?.output ?? 'failed';
      this.toolErrors.push(`${wanted}: ${lastLine(why, 160)}`);
    }
  }

  private onStepFinish(part: Part): void {
    this.steps += 1;
    this.finished = part.reason === 'stop';
    if (this.stepText.length > 0) this.finalText = this.stepText.join('\n');
    const tokens = part.tokens;
    this.usage.inputTokens += tokens?.input ?? 0;
    this.usage.outputTokens += (tokens?.output ?? 0) + (tokens?.reasoning ?? 0);
    this.usage.cacheReadTokens += tokens?.cache?.read ?? 0;
    this.usage.cacheWriteTokens += tokens?.cache?.write ?? 0;
    if (part.cost !== undefined) {
      this.costUsd += part.cost;
      this.sawCost = true;
    }
  }
}

function describeInput(input: Record<string, unknown>): string {
  for (const key of ['command', 'filePath', 'file_path', 'path', 'pattern']) {
    const value = input[key];
    if (typeof value === 'string') return value.slice(0, 120);
  }
  return '';
}
