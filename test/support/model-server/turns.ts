// Scripted model turns and the rules that pick them: what the fake model answers, as plain data
// (rendered for Claude Code as Anthropic content blocks, for Codex as Responses output items).
import type { RecordedRequest } from './requests.js';

export type TurnBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; name: string; input: Record<string, unknown> };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** One answer of the model: its content blocks; the stop reason follows from them unless given. */
export interface Turn {
  blocks: TurnBlock[];
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens';
  usage?: Usage;
}

/** Usage every scripted answer reports unless its turn says otherwise, so tokens and cost are exact. */
export const DEFAULT_USAGE: Usage = { input_tokens: 1000, output_tokens: 200 };

export function text(value: string): Turn {
  return { blocks: [{ type: 'text', text: value }] };
}

export function toolUse(name: string, input: Record<string, unknown>, preamble?: string): Turn {
  const blocks: TurnBlock[] = preamble === undefined ? [] : [{ type: 'text', text: preamble }];
  blocks.push({ type: 'tool_use', name, input });
  return { blocks };
}

export const write = (filePath: string, content: string): Turn =>
  toolUse('Write', { file_path: filePath, content });
export const edit = (filePath: string, oldString: string, newString: string): Turn =>
  toolUse('Edit', { file_path: filePath, old_string: oldString, new_string: newString });
export const bash = (command: string, description = 'run a command'): Turn =>
  toolUse('Bash', { command, description });
/** Codex's shell tool, as offered to a model Codex has no metadata for. */
export const execCommand = (cmd: string, workdir: string): Turn => toolUse('exec_command', { cmd, workdir });

/** What a rule sees when it is asked for a turn. */
export interface TurnContext {
  request: RecordedRequest;
  /** Assistant messages already in the conversation: 0 for the first answer of a run. */
  turnIndex: number;
  /** Tool results already in the conversation, with their text and error flag. */
  toolResults: { toolUseId: string; text: string; isError: boolean }[];
}

export type Matcher = string | RegExp | ((request: RecordedRequest) => boolean);

export interface Rule {
  /** Shown in recorded requests and failure messages. */
  name: string;
  /** Text the prompt (system + user text, tool results excluded) must contain; or a predicate. */
  match: Matcher;
  /** The answers in order; past the end, the last one repeats. Or a function of the conversation. */
  turns: Turn[] | ((context: TurnContext) => Turn);
}

export function matches(matcher: Matcher, request: RecordedRequest): boolean {
  if (typeof matcher === 'string') return request.prompt.includes(matcher);
  if (matcher instanceof RegExp) return matcher.test(request.prompt);
  return matcher(request);
}

export function turnFor(rule: Rule, context: TurnContext): Turn {
  if (typeof rule.turns === 'function') return rule.turns(context);
  const turns = rule.turns;
  if (turns.length === 0) return text('(no scripted turns)');
  return turns[Math.min(context.turnIndex, turns.length - 1)]!;
}
