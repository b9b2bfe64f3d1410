// The Gemini API wire format (what Gemini CLI speaks through @google/genai): a scripted turn as a
// GenerateContentResponse, whole or as server-sent events.
import type { Turn, Usage } from './turns.js';
import { DEFAULT_USAGE } from './turns.js';

type GeminiPart =
  { text: string } | { functionCall: { id: string; name: string; args: Record<string, unknown> } };

export interface RenderedGeminiResponse {
  candidates: { content: { role: 'model'; parts: GeminiPart[] }; finishReason: 'STOP'; index: 0 }[];
  usageMetadata: {
    promptTokenCount: number;
    candidatesTokenCount: number;
    totalTokenCount: number;
    cachedContentTokenCount?: number;
  };
  modelVersion: string;
  responseId: string;
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  529: 'UNAVAILABLE',
};

/** Google's error body: `{error: {code, message, status}}`. */
export function geminiErrorBody(status: number, message: string): string {
  return JSON.stringify({ error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } });
}

/** Text and function calls in the order the turn has them; usage as Gemini counts it (prompt includes cache). */
export function renderGeminiResponse(turn: Turn, model: string, seq: number): RenderedGeminiResponse {
  const tag = String(seq).padStart(6, '0');
  let calls = 0;
  const parts: GeminiPart[] = turn.blocks.map((block) => {
    if (block.type === 'text') return { text: block.text };
    calls += 1;
    return { functionCall: { id: `call_scripted_${tag}_${calls}`, name: block.name, args: block.input } };
  });
  const usage: Usage = { ...DEFAULT_USAGE, ...turn.usage };
  const cached = usage.cache_read_input_tokens ?? 0;
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: {
      promptTokenCount: usage.input_tokens + cached,
      candidatesTokenCount: usage.output_tokens,
      totalTokenCount: usage.input_tokens + cached + usage.output_tokens,
      ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
    },
    modelVersion: model,
    responseId: `scripted_${tag}`,
  };
}

/** `streamGenerateContent?alt=sse`: the whole answer as one event, as a short real answer often is. */
export function renderGeminiEvents(response: RenderedGeminiResponse): string {
  return `data: ${JSON.stringify(response)}\r\n\r\n`;
}
