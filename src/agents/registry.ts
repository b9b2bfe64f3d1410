// Maps an agent spec to its adapter. A plain object passed in, not a global registry, so tests can swap it.
import { UsageError } from '../infra/errors.js';
import { createClaudeRunner } from './claude.js';
import { createCodexRunner } from './codex.js';
import { createCommandRunner } from './command.js';
import { createGeminiRunner } from './gemini.js';
import { createOpencodeRunner } from './opencode.js';
import { createScriptedRunner } from './scripted.js';
import { parseAgentSpec } from './spec.js';
import type { ParseAgentSpecOptions } from './spec.js';
import type { AgentRunner, AgentRunnerOptions, AgentSpec } from './types.js';

export type AgentAdapterFactory = (spec: AgentSpec, options: AgentRunnerOptions) => AgentRunner;

export const agentAdapters: Readonly<Record<string, AgentAdapterFactory>> = {
  claude: createClaudeRunner,
  codex: createCodexRunner,
  opencode: createOpencodeRunner,
  gemini: createGeminiRunner,
  command: createCommandRunner,
  scripted: createScriptedRunner,
};

/** The runner for a parsed spec; an agent without an adapter is a usage error. */
export function createAgentRunner(
  spec: AgentSpec,
  options: AgentRunnerOptions = {},
  adapters: Readonly<Record<string, AgentAdapterFactory>> = agentAdapters,
): AgentRunner {
  const factory = Object.hasOwn(adapters, spec.cli) ? adapters[spec.cli] : undefined;
  if (factory === undefined) {
    throw new UsageError(`No adapter for agent "${spec.cli}".`, {
      hint: `Known agents: ${Object.keys(adapters).join(', ')}.`,
    });
  }
  return factory(spec, options);
}

/** Parses a label or `--agent` value and builds its runner; unknown or malformed agents are usage errors. */
export function resolveAgentRunner(
  text: string,
  options: AgentRunnerOptions & ParseAgentSpecOptions = {},
  adapters?: Readonly<Record<string, AgentAdapterFactory>>,
): AgentRunner {
  const parsed = parseAgentSpec(text, options);
  if (!parsed.ok) throw new UsageError(`Agent ${JSON.stringify(text)}: ${parsed.reason}.`);
  return createAgentRunner(parsed.spec, options, adapters);
}
