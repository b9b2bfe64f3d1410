// The real ports of `setupLoop` (git, the metric command, the clock, the loop's files), built one way
// for `forge-pack loop` and for a pipeline stage that creates its loop.
import type { SetupPorts } from '../autoresearch/setup.js';
import type { BeadStore } from '../beads/types.js';
import { createGit } from '../infra/git.js';
import { isProcessAlive } from '../infra/pid.js';
import { runWithOwnTemp } from './own-temp-process.js';
import type { CliDeps } from './deps.js';

export function loopSetupPorts(
  deps: Pick<CliDeps, 'env' | 'clock' | 'loopFiles' | 'host'>,
  repo: string,
  store: BeadStore,
): SetupPorts {
  return {
    store,
    git: createGit({ cwd: repo, env: deps.env }),
    files: deps.loopFiles,
    // The metric command is an argv array from the loop's config, never a shell line.
    runMetric: (argv, run) =>
      runWithOwnTemp(
        { file: argv[0] ?? '', args: argv.slice(1) },
        { cwd: run.cwd, env: deps.env, timeoutMs: run.timeoutMs, sweep: true, contain: true },
      ),
    now: () => deps.clock.now(),
    host: deps.host,
    isProcessAlive,
  };
}
