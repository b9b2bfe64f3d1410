// The executor registry a real run uses: roles to agents (full or read-only) and built-in executors.
import { createAgentExecutor, type AgentFactory } from '../loop/agent-executor.js';
import type { Executor, ExecutorRegistry } from '../loop/types.js';

export interface AgentExecutors {
  full: Executor;
  readOnly: Executor;
}

/** Roles whose agents only look: they run read-only. */
export const READ_ONLY_ROLES: readonly string[] = ['judge'];

export function createAgentExecutors(
  agents: AgentFactory,
  env: Readonly<Record<string, string | undefined>>,
): AgentExecutors {
  return {
    full: createAgentExecutor({ kind: 'agent', mode: 'full', agents, env }),
    readOnly: createAgentExecutor({ kind: 'read-only agent', mode: 'read-only', agents, env }),
  };
}

/** Built-in executors win (the arbiter, the judges of a loop); other roles get an agent. */
export function createExecutorRegistry(
  agents: AgentExecutors,
  builtins: Readonly<Record<string, Executor>> = {},
): ExecutorRegistry {
  return {
    resolve(role) {
      const builtin = Object.hasOwn(builtins, role) ? builtins[role] : undefined;
      if (builtin !== undefined) return builtin;
      return READ_ONLY_ROLES.includes(role) ? agents.readOnly : agents.full;
    },
  };
}
