// The exit watch (with its read watches) as a test of it starts one: in a temp folder of its own,
// removed when the test ends, and its read log as the records it holds.
import { onTestFinished } from 'vitest';
import { startExitWatch, type ExitWatch } from '../../src/infra/exit-watch.js';
import type { ReadRecord } from '../../src/infra/read-log.js';
import { tempTree } from './temp-tree.js';

export async function startedWatch(prefix: string): Promise<ExitWatch> {
  const started = await startExitWatch(await tempTree({}, prefix));
  if (started === undefined) throw new Error('no watch');
  onTestFinished(() => started.remove());
  return started;
}

/** The read log's records; it must still be there, and read to its end. */
export async function loggedReads(exits: ExitWatch): Promise<ReadRecord[]> {
  const log = await exits.reads();
  if (log === undefined) throw new Error('the read log is gone');
  if (!log.complete) throw new Error('the read log was not read to its end');
  return log.records;
}

/**
 * The records of paths (loggedReads without those of what the process itself says: a program's read
 * of its own command line, logged with no path and judged apart).
 */
export async function loggedPaths(exits: ExitWatch): Promise<ReadRecord[]> {
  return (await loggedReads(exits)).filter((record) => record.path !== '');
}
