// Hooks: the user's own commands (argv from .forge/config.json) run when a run ends, needs a human or
// fails, so a person is told wherever they are. Bounded in time; a hook that fails never stops Forge.
import { runProcess, type ProcessResult } from '../infra/process.js';
import type { RunSummary, StopReason } from '../loop/types.js';

export interface HooksConfig {
  on_end?: readonly string[] | undefined;
  on_needs_human?: readonly string[] | undefined;
  on_failure?: readonly string[] | undefined;
  timeout_seconds?: number | undefined;
}

export type HookEvent = 'end' | 'needs_human' | 'failure';

const FAILURES: ReadonlySet<StopReason> = new Set(['failed', 'auth', 'stalled', 'refused', 'environment']);

/** Which hooks a run's end calls: `on_end` always, and the one for how it ended. */
export function hooksFor(reason: StopReason): HookEvent[] {
  if (reason === 'dry_run') return [];
  const events: HookEvent[] = [];
  if (reason === 'needs_human') events.push('needs_human');
  if (FAILURES.has(reason)) events.push('failure');
  events.push('end');
  return events;
}

export interface HookRun {
  event: HookEvent;
  argv: readonly string[];
  ok: boolean;
  /** One sentence for a warning when it did not succeed. */
  problem?: string | undefined;
}

export interface RunHooksOptions {
  hooks: HooksConfig | undefined;
  summary: RunSummary;
  epicId: string;
  runId: string;
  exitCode: number;
  cwd: string;
  env: NodeJS.ProcessEnv;
  run?: typeof runProcess;
}

/** Runs the hooks for a run's end, one after another, each within its timeout (default 30 s). */
export async function runHooks(options: RunHooksOptions): Promise<HookRun[]> {
  const { hooks, summary } = options;
  if (hooks === undefined) return [];
  const run = options.run ?? runProcess;
  const timeoutMs = (hooks.timeout_seconds ?? 30) * 1000;
  const results: HookRun[] = [];
  for (const event of hooksFor(summary.reason)) {
    const argv = hooks[`on_${event}`];
    if (argv === undefined || argv.length === 0) continue;
    const [file, ...args] = argv as [string, ...string[]];
    const env = {
      ...options.env,
      FORGE_HOOK: event,
      FORGE_EPIC: options.epicId,
      FORGE_RUN_ID: options.runId,
      FORGE_REASON: summary.reason,
      FORGE_EXIT_CODE: String(options.exitCode),
      FORGE_MESSAGE: summary.message,
      FORGE_BEADS_RUN: String(summary.beadsRun),
      FORGE_BEADS_CLOSED: String(summary.beadsClosed),
      FORGE_COST_USD: summary.costUsd.toFixed(4),
      ...(summary.beadId === undefined ? {} : { FORGE_BEAD: summary.beadId }),
    };
    // What a hook leaves running (a daemon holding its output) must not hold the run's exit past the
    // hook's timeout (fault injection: a setsid child kept ralph-loop alive for as long as it lived).
    const result = await run(
      { file, args },
      { cwd: options.cwd, env, timeoutMs, sweep: true, contain: true },
    );
    const problem = hookProblem(result, timeoutMs);
    results.push({ event, argv, ok: problem === undefined, problem });
  }
  return results;
}

function hookProblem(result: ProcessResult, timeoutMs: number): string | undefined {
  if (result.spawnError !== undefined) return `could not start: ${result.spawnError}`;
  if (result.timedOut) return `stopped after ${Math.round(timeoutMs / 1000)} s`;
  if (result.exitCode !== 0) {
    const tail = result.stderr.trim().split('\n').at(-1) ?? '';
    return `exited ${String(result.exitCode ?? result.signal)}${tail === '' ? '' : `: ${tail}`}`;
  }
  return undefined;
}
