// The real ports of `setupLoop` (git, the metric command, the clock, the loop's files), built one way
// for `forge-pack loop` and for a pipeline stage that creates its loop.
import type { SetupPorts } from '../autoresearch/setup.js';
import type { BeadStore } from '../beads/types.js';
import { describeOutsideChange, removePlanted } from '../autoresearch/executors/watched-runs.js';
import { createOutsideWatch } from '../autoresearch/outside-watch.js';
import { describeTreeChange, restoreTree, snapshotTree } from '../autoresearch/tree-snapshot.js';
import { UsageError } from '../infra/errors.js';
import { createGit } from '../infra/git.js';
import { isProcessAlive } from '../infra/pid.js';
import { inStubbedCheckout } from '../infra/stubbed-checkout.js';
import { startExitWatch, type ExitRecord } from '../infra/exit-watch.js';
import type { ReadLog } from '../infra/read-log.js';
import type { ProcessResult } from '../infra/process.js';
import { runWithOwnTemp } from './own-temp-process.js';
import type { CliDeps } from './deps.js';

export function loopSetupPorts(
  deps: Pick<CliDeps, 'env' | 'clock' | 'loopFiles' | 'host'>,
  repo: string,
  store: BeadStore,
): SetupPorts {
  const git = createGit({ cwd: repo, env: deps.env });
  const watchOutside = createOutsideWatch({ git, trees: [repo], env: deps.env });
  return {
    store,
    git,
    files: deps.loopFiles,
    env: deps.env,
    // The metric command is an argv array from the loop's config, never a shell line.
    async runMetric(argv, run) {
      // In the loop, a metric, guard or track run that changes the tree is no score (watched-runs.ts);
      // one that does so on the baseline would make every iteration a crash, so it is refused here.
      const before = await snapshotTree(git, []);
      const outside = await watchOutside();
      const exits = run.watchExits === undefined ? undefined : await startExitWatch();
      let result: ProcessResult;
      let logged: ExitRecord[] | undefined;
      let reads: ReadLog | undefined;
      try {
        result = await runWithOwnTemp(
          { file: argv[0] ?? '', args: argv.slice(1) },
          {
            cwd: run.cwd,
            // The trees too, so that the baseline's Python runs load the read watch as the loop's will
            // (it costs each a few ms at its start, which a timed metric must see on both sides).
            env:
              exits === undefined
                ? deps.env
                : exits.env(deps.env, run.watchExits?.entries, [repo], run.watchExits?.keys),
            timeoutMs: run.timeoutMs,
            sweep: true,
            contain: true,
          },
        );
        logged = await exits?.read();
        reads = await exits?.reads();
      } finally {
        await exits?.remove();
      }
      const change = await restoreTree(git, before, ['.autoresearch', '.forge', '.beads'], {
        leaveNewFiles: true,
      });
      const outsideChange = await outside();
      const planted = await removePlanted(repo, change.left ?? []);
      const changed = [
        describeTreeChange(change),
        ...(planted.length === 0 ? [] : [`made ${planted.join(', ')}`]),
        ...describeOutsideChange(outsideChange),
      ]
        .filter((part) => part !== undefined)
        .join(', ');
      if (changed !== '') {
        throw new UsageError(
          `\`${argv.join(' ')}\` ${changed} while it measured the untouched tree (put back).`,
          {
            hint: "A loop never scores a run that changes what it measures: have the command leave tracked files, git's config and tools' settings as they are, and make no test file (write what it makes to an ignored path). Nothing was created.",
          },
        );
      }
      return {
        ...result,
        ...(logged === undefined ? {} : { exits: logged }),
        ...(reads === undefined ? {} : { reads }),
      };
    },
    checkout: (texts, run) => inStubbedCheckout(repo, git, texts, run),
    now: () => deps.clock.now(),
    host: deps.host,
    isProcessAlive,
  };
}
