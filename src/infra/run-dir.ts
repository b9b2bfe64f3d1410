// The files a run keeps beside the repo: lock, stop request, event logs and transcripts.
import { access, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isNotRegularFile, readFileIfExists, writeFileAtomic } from './atomic-file.js';

/** A `ralph-loop stop` request: for the run named by `run_id` (older requests name none). */
export interface StopRequest {
  requested_at: string;
  by: string;
  run_id?: string;
}

export interface RunDir {
  root: string;
  /** Where the run's folders are checked from before a log is written (see own-log.ts): the repository. */
  trustedRoot: string;
  lockPath: string;
  stopPath: string;
  runsDir: string;
  logsDir: string;
  eventLogPath(runId: string): string;
  transcriptPath(beadId: string): string;
  stopRequested(): Promise<boolean>;
  /** The pending stop request, if any (an unreadable one is still a request, for no run). */
  readStop(): Promise<StopRequest | undefined>;
  requestStop(by: string, runId?: string): Promise<void>;
  clearStop(): Promise<void>;
}

export function createRunDir(root: string, trustedRoot: string = root): RunDir {
  const stopPath = join(root, 'stop');
  const runsDir = join(root, 'runs');
  const logsDir = join(root, 'logs');
  return {
    root,
    trustedRoot,
    lockPath: join(root, 'ralph-loop.lock'),
    stopPath,
    runsDir,
    logsDir,
    eventLogPath: (runId) => join(runsDir, `${safeName(runId)}.jsonl`),
    transcriptPath: (beadId) => join(logsDir, `${safeName(beadId)}.log`),
    stopRequested: () =>
      access(stopPath).then(
        () => true,
        () => false,
      ),
    readStop: async () => {
      // Something other than a file there (a FIFO an agent made, never read) still asks for a stop.
      const text = await readFileIfExists(stopPath).catch((error: unknown) => {
        if (isNotRegularFile(error)) return '';
        throw error;
      });
      if (text === undefined) return undefined;
      try {
        const value = JSON.parse(text) as Partial<StopRequest>;
        return {
          requested_at: String(value.requested_at ?? 'an unknown time'),
          by: String(value.by ?? 'someone'),
          ...(typeof value.run_id === 'string' ? { run_id: value.run_id } : {}),
        };
      } catch {
        return { requested_at: 'an unknown time', by: 'someone' };
      }
    },
    requestStop: (by, runId) =>
      writeFileAtomic(
        stopPath,
        `${JSON.stringify({ requested_at: new Date().toISOString(), by, run_id: runId })}\n`,
      ),
    clearStop: () => rm(stopPath, { force: true }),
  };
}

/** Bead and run ids become file names: keep them to a safe alphabet. */
function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}
