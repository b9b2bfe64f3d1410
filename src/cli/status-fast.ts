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
  let out: string;
  try {
    out = await statusOutput(parsed, process.cwd());
  } catch {
    // The full program runs it again and reports the error as it always has.
    return false;
  }
  try {
    writeWholeToFd(1, out);
    process.exitCode = 0;
  } catch (error) {
    // A full disk or a device that refuses writes: said in one line, not a stack trace.
    const reason = error instanceof Error ? error.message : String(error);
    writeWholeToFd(2, `ralph-loop: could not write the status to stdout: ${reason}\n`);
    process.exitCode = 1;
  }
  return true;
}

/** What `status` prints for `parsed` in `cwd`; throws what the status throws. */
async function statusOutput(parsed: StatusArgs, cwd: string): Promise<string> {
  const out: string[] = [];
  const stdout: TextSink = {
    write: (text: string) => {
      out.push(text);
    },
  };
  await runStatus(
    {
      cwd,
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
  return out.join('');
}

/**
 * The build's warm-up (src/cli/status-warm-up.ts): what `ralph-loop <args>` prints in `cwd` through this
 * path, without printing it. Throws when the path does not take `args` or the status fails.
 */
export async function statusForWarmUp(args: readonly string[], cwd: string): Promise<string> {
  const parsed = parseStatusArgs(args);
  if (parsed === undefined) throw new Error(`the short status path does not take: ${args.join(' ')}`);
  return statusOutput(parsed, cwd);
}
