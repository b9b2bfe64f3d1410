// Counts the retries a CLI makes by itself after an API error, so Forge can take over after a few.
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
