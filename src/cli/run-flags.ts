// The run options of ralph-loop (and of once, resume and a pipeline's stages), as commander gives them.
export interface RunFlags {
  agent?: string;
  /** `--agents role=spec`: per role, over labels and the config. */
  agents?: Record<string, string>;
  timeout?: number;
  wallClock?: number;
  maxBeads?: number;
  maxAttempts?: number;
  backoff?: number;
  autoCommit?: boolean;
  /** With --auto-commit: start on a dirty tree; the paths dirty then are never committed. */
  allowDirty?: boolean;
  dryRun?: boolean;
  worktree?: boolean;
  /** `--parallel <n>`: plain agent beads in flight at once (over runner.parallel; default 1). */
  parallel?: number;
  /** `--executor local|queue`: where attempts run (queue: forge-pack workers through --redis). */
  executor?: string;
  redis?: string;
  /** `--remote <url>`: the git remote queue workers fetch from and push to (default: origin). */
  remote?: string;
  /** A loop's HEAD was moved on purpose: take it as the loop's own. */
  acceptHead?: boolean;
  /** `--gates`/`--no-gates`: run the configured gates after code-writing beads (over runner.run_gates). */
  gates?: boolean;
  /** `--no-validate`: skip the epic's checks before the run. */
  validate?: boolean;
  /** `--report`/`--no-report`: write report.html at the run's end (default: for loops only). */
  report?: boolean;
}
