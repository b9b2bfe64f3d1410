// What one run shares between its loop and its beads: options, ports, running tallies, and its events.
import type { LoopEvent, RunnerDeps, RunnerOptions, StopReason } from './types.js';
import { describeOverLimits, type OverLimit, type SizeLimits } from '../infra/size-limits.js';

/** How one bead ended, as the run loop needs to know it. */
export type BeadOutcome =
  | { kind: 'closed'; costUsd: number }
  | { kind: 'skipped'; message: string }
  | { kind: 'stop'; reason: StopReason; message: string; hint?: string; costUsd: number };

/** Why a run ends, before its summary is taken (a parallel run first lets its beads in flight finish). */
export interface RunEnd {
  reason: StopReason;
  message: string;
  beadId?: string | undefined;
  hint?: string | undefined;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event as code writes it: the context stamps the time. */
export type UnstampedEvent = DistributiveOmit<LoopEvent, 'ts'>;

export class RunContext {
  readonly startedAt: number;
  beadsClosed = 0;
  costUsd = 0;
  gateMs = 0;
  /** For the live line: beads of the epic seen so far, and those already closed when the run started. */
  readonly known = new Set<string>();
  closedAtStart = 0;
  /** Beads a dead runner left in progress, reopened by this run (a parallel run checks they did not land). */
  readonly recovered = new Set<string>();
  /**
   * The run ids of the dead runner whose lock this run took over and of the runs it had taken on in
   * turn (its lock's `recovered`), when it left one: whose results may have landed.
   */
  recoveredFrom: readonly string[] | undefined;
  /**
   * Told just before a bead's close is asked of the store, once its agent, gates and commit are done:
   * the runner may start a read beside the close that only the close itself can outdate.
   */
  beforeClose: ((beadId: string) => void) | undefined;

  constructor(
    readonly o: RunnerOptions,
    readonly d: RunnerDeps,
  ) {
    this.startedAt = d.clock.now();
  }

  /** Beads done out of those known, for the live line; the bead under way always counts as one more. */
  progress(): { done: number; total: number } {
    const done = this.closedAtStart + this.beadsClosed;
    return { done, total: Math.max(this.known.size, done + 1) };
  }

  wallClockLeft(): number {
    if (this.o.wallClockMs <= 0) return Number.POSITIVE_INFINITY;
    return this.startedAt + this.o.wallClockMs - this.d.clock.now();
  }

  warn(message: string, bead?: string): void {
    this.emit({ type: 'warning', epic: this.o.epicId, message, bead });
  }

  emit(event: UnstampedEvent): void {
    this.d.emit({ ...event, ts: this.iso(this.d.clock.now()) });
  }

  iso(ms: number): string {
    return new Date(ms).toISOString();
  }
}

/** A few paths by name, the rest counted: messages stay one readable line. */
export function namePaths(paths: readonly string[], limit = 5): string {
  const named = paths.slice(0, limit).join(', ');
  return paths.length > limit ? `${named} and ${paths.length - limit} more` : named;
}

/** The warning for files a bead left past the commit size limits; `kept`: still in the user's tree. */
export function tooLargeWarning(
  beadId: string,
  over: readonly OverLimit[],
  limits: SizeLimits,
  kept: boolean,
): string {
  const one = over.length === 1;
  const settings =
    over[0]?.limit === 'files' ? 'runner.max_change_files' : 'runner.max_file_bytes, runner.max_change_bytes';
  const left = kept
    ? `left as ${one ? 'it is' : 'they are'}; commit, ignore or remove ${one ? 'it' : 'them'} yourself`
    : `gone with the attempt's worktree`;
  return `${describeOverLimits(over, limits)}: ${beadId} left ${one ? 'it' : 'them'} past the commit size limits (${settings} in .forge/config.json): not committed, ${left}.`;
}
