// The integration branch of a `--parallel` run (the branch checked out in the run's cwd): attempt
// commits are applied on it one at a time, undone when their gates are red, and found again by bead.

export type ApplyOutcome = { ok: true; sha: string } | { ok: false; conflict: string };

export interface Integration {
  /** The integration branch's head. */
  head(): Promise<string>;
  /** Applies an attempt commit on top of the head as one new commit; a conflict leaves the tree as it was. */
  apply(commit: string): Promise<ApplyOutcome>;
  /** Puts branch, index and tracked files back at `commit` (an applied result whose gates are red). */
  undo(commit: string): Promise<void>;
  /** The parent of `commit`. */
  parentOf(commit: string): Promise<string>;
  /**
   * The newest commit of the integration branch that carries `bead`'s trailer from an attempt of one of
   * the runs `runIds`, if any: a result of the bead's earlier life (closed, then reopened) is not this one.
   */
  landed(beadId: string, runIds: readonly string[]): Promise<string | undefined>;
}
