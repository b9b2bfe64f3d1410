// The files a run keeps beside the repo: lock, stop request, event logs and transcripts.
import { access, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';

export interface RunDir {
  root: string;
  lockPath: string;
  stopPath: string;
  runsDir: string;
  logsDir: string;
  eventLogPath(runId: string): string;
  transcriptPath(beadId: string): string;
  stopRequested(): Promise<boolean>;
  requestStop(by: string): Promise<void>;
  clearStop(): Promise<void>;
}

export function createRunDir(root: string): RunDir {
  const stopPath = join(root, 'stop');
  const runsDir = join(root, 'runs');
  const logsDir = join(root, 'logs');
  return {
    root,
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
    requestStop: (by) =>
      writeFileAtomic(stopPath, `${JSON.stringify({ requested_at: new Date().toISOString(), by })}\n`),
    clearStop: () => rm(stopPath, { force: true }),
  };
}

/** Bead and run ids become file names: keep them to a safe alphabet. */
function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}
