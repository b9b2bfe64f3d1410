// The run options of ralph-loop (and of once, resume and a pipeline's stages), as commander gives them,
// and the combinations of them a run refuses.
import { AppError, EnvironmentError, ExitCode } from '../infra/errors.js';

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

/** `--parallel` results are commits on the branch: it needs git, a tree of yours that is clean, and a run. */
export function refuseParallelMisuse(parallel: number, flags: RunFlags, repo: string, inGit: boolean): void {
  if (parallel <= 1) return;
  if (flags.autoCommit === false) {
    throw new AppError(
      '--parallel and --no-auto-commit do not go together: a parallel bead lands as a commit.',
      {
        exitCode: ExitCode.usage,
        hint: 'Drop --no-auto-commit, or run with --parallel 1.',
      },
    );
  }
  if (flags.allowDirty === true) {
    throw new AppError(
      '--parallel and --allow-dirty do not go together: results are cherry-picked onto your branch, and a failed one is undone with a reset, which needs a tree without changes of your own.',
      { exitCode: ExitCode.usage, hint: 'Commit or stash your changes, then run with --parallel.' },
    );
  }
  if (!inGit && flags.dryRun !== true) {
    throw new EnvironmentError(`--parallel needs a git repository, and ${repo} is not one.`, {
      hint: 'Run it in your project (or pass -C <dir>), or drop --parallel.',
    });
  }
}
