// What the server records of each request (Messages, Responses or Gemini), and the text views tests assert on ("what was the agent told").

/** Headers never recorded: credentials stay out of test output. */
const SECRET_HEADERS = new Set(['x-api-key', 'authorization', 'cookie', 'proxy-authorization']);

export interface ToolResult {
  toolUseId: string;
  text: string;
  isError: boolean;
}

export interface RecordedRequest {
  /** 1-based order of arrival over the server's life. */
  seq: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body (undefined when there was none or it was not JSON). */
  body: unknown;
  /** `model` of a Messages request. */
  model: string | undefined;
  stream: boolean;
  /** The system prompt's text. */
  system: string;
  /** The text of the user messages, tool results excluded: what the agent was asked. */
  userText: string;
  /** system + user text: what rules match and blind-contract checks read. */
  prompt: string;
  /** Names of the tools the request offers the model (empty for side requests such as titles). */
  tools: string[];
  assistantTurns: number;
  /** Every tool result in the conversation so far. */
  toolResults: ToolResult[];
  /** The tool results of the last message only: the answers to the model's previous turn. */
  latestToolResults: ToolResult[];
  /** Filled in when the server answers. */
  response?: { status: number; rule?: string; turnIndex?: number; fault?: string; scriptError?: string };
}

export function redactHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    headers[name] = SECRET_HEADERS.has(name.toLowerCase()) ? '<redacted>' : [value].flat().join(', ');
  }
  return headers;
}

/** The conversation as both APIs carry it: instructions, what the user said, model turns, tool results. */
interface Conversation {
  systemParts: string[];
  userParts: string[];
  assistantTurns: number;
  toolResults: ToolResult[];
  latestToolResults: ToolResult[];
}

export function describeRequest(
  seq: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): RecordedRequest {
  const record = isRecord(body) ? body : {};
  const conversation = Array.isArray(record.input)
    ? readResponsesInput(record)
    : Array.isArray(record.contents)
      ? readGeminiContents(record)
      : readMessages(record);
  const system = conversation.systemParts.filter((part) => part !== '').join('\n');
  const userText = conversation.userParts.join('\n');
  const tools = Array.isArray(record.tools)
    ? record.tools.filter(isRecord).flatMap((tool) =>
        // Gemini groups its tools: `tools: [{functionDeclarations: [{name}, …]}]`.
        Array.isArray(tool.functionDeclarations)
          ? tool.functionDeclarations
              .filter(isRecord)
              .map((declaration) => (typeof declaration.name === 'string' ? declaration.name : '?'))
          : [typeof tool.name === 'string' ? tool.name : typeof tool.type === 'string' ? tool.type : '?'],
      )
    : [];
  return {
    seq,
    method,
    path,
    headers,
    body,
    model: typeof record.model === 'string' ? record.model : undefined,
    stream: record.stream === true,
    system,
    userText,
    prompt: `${system}\n${userText}`,
    tools,
    assistantTurns: conversation.assistantTurns,
    toolResults: conversation.toolResults,
    latestToolResults: conversation.latestToolResults,
  };
}

/** Anthropic Messages: `system`, then user / assistant (/ system) messages with content blocks. */
function readMessages(record: Record<string, unknown>): Conversation {
  const messages = Array.isArray(record.messages) ? record.messages.filter(isRecord) : [];
  const conversation: Conversation = {
    systemParts: [textOf(record.system)],
    userParts: [],
    assistantTurns: 0,
    toolResults: [],
    latestToolResults: [],
  };
  for (const message of messages) {
    if (message.role === 'assistant') {
      conversation.assistantTurns += 1;
      conversation.latestToolResults = [];
      continue;
    }
    // Recent Claude Code versions send part of the system prompt as mid-conversation system messages.
    if (message.role === 'system') {
      conversation.systemParts.push(textOf(message.content));
      continue;
    }
    const content = message.content;
    if (typeof content === 'string') {
      conversation.userParts.push(content);
      continue;
    }
    if (!Array.isArray(content)) continue;
    for (const block of content.filter(isRecord)) {
      if (block.type === 'text' && typeof block.text === 'string') conversation.userParts.push(block.text);
      if (block.type === 'tool_result') {
        addToolResult(conversation, {
          toolUseId: typeof block.tool_use_id === 'string' ? block.tool_use_id : '',
          text: textOf(block.content),
          isError: block.is_error === true,
        });
      }
    }
  }
  return conversation;
}

