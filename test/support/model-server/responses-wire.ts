// The OpenAI Responses API wire format (what Codex speaks): a scripted turn as a response or SSE events.
import type { Turn, Usage } from './turns.js';
import { DEFAULT_USAGE } from './turns.js';

type OutputItem =
  | {
      id: string;
      type: 'message';
      role: 'assistant';
      status: 'completed';
      content: { type: 'output_text'; text: string; annotations: [] }[];
    }
  | {
      id: string;
      type: 'function_call';
      status: 'completed';
      call_id: string;
      name: string;
      arguments: string;
    };

export interface RenderedResponse {
  id: string;
  object: 'response';
  status: 'completed';
  model: string;
  output: OutputItem[];
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
  };
}

/** OpenAI's error body; Codex reads `error.type`/`error.code` and `retry-after`. */
export function openAiErrorBody(status: number, message: string): string {
  const [type, code] =
    status === 401
      ? ['invalid_request_error', 'invalid_api_key']
      : status === 429
        ? ['requests', 'rate_limit_exceeded']
        : ['server_error', 'server_error'];
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** Text blocks become one assistant message; each tool use a function call with its input as JSON. */
export function renderResponse(turn: Turn, model: string, seq: number): RenderedResponse {
  const tag = String(seq).padStart(6, '0');
  const output: OutputItem[] = [];
  const text = turn.blocks.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
  if (text !== '') {
    output.push({
      id: `msg_scripted_${tag}`,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
  }
  let calls = 0;
  for (const block of turn.blocks) {
    if (block.type !== 'tool_use') continue;
    calls += 1;
    output.push({
      id: `fc_scripted_${tag}_${calls}`,
      type: 'function_call',
      status: 'completed',
      call_id: `call_scripted_${tag}_${calls}`,
      name: block.name,
      arguments: JSON.stringify(block.input),
    });
  }
  const usage: Usage = { ...DEFAULT_USAGE, ...turn.usage };
  return {
    id: `resp_scripted_${tag}`,
    object: 'response',
    status: 'completed',
    model,
    output,
    usage: {
      input_tokens: usage.input_tokens,
      input_tokens_details: { cached_tokens: usage.cache_read_input_tokens ?? 0 },
      output_tokens: usage.output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input_tokens + usage.output_tokens,
    },
  };
}

/** The response as the SSE stream of `stream: true`: created, each item added/delta/done, completed. */
export function renderResponseEvents(response: RenderedResponse): string {
  const events: Record<string, unknown>[] = [
    { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } },
  ];
  response.output.forEach((item, index) => {
    if (item.type === 'message') {
      events.push({
        type: 'response.output_item.added',
        output_index: index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      const text = item.content[0]?.text ?? '';
      events.push({
        type: 'response.output_text.delta',
        item_id: item.id,
        output_index: index,
        content_index: 0,
        delta: text,
      });
      events.push({
        type: 'response.output_text.done',
        item_id: item.id,
        output_index: index,
        content_index: 0,
        text,
      });
    } else {
      events.push({
        type: 'response.output_item.added',
        output_index: index,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      events.push({
        type: 'response.function_call_arguments.delta',
        item_id: item.id,
        output_index: index,
        delta: item.arguments,
      });
      events.push({
        type: 'response.function_call_arguments.done',
        item_id: item.id,
        output_index: index,
        arguments: item.arguments,
      });
    }
    events.push({ type: 'response.output_item.done', output_index: index, item });
  });
  events.push({ type: 'response.completed', response });
  return events
    .map(
      (event, sequence) =>
        `event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`,
    )
    .join('');
}
