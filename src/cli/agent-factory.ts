// Builds agent runners for the loop: user-given specs may be commands, bead labels only names.
import type { AgentFactory } from '../loop/agent-executor.js';

/** The adapters load on first use, so commands that run no agent never pay for them. */
export function createAgentFactory(): AgentFactory {
  return async (spec, { fromLabel, commands }) => {
    const { resolveAgentRunner } = await import('../agents/index.js');
    return resolveAgentRunner(spec, {
      allowCommand: !fromLabel,
      commands,
    });
  };
}
