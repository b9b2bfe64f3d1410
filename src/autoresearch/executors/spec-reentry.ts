// Re-entry after a loop that serves a spec (its config names the slug): the retrospective records the
// loop's outcome in specs/<slug>/run-state.json, which puts the spec back at its readiness gate.
import { AppError } from '../../infra/errors.js';
import { readTerminalSignal } from '../signals.js';
import { recordLoopOutcome, runStateFile } from '../spec-state/file.js';
import type { AutoresearchContext } from './context.js';

/**
 * What happened to the spec's run state, as a sentence for the retrospective bead's close reason; null
 * when the loop serves no spec. A run state that cannot be updated is reported, never overwritten.
 */
export async function recordSpecReentry(
  context: AutoresearchContext,
  epicId: string,
): Promise<string | null> {
  const slug = context.config.spec;
  if (slug === undefined) return null;
  const file = runStateFile(slug);
  const terminal = await readTerminalSignal(context.files, context.workspace);
  if (terminal === undefined) return `${file} not updated: the loop has no terminal signal`;
  const outcome = {
    strategy: 'autoresearch' as const,
    epic: epicId,
    final_score: terminal.final_score,
    best_score: terminal.best_score,
    terminal_reason: terminal.reason,
    at: new Date(context.clock.now()).toISOString(),
  };
  try {
    const result = await recordLoopOutcome(
      context.stateRepo ?? context.repo,
      slug,
      outcome,
      `retrospective ${epicId}`,
    );
    return result.recorded
      ? `${file}: ${result.state.phase === 'readiness_gate' ? 'back at the readiness gate' : `outcome recorded; the spec stays in ${result.state.phase}`} (${terminal.reason})`
      : `${file} not updated: ${result.reason}`;
  } catch (error) {
    if (error instanceof AppError) return `${file} not updated: ${error.message}`;
    throw error;
  }
}
