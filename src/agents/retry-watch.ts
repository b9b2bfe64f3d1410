// Counts the retries a CLI makes by itself after an API error, so Forge can take over after a few.
import type { AgentProcessResult } from './agent-process.js';
import { apiErrorKind } from './limits.js';

export type RetryKind = 'auth' | 'rate_limited' | 'overloaded';

/**
 * opencode and Gemini CLI retry 429 and 5xx answers on their own, for minutes, telling only their log.
 * A couple of quiet retries ride out a blip (a Forge retry starts the bead over); past that the run is
 * stopped, and the runner waits visibly instead.
 */
export class RetryWatch {
  count = 0;
  last: { kind: RetryKind; text: string } | undefined;

  constructor(private readonly quietRetries: number) {}

  /** Takes the text of one failed attempt; says whether the run should be stopped now. */
  failed(text: string): RetryKind | undefined {
    const kind = apiErrorKind(text);
    if (kind === undefined) return undefined;
    this.count += 1;
    this.last = { kind, text };
    if (kind === 'auth') return 'auth';
    return this.count > this.quietRetries ? kind : undefined;
  }
}

/** Whether Forge took over from the CLI's own retries, or its timeout cut them short. */
export function retriesEnd(child: AgentProcessResult, retries: RetryWatch): string {
  if (child.timedOut) return `it was still retrying when its timeout stopped it`;
  if (child.stoppedFor !== undefined) return `Forge stopped it after ${retries.count} failed attempts`;
  return `it gave up after ${retries.count} failed attempts`;
}
