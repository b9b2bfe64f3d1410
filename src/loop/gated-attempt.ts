// After a code-writing attempt succeeds: the bead's gates decide whether it really did.
import { runGates, type GateCommand, type GateOutcome, type GateProcess } from './gates.js';
import type { ExecutionResult, Executor } from './types.js';

/** Whether an executor's successes go through the gates: code writers, unless they opt out. */
export function executorRunsGates(executor: Pick<Executor, 'writesCode' | 'runsGates'>): boolean {
  return executor.runsGates ?? executor.writesCode;
}

export interface GatedAttempt {
  /** The attempt's result: the agent's own, or a failed attempt naming the red gate. */
  result: ExecutionResult;
  /** For the next attempt's prompt, when a gate failed. */
  feedback?: string;
  /** Time the gates took. */
  gateMs: number;
}

export interface GateCheckOptions {
  cwd: string;
  signal: AbortSignal;
  maxMs: number;
  onOutcome: (outcome: GateOutcome) => void;
}

/** Runs `gates` after an `ok` result; anything else, or no gates, passes through untouched. */
export async function checkGates(
  result: ExecutionResult,
  gates: readonly GateCommand[],
  port: GateProcess | undefined,
  options: GateCheckOptions,
): Promise<GatedAttempt> {
  if (result.outcome !== 'ok' || gates.length === 0 || port === undefined) return { result, gateMs: 0 };
  const verdict = await runGates(gates, port, options);
  const gateMs = verdict.outcomes.reduce((sum, outcome) => sum + outcome.duration_ms, 0);
  if (verdict.ok) return { result, gateMs };
  // The agent's own exit code would read as the gate's: the comment names the gate's instead.
  const { exitCode: _agentExit, closeReason: _unused, ...rest } = result;
  const failed: ExecutionResult = {
    ...rest,
    outcome: verdict.aborted === true ? 'aborted' : 'error',
    message: verdict.message,
    detail: verdict.report,
    ...(verdict.environment === true ? { environment: true } : {}),
  };
  return { result: failed, feedback: verdict.report, gateMs };
}

/** A bead whose gates: labels cannot be resolved: it fails without an agent, since retrying cannot help. */
export function gateLabelFailure(error: string): ExecutionResult {
  return { outcome: 'error', fatal: true, message: error };
}
