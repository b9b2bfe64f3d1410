// The agents layer's public surface: the contract, spec parsing and the adapter registry.
export type * from './types.js';
export { parseAgentSpec } from './spec.js';
export type { ParseAgentSpecOptions, ParseAgentSpecResult } from './spec.js';
export { agentAdapters, createAgentRunner, resolveAgentRunner } from './registry.js';
export type { AgentAdapterFactory } from './registry.js';
export { SCRIPTED_AGENT_ENV } from './scripted.js';
export { isUsageLimitText, parseResetTime } from './limits.js';
