// The exit watch on the baseline's runs. Every run of the loop's is under it (watched-runs.ts), and a
// run whose test process the doer's code ends gives no score; where code in the scope already ends one
// at the baseline (a module the tests import that exits as it loads), every change would be refused
// for what the tree did before the doer touched it. Setup says so instead, with the call and the line.
// The same for the read watches (outside-reads.ts): code of the scope that already reads in git's,
// Forge's or br's folder would make every iteration tamper.
import { join } from 'node:path';
import type { ExitRecord } from '../infra/exit-watch.js';
import type { ReadLog } from '../infra/read-log.js';
import { AppError, ExitCode } from '../infra/errors.js';
import { realPath } from '../infra/fs-ops.js';
import type { ProcessResult } from '../infra/process.js';
import type { LoopConfig } from './config.js';
import { doerEndings } from './exit-endings.js';
import { doerReads, isMetricKeyRead } from './outside-reads.js';
import { metricKeyFolders } from './metric-folders.js';
import { commandFiles } from './metric-files.js';

export type WatchedRun = (
  argv: readonly string[],
  options: {
    cwd: string;
    timeoutMs: number;
    /** `entries`: the commands' scripts, real paths; `keys`: the metric's own folders (python-watch.ts). */
    watchExits?: { entries: readonly string[]; keys: readonly string[] };
  },
) => Promise<ProcessResult & { exits?: readonly ExitRecord[]; reads?: ReadLog }>;

export interface BaselineExits {
  /** `run` under the exit watch (unless the loop lets the doer end what it likes), its endings kept. */
  run(argv: readonly string[], options: { cwd: string; timeoutMs: number }): Promise<ProcessResult>;
  /** Throws when code in the scope ended a process that decides a check during the runs so far. */
  check(): void;
}

export function watchBaselineExits(config: LoopConfig, repo: string, run: WatchedRun): BaselineExits {
  const watched = !config.scope.doer_may_patch_runtime;
  const found: { argv: readonly string[]; phrase: string; read: 'outside' | 'key' | false }[] = [];
  return {
    async run(argv, options) {
      const realRepo = await realPath(repo).catch(() => repo);
      const named = await commandFiles(config, repo);
      // As the loop's runs will be: the same preload, the same scripts' processes freezing node:assert.
      const keys = metricKeyFolders(config.scope.doer_paths, named).map((path) => join(realRepo, path));
      const watchExits = watched ? { entries: named.map((path) => join(realRepo, path)), keys } : undefined;
      const { exits, reads, ...result } = await run(argv, {
        ...options,
        ...(watchExits ? { watchExits } : {}),
      });
      const rules = {
        roots: [repo, realRepo],
        scope: config.scope.doer_paths,
        commandFiles: named,
        // The metric's runs, as the loop will judge them (watched-runs.ts).
        asks: config.metric.type === 'hard' && sameArgv(argv, config.metric.argv),
      };
      if (watched && exits !== undefined && exits.length > 0) {
        for (const phrase of doerEndings(exits, rules)) found.push({ argv, phrase, read: false });
      }
      // No start yet: only git's, Forge's and br's folders count, as they will in the loop.
      if (watched && reads !== undefined) {
        for (const phrase of doerReads(reads, rules).phrases)
          found.push({ argv, phrase, read: isMetricKeyRead(phrase) ? 'key' : 'outside' });
      }
      return result;
    },
    check() {
      const first = found[0];
      if (first === undefined) return;
      if (first.read === 'key') {
        throw new AppError(
          `At the baseline, code in the doer's scope already ${first.phrase} while \`${first.argv.join(' ')}\` ran: in the loop the doer's code reading what the metric compares it with is tamper, so every change would be refused for it.`,
          {
            exitCode: ExitCode.usage,
            hint: "Have the metric hand that code what it reads (an argument, its command line), move the file out of the metric's folder, keep the code out of --scope, or pass --doer-may-patch-runtime to lift the watch; nothing was created.",
          },
        );
      }
      if (first.read === 'outside') {
        throw new AppError(
          `At the baseline, code in the doer's scope already ${first.phrase} while \`${first.argv.join(' ')}\` ran: in the loop a read of what no commit holds, or of what tells the code who runs it, is tamper, so every change would be refused for it.`,
          {
            exitCode: ExitCode.usage,
            hint: "Have that code read what the repository holds (not git's, Forge's or br's folder, nor its process's command line, in sys.argv, process.argv or /proc, nor what its process has spent so far, its memory or CPU time, which a test runner's imports add to; sys's output, modules and path are read as `sys.stdout`, not through another name), keep it out of --scope, or pass --doer-may-patch-runtime to lift the watch; nothing was created.",
          },
        );
      }
      throw new AppError(
        `At the baseline, code in the doer's scope already ${first.phrase} while \`${first.argv.join(' ')}\` ran: in the loop that gives no score, so every change would be refused for it.`,
        {
          exitCode: ExitCode.usage,
          hint: "Fix that code (a module the tests import should not end their process), keep it out of --scope, or pass --doer-may-patch-runtime if the doer's code may end the checks' processes; nothing was created.",
        },
      );
    },
  };
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, index) => word === b[index]);
}
