// Builds agent runners for the loop: user-given specs may be commands, bead labels never.
import { resolveAgentRunner } from '../agents/index.js';
import type { AgentFactory } from '../loop/agent-executor.js';

export function createAgentFactory(): AgentFactory {
  return (spec, { fromLabel }) => resolveAgentRunner(spec, { allowCommand: !fromLabel });
}
