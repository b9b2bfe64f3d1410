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
  /** The tree before a bead's first attempt under --auto-commit (see ControlFiles.treeBefore). */
  readTreeBefore(): Promise<TreeBefore | undefined>;
  writeTreeBefore(record: TreeBefore): Promise<void>;
  clearTreeBefore(): Promise<void>;
}

/** A bead, and the paths that were dirty before its first attempt, each with its fingerprint. */
export interface TreeBefore {
  bead: string;
  dirty: ReadonlyMap<string, string>;
}

export function createRunDir(root: string, trustedRoot: string = root): RunDir {
  const stopPath = join(root, 'stop');
  const treeBeforePath = join(root, 'tree-before.json');
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
    // Whatever is there: a folder an agent made at the stop file's place ended every run on EISDIR.
    // A link goes as a link (rm never follows one).
    clearStop: () => rm(stopPath, { force: true, recursive: true }),
    readTreeBefore: async () => {
      const text = await readFileIfExists(treeBeforePath).catch(() => undefined);
      if (text === undefined) return undefined;
      try {
        const value = JSON.parse(text) as { bead?: unknown; dirty?: unknown };
        if (typeof value.bead !== 'string' || !Array.isArray(value.dirty)) return undefined;
        const dirty = new Map<string, string>();
        for (const entry of value.dirty as unknown[]) {
          if (Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string')
            dirty.set(entry[0], entry[1]);
        }
        return { bead: value.bead, dirty };
      } catch {
        // Unreadable: as if there were none (the user's changes are then refused as ever, never taken).
        return undefined;
      }
    },
    writeTreeBefore: (record) =>
      writeFileAtomic(treeBeforePath, `${JSON.stringify({ bead: record.bead, dirty: [...record.dirty] })}\n`),
    clearTreeBefore: () => rm(treeBeforePath, { force: true }),
  };
}

/** Bead and run ids become file names: keep them to a safe alphabet. */
function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}
