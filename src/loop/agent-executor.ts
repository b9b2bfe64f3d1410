// Runs a bead through an agent CLI: the bead's text becomes the prompt, the agent's result an outcome.
import type { AgentMode, AgentResult, AgentRunner } from '../agents/types.js';
import { join } from 'node:path';
import type { Bead } from '../beads/types.js';
import { homeAgentConfig, readContents, restoreChanged } from '../infra/home-instructions.js';
import { findRepoRoot, projectOfGitDir } from '../infra/repo-root.js';
import type { ExecutionRequest, ExecutionResult, Executor } from './types.js';

/**
 * Builds an agent runner from a spec; throws a clear error for an unknown agent. `commands`: the
 * user's own agents by name (from their config), which labels may name.
 */
export type AgentFactory = (
  spec: string,
  options: { fromLabel: boolean; commands?: Readonly<Record<string, readonly string[]>> },
) => AgentRunner | Promise<AgentRunner>;

export interface AgentExecutorOptions {
  kind: string;
  mode: AgentMode;
  agents: AgentFactory;
  env: Readonly<Record<string, string | undefined>>;
  /** Adds to the prompt (e.g. a judge's answer format); the bead's own text always comes first. */
  promptSuffix?: (bead: Bead) => string;
  /** The machine's config directory whose agent CLI files are guarded too (/etc; a test's own). */
  etc?: string;
}

export function createAgentExecutor(options: AgentExecutorOptions): Executor {
  return {
    kind: options.kind,
    writesCode: options.mode === 'full',
    async execute(request) {
      let runner: AgentRunner;
      try {
        runner = await options.agents(request.agentSpec, { fromLabel: request.agentFromLabel });
      } catch (error) {
        return { outcome: 'error', fatal: true, message: (error as Error).message, agent: request.agentSpec };
      }
      // What the user's CLIs load on every run is not the agent's to change: put back after it.
      const instructions = await readContents(homeAgentConfig(options.env, options.etc));
      const result = await runner.run({
        prompt: beadPrompt(request, options.promptSuffix),
        cwd: request.cwd,
        env: {
          ...options.env,
          FORGE_EPIC: request.epicId,
          FORGE_BEAD: request.bead.id,
          FORGE_ROLE: request.role,
          ...storeEnv(request.cwd),
        },
        mode: options.mode,
        timeoutMs: request.timeoutMs,
        maxBudgetUsd: request.budgetUsd,
        signal: request.signal,
        transcriptPath: request.transcriptPath,
        transcriptRoot: request.transcriptRoot,
        bead: { id: request.bead.id, title: request.bead.title, labels: request.bead.labels },
        attempt: request.attempt,
        onSpawn: request.onSpawn,
        onActivity: (event) => {
          if (event.type === 'retry') {
            request.onActivity?.(
              `agent retrying an API call${event.status ? ` (HTTP ${event.status})` : ''}`,
            );
          } else if (event.type === 'rate_limit' && event.status === 'rejected') {
            request.onActivity?.('rate limit reached');
          } else if (event.type === 'stopping') {
            request.onActivity?.(`stopping the agent: ${event.reason}`);
          }
        },
      });
      const restored = await restoreChanged(instructions);
      const executed = toExecutionResult(result);
      return restored.length === 0 ? executed : { ...executed, tampered: restored };
    },
  };
}

/**
 * In a worktree Forge made inside git's own directory, `br` is pointed at the repository's store:
 * an agent's own bead commands (a bead it files, a comment) reach the one bead graph.
 */
function storeEnv(cwd: string): Record<string, string> {
  return projectOfGitDir(cwd) === undefined ? {} : { BEADS_DIR: join(findRepoRoot(cwd), '.beads') };
}

/**
 * The prompt: the bead's title and description (its whole context), what the last attempt left red
 * (a failed gate's output) when there is something, then where it sits.
 */
export function beadPrompt(
  request: Pick<ExecutionRequest, 'bead' | 'epicId' | 'feedback'>,
  suffix?: (bead: Bead) => string,
): string {
  const { bead } = request;
  const description = bead.description?.trim() ?? '';
  // A description that opens with its own heading (every stamped template does) needs no second one.
  const parts = /^#\s/.test(description)
    ? [description]
    : [`# ${bead.title}`, '', description || '(This bead has no description beyond its title.)'];
  const extra = suffix?.(bead);
  if (extra !== undefined && extra !== '') parts.push('', extra);
  if (request.feedback !== undefined && request.feedback.trim() !== '') {
    parts.push(
      '',
      '## The previous attempt did not pass the gates',
      '',
      'Your last attempt finished, but a check the runner runs after it failed. Fix what it reports, then finish:',
      '',
      request.feedback.trim(),
    );
  }
  parts.push(
    '',
    '---',
    `Bead ${bead.id} of epic ${request.epicId}. Do the work it describes, then finish; the runner closes the bead.`,
  );
  return `${parts.join('\n')}\n`;
}

export function toExecutionResult(result: AgentResult): ExecutionResult {
  return {
    outcome: result.outcome,
    message: result.message,
    finalText: result.finalText,
    ...(result.readOnly !== undefined && result.readOnly.attempts.length > 0
      ? { writeAttempts: result.readOnly.attempts }
      : {}),
    agent: result.agent,
    model: result.model,
    scripted: result.scripted,
    ...(result.exitCode === null ? {} : { exitCode: result.exitCode }),
    inputTokens: result.usage.inputTokens + result.usage.cacheReadTokens + result.usage.cacheWriteTokens,
    outputTokens: result.usage.outputTokens,
    costUsd: result.costUsd,
    resetAt: result.resetAt,
    ...(result.fatal === true ? { fatal: true } : {}),
    ...(result.environment === true ? { environment: true } : {}),
  };
}
