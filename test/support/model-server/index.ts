// A scripted model server (Anthropic Messages, OpenAI Responses, Gemini generateContent) for end-to-end tests of real agent CLIs.
export { startModelServer } from './server.js';
export type { Fault, FaultStatus, ModelServer, ModelServerOptions } from './server.js';
export { summarizeRequest } from './requests.js';
export type { RecordedRequest, ToolResult } from './requests.js';
export { bash, DEFAULT_USAGE, edit, execCommand, text, toolUse, write } from './turns.js';
export type { Matcher, Rule, Turn, TurnBlock, TurnContext, Usage } from './turns.js';
