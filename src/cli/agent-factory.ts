// Builds agent runners for the loop: user-given specs may be commands, bead labels only names.
import type { AgentRunnerOptions, ParseAgentSpecOptions } from '../agents/index.js';
import type { AgentAdapterFactory } from '../agents/registry.js';
import type { AgentFactory } from '../loop/agent-executor.js';

/**
 * Each adapter's module, loaded when a spec names it: a run of one agent (a user's command, say) loads
 * neither the other adapters nor their stream schemas. The same factories as `agentAdapters`
 * (test/cli/agent-factory.test.ts holds them equal); a name missing here goes through the registry.
 */
export const LAZY_ADAPTERS: Readonly<Record<string, () => Promise<AgentAdapterFactory>>> = {
  claude: async () => (await import('../agents/claude.js')).createClaudeRunner,
  codex: async () => (await import('../agents/codex.js')).createCodexRunner,
  opencode: async () => (await import('../agents/opencode.js')).createOpencodeRunner,
  gemini: async () => (await import('../agents/gemini.js')).createGeminiRunner,
  command: async () => (await import('../agents/command.js')).createCommandRunner,
  scripted: async () => (await import('../agents/scripted.js')).createScriptedRunner,
};

/** `spec` parsed, with the loader of its adapter's module when LAZY_ADAPTERS has one. */
async function parseWithLoader(spec: string, options: ParseAgentSpecOptions) {
  const { parseAgentSpec } = await import('../agents/spec.js');
  const parsed = parseAgentSpec(spec, options);
  const load =
    parsed.ok && Object.hasOwn(LAZY_ADAPTERS, parsed.spec.cli) ? LAZY_ADAPTERS[parsed.spec.cli] : undefined;
  return { parsed, load };
}

/**
 * Starts loading what `spec` runs through (its adapter, the process module), so a run's first agent
 * does not wait for it. Nothing is made and nothing is reported: a spec that does not parse, or a
 * module that fails, fails again where the bead's agent is made, and is reported there.
 */
export function preloadAgent(spec: string, commands?: Readonly<Record<string, readonly string[]>>): void {
  const loading = parseWithLoader(spec, { allowCommand: true, commands }).then(({ load }) => load?.());
  loading.catch(() => undefined);
}

/** The adapters load on first use, so commands that run no agent never pay for them. */
export function createAgentFactory(): AgentFactory {
  return async (spec, { fromLabel, commands }) => {
    const options: AgentRunnerOptions & ParseAgentSpecOptions = { allowCommand: !fromLabel, commands };
    const { parsed, load } = await parseWithLoader(spec, options);
    if (!parsed.ok || load === undefined) {
      // Errors (and any adapter not listed above) as the registry words them.
      const { resolveAgentRunner } = await import('../agents/index.js');
      return resolveAgentRunner(spec, options);
    }
    return (await load())(parsed.spec, options);
  };
}