/**
 * OpenAI Responses (Codex): `instructions`, then input items: developer/user messages, the model's own
 * items (assistant messages, function calls, reasoning) and function call outputs. A run of consecutive
 * model items is one earlier turn.
 */
function readResponsesInput(record: Record<string, unknown>): Conversation {
  const items = (record.input as unknown[]).filter(isRecord);
  const conversation: Conversation = {
    systemParts: [textOf(record.instructions)],
    userParts: [],
    assistantTurns: 0,
    toolResults: [],
    latestToolResults: [],
  };
  let inModelTurn = false;
  for (const item of items) {
    const fromModel =
      item.type === 'function_call' ||
      item.type === 'custom_tool_call' ||
      item.type === 'reasoning' ||
      (item.type === 'message' && item.role === 'assistant');
    if (fromModel) {
      if (!inModelTurn) {
        conversation.assistantTurns += 1;
        conversation.latestToolResults = [];
      }
      inModelTurn = true;
      continue;
    }
    inModelTurn = false;
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      addToolResult(conversation, {
        toolUseId: typeof item.call_id === 'string' ? item.call_id : '',
        text: typeof item.output === 'string' ? item.output : textOf(item.output),
        isError: false,
      });
      continue;
    }
    if (item.type === 'message' || item.role !== undefined) {
      const text = textOf(item.content);
      if (item.role === 'developer' || item.role === 'system') conversation.systemParts.push(text);
      else conversation.userParts.push(text);
    }
  }
  return conversation;
}

/**
 * Gemini (`generateContent`): `systemInstruction`, then `contents` of role user / model, whose parts are
 * text, the model's function calls, and function responses (in a user content).
 */
function readGeminiContents(record: Record<string, unknown>): Conversation {
  const contents = (record.contents as unknown[]).filter(isRecord);
  const system = isRecord(record.systemInstruction)
    ? record.systemInstruction.parts
    : record.systemInstruction;
  const conversation: Conversation = {
    systemParts: [textOf(system)],
    userParts: [],
    assistantTurns: 0,
    toolResults: [],
    latestToolResults: [],
  };
  for (const content of contents) {
    const parts = Array.isArray(content.parts) ? content.parts.filter(isRecord) : [];
    if (content.role === 'model') {
      conversation.assistantTurns += 1;
      conversation.latestToolResults = [];
      continue;
    }
    for (const part of parts) {
      if (typeof part.text === 'string') conversation.userParts.push(part.text);
      const response = isRecord(part.functionResponse) ? part.functionResponse : undefined;
      if (response === undefined) continue;
      const output = isRecord(response.response) ? response.response : {};
      addToolResult(conversation, {
        toolUseId:
          typeof response.id === 'string'
            ? response.id
            : typeof response.name === 'string'
              ? response.name
              : '',
        text: typeof output.output === 'string' ? output.output : JSON.stringify(output),
        isError: output.error !== undefined,
      });
    }
  }
  return conversation;
}

function addToolResult(conversation: Conversation, result: ToolResult): void {
  conversation.toolResults.push(result);
  conversation.latestToolResults.push(result);
}

/** A short account of a request for assertion messages: path, rule, turn, tools, the prompt's start. */
export function summarizeRequest(request: RecordedRequest | undefined, promptChars = 1500): string {
  if (request === undefined) return '(no request recorded)';
  const response = request.response;
  const lines = [
    `#${request.seq} ${request.method} ${request.path} model=${request.model ?? '-'} stream=${request.stream}` +
      ` → ${response?.status ?? '?'}${response?.fault ? ` (${response.fault})` : ''}` +
      `${response?.rule ? ` rule=${response.rule} turn=${response.turnIndex}` : ''}`,
    `tools: ${request.tools.join(',') || '(none)'}; assistant turns so far: ${request.assistantTurns}`,
  ];
  if (response?.scriptError !== undefined) lines.push(`SCRIPT ERROR: ${response.scriptError}`);
  for (const result of request.latestToolResults) {
    lines.push(`tool_result${result.isError ? ' (error)' : ''}: ${oneLine(result.text).slice(0, 300)}`);
  }
  lines.push(`user text: ${oneLine(request.userText).slice(0, promptChars)}`);
  return lines.join('\n');
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return '';
  return value
    .filter(isRecord)
    .map((block) => (typeof block.text === 'string' ? block.text : ''))
    .filter((part) => part !== '')
    .join('\n');
}

function oneLine(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
