// Parses agent labels (`agent:claude-opus`) and `--agent` values into an AgentSpec, without a shell.
import { splitCommandLine } from '../infra/command-line.js';
import type { AgentSpec } from './types.js';

export type ParseAgentSpecResult = { ok: true; spec: AgentSpec } | { ok: false; reason: string };

export interface ParseAgentSpecOptions {
  /**
   * Accept anything that is not a known agent as a command to run (`--agent "my-agent --flag"`).
   * Only for text the user typed or configured: bead labels are written by agents and templates, and
   * must never become a command.
   */
  allowCommand?: boolean;
  /**
   * The user's own agents by name (`.forge/config.json` `agent_commands`), each an argv. A label may
   * name one: the command comes from the user's config, never from the bead.
   */
  commands?: Readonly<Record<string, readonly string[]>> | undefined;
}

/** Model aliases Claude Code accepts as they are. */
const CLAUDE_ALIASES = new Set(['opus', 'sonnet', 'haiku', 'opusplan', 'default']);
/** A model name travels as one argv element; it must not be able to pose as a flag. */
const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/[\]-]*$/;
const KNOWN =
  'claude, claude-opus|sonnet|haiku|<model id>, codex, codex-<model>, opencode, opencode-<provider/model>, gemini, gemini-<model>, scripted';
/** The CLIs with an adapter of their own; a label `<cli>-<model>` picks a model. */
const MODEL_CLIS = new Set(['claude', 'codex', 'opencode', 'gemini']);

export function parseAgentSpec(input: string, options: ParseAgentSpecOptions = {}): ParseAgentSpecResult {
  const text = input.trim().replace(/^agent:/, '');
  if (text === '') return { ok: false, reason: 'empty agent name' };

  const named =
    options.commands !== undefined && Object.hasOwn(options.commands, text)
      ? options.commands[text]
      : undefined;
  if (named !== undefined && named.length > 0)
    return { ok: true, spec: { cli: 'command', argv: [...named], text } };
  if (!/[\s'"\\]/.test(text)) {
    const known = parseKnownAgent(text);
    if (known !== undefined) return known;
  }
  if (!options.allowCommand) {
    const own = Object.keys(options.commands ?? {});
    const knownOwn = own.length === 0 ? '' : `; yours: ${own.join(', ')}`;
    return {
      ok: false,
      reason: `unknown agent "${text}" (known: ${KNOWN}${knownOwn}; name your own under "agent_commands" in .forge/config.json)`,
    };
  }
  const split = splitCommandLine(text, 'an agent command');
  if (!split.ok) return { ok: false, reason: `agent command "${text}": ${split.reason}` };
  if (split.argv.length === 0 || split.argv[0] === '') return { ok: false, reason: 'empty agent command' };
  return { ok: true, spec: { cli: 'command', argv: split.argv, text } };
}

/** True for names Forge's own adapters answer to (`claude…`, `codex…`, `opencode…`, `gemini…`, `scripted…`). */
export function isBuiltInAgentName(name: string): boolean {
  return parseKnownAgent(name) !== undefined;
}

function parseKnownAgent(text: string): ParseAgentSpecResult | undefined {
  if (text === 'scripted') return { ok: true, spec: { cli: 'scripted', text } };
  if (text.startsWith('scripted:')) {
    return {
      ok: false,
      reason:
        'the scripted agent takes its script from FORGE_SCRIPTED_AGENT in its environment, not from the label',
    };
  }
  const dash = text.indexOf('-');
  const cli = dash === -1 ? text : text.slice(0, dash);
  if (!MODEL_CLIS.has(cli)) return undefined;
  if (dash === -1) return { ok: true, spec: { cli, text } };

  const rest = text.slice(dash + 1);
  const model = cli === 'claude' ? claudeModel(rest) : cli === 'gemini' ? geminiModel(rest) : rest;
  if (!MODEL_PATTERN.test(model))
    return { ok: false, reason: `agent "${text}": "${model}" is not a model name` };
  if (cli === 'opencode' && !/^[^/]+\/./.test(model)) {
    return {
      ok: false,
      reason: `agent "${text}": opencode names a model as provider/model, e.g. opencode-anthropic/claude-sonnet-4-5`,
    };
  }
  return { ok: true, spec: { cli, model, text } };
}

/**
 * `claude-opus` → `opus`; `claude-claude-opus-4-1` → `claude-opus-4-1`; and since a full model id
 * starts with `claude-` itself, `claude-opus-4-1-20250805` and `claude-3-5-haiku-20241022` are taken
 * whole.
 */
function claudeModel(rest: string): string {
  if (CLAUDE_ALIASES.has(rest) || rest.startsWith('claude-')) return rest;
  if (/^(?:opus|sonnet|haiku)-\d/.test(rest) || /^\d/.test(rest)) return `claude-${rest}`;
  return rest;
}

/** `gemini-2.5-pro` → `gemini-2.5-pro` (a version number gets its `gemini-` back); `gemini-flash` → `flash`. */
function geminiModel(rest: string): string {
  return /^\d/.test(rest) ? `gemini-${rest}` : rest;
}
