// The executor registry a real run uses: roles to agents (full or read-only) and built-in executors.
import { createAgentExecutor, type AgentFactory } from '../loop/agent-executor.js';
import type { Executor, ExecutorRegistry } from '../loop/types.js';

export interface ExecutorContext {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  agents: AgentFactory;
  /** Built-in executors by role, added by layers above the runner (the arbiter, the command judge). */
  builtins?: Readonly<Record<string, Executor>>;
}

/** Roles whose agents only look: they run read-only. */
export const READ_ONLY_ROLES: readonly string[] = ['judge'];

export function createExecutorRegistry(context: ExecutorContext): ExecutorRegistry {
  const full = createAgentExecutor({ kind: 'agent', mode: 'full', agents: context.agents, env: context.env });
  const readOnly = createAgentExecutor({
    kind: 'read-only agent',
    mode: 'read-only',
    agents: context.agents,
    env: context.env,
  });
  return {
    resolve(role) {
      const builtin = context.builtins?.[role];
      if (builtin !== undefined) return builtin;
      return READ_ONLY_ROLES.includes(role) ? readOnly : full;
    },
  };
}
