// The short status path once its arguments are known (status-shortcut.ts parses them). The build makes
// this module and what a status reads into one file of its own (dist/bundle/status-fast.cjs): Node's
// loader pays for each file, and a plain epic's status came from ~50 of them. What brings a package
// (zod: a loop's config, a pipeline's record, br's store) stays in the split build, loaded from there
// only by the status that needs it (scripts/build.mjs). Those modules' error classes are the split
// build's copies, which `instanceof` here does not know: such an error falls through to the full
// program, which prints what it always printed.
import { hostname } from 'node:os';
import { systemClock } from '../infra/clock.js';
import { diskLoopFiles } from '../infra/loop-files.js';
import type { TextSink } from '../infra/text-sink.js';
import { writeWholeToFd } from './closed-pipe.js';
import { parseStatusArgs, type StatusArgs } from './status-shortcut.js';
import { runStatus } from './status-run.js';
import { lazyStoreFactories } from './store-factories.js';

/**
 * Runs `argv` (process.argv) through the short path when it can; false when the full program must run
 * it (nothing was written then). Sets the exit code when it ran. bin/run-built.js calls it.
 */
export async function runStatusShortcut(argv: readonly string[]): Promise<boolean> {
  const parsed = parseStatusArgs(argv.slice(2));
  return parsed === undefined ? false : runParsedStatus(parsed);
}

/** Runs status and prints it; false (nothing printed) when it failed, for the full program to report. */
export async function runParsedStatus(parsed: StatusArgs): Promise<boolean> {
  const out: string[] = [];
  const stdout: TextSink = {
    write: (text: string) => {
      out.push(text);
    },
  };
  try {
    await runStatus(
      {
        cwd: process.cwd(),
        env: process.env,
        stdout,
        clock: systemClock,
        host: hostname(),
        loopFiles: diskLoopFiles(),
        storeFactories: lazyStoreFactories(),
      },
      parsed.options,
      parsed.epicId,
      parsed.flags,
    );
  } catch {
    // The full program runs it again and reports the error as it always has.
    return false;
  }
  try {
    writeWholeToFd(1, out.join(''));
    process.exitCode = 0;
  } catch (error) {
    // A full disk or a device that refuses writes: said in one line, not a stack trace.
    const reason = error instanceof Error ? error.message : String(error);
    writeWholeToFd(2, `ralph-loop: could not write the status to stdout: ${reason}\n`);
    process.exitCode = 1;
  }
  return true;
}
