// The Anthropic Messages API wire format (what Claude Code speaks): a scripted turn as a Message or SSE.
import type { Turn, Usage } from './turns.js';
import { DEFAULT_USAGE } from './turns.js';

export type ApiErrorType =
  | 'rate_limit_error'
  | 'overloaded_error'
  | 'authentication_error'
  | 'invalid_request_error'
  | 'not_found_error'
  | 'api_error';

/** The body every Anthropic API error carries. */
export function errorBody(type: ApiErrorType, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

interface WireBlock {
  type: 'text' | 'tool_use';
  text?: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
}

export interface RenderedMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: WireBlock[];
  stop_reason: string;
  stop_sequence: null;
  usage: Usage;
}

/** Gives tool uses ids unique over the server's life (Claude Code pairs results with them). */
export function renderMessage(turn: Turn, model: string, messageSeq: number): RenderedMessage {
  let toolSeq = 0;
  const content: WireBlock[] = turn.blocks.map((block) => {
    if (block.type === 'text') return { type: 'text', text: block.text };
    toolSeq += 1;
    const id = `toolu_${String(messageSeq).padStart(6, '0')}_${toolSeq}`;
    return { type: 'tool_use', id, name: block.name, input: block.input };
  });
  const stopReason = turn.stopReason ?? (toolSeq > 0 ? 'tool_use' : 'end_turn');
  return {
    id: `msg_scripted_${String(messageSeq).padStart(6, '0')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { ...DEFAULT_USAGE, ...turn.usage },
  };
}

/** The message as the stream of server-sent events the real API sends for `stream: true`. */
export function renderEvents(message: RenderedMessage): string {
  const events: [string, unknown][] = [];
  const { usage } = message;
  events.push([
    'message_start',
    {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...usage, output_tokens: 1 },
      },
    },
  ]);
  events.push(['ping', { type: 'ping' }]);
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push([
        'content_block_start',
        { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      ]);
      for (const piece of chunks(block.text ?? '', 40)) {
        events.push([
          'content_block_delta',
          { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } },
        ]);
      }
    } else {
      events.push([
        'content_block_start',
        {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        },
      ]);
      // The input arrives as partial JSON strings that only parse once joined, as from the real API.
      for (const piece of chunks(JSON.stringify(block.input ?? {}), 30)) {
        events.push([
          'content_block_delta',
          { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } },
        ]);
      }
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push([
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
  ]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');
}

function chunks(value: string, size: number): string[] {
  if (value === '') return [''];
  const parts: string[] = [];
  for (let start = 0; start < value.length; start += size) parts.push(value.slice(start, start + size));
  return parts;
}
