// The live bead of an epic, for the report and the dashboard: the lock says which run is live, and that
// run's events file (followed from where the last read stopped, as `logs --follow` does) says which
// bead started last, with its role and agent, and whether it has ended.
import { createFileTail, parseEventLines, type FileTail } from '../infra/file-tail.js';
import { isLockHolderLive, readLockFile } from '../infra/lock-file.js';
import type { RunDir } from '../infra/run-dir.js';
import type { LiveBead } from './report-html.js';

export interface LivePorts {
  now(): number;
  host: string;
  isProcessAlive(pid: number): boolean;
}

interface Started {
  title: string | null;
  role: string | null;
  agent: string | null;
  attempt: number | null;
  ended: boolean;
}

export interface LiveFollower {
  read(): Promise<LiveBead | null>;
}

export function createLiveFollower(runDir: RunDir, ports: LivePorts): LiveFollower {
  let followed: { runId: string; tail: FileTail; beads: Map<string, Started> } | undefined;
  return {
    async read() {
      const lock = await readLockFile(runDir.lockPath);
      if (lock === undefined) return null;
      if (!(await isLockHolderLive(runDir.lockPath, lock, ports.host, (pid) => ports.isProcessAlive(pid)))) {
        return null;
      }
      if (followed?.runId !== lock.run_id) {
        followed = {
          runId: lock.run_id,
          tail: createFileTail(runDir.eventLogPath(lock.run_id)),
          beads: new Map(),
        };
      }
      for (const event of parseEventLines(await followed.tail.readLines()).events) {
        if (typeof event.bead !== 'string') continue;
        if (event.type === 'bead_started') {
          followed.beads.set(event.bead, {
            title: str(event.title),
            role: str(event.role),
            agent: str(event.agent),
            attempt: typeof event.attempt === 'number' ? event.attempt : null,
            ended: false,
          });
        } else if (event.type === 'bead_closed' || event.type === 'bead_failed') {
          const started = followed.beads.get(event.bead);
          if (started !== undefined) started.ended = true;
        }
      }
      // The lock keeps naming a bead after it ends, until the next starts: the events say whether it did.
      const started = lock.bead === undefined ? undefined : followed.beads.get(lock.bead);
      const bead = lock.bead === undefined || started?.ended === true ? null : lock.bead;
      const since = lock.bead_started_at === undefined ? Number.NaN : Date.parse(lock.bead_started_at);
      return {
        run_id: lock.run_id,
        pid: lock.pid,
        bead,
        title: bead === null ? null : (started?.title ?? null),
        role: bead === null ? null : (started?.role ?? null),
        agent: bead === null ? null : (started?.agent ?? null),
        attempt: bead === null ? null : (started?.attempt ?? null),
        bead_elapsed_ms: bead === null || !Number.isFinite(since) ? null : Math.max(0, ports.now() - since),
      };
    },
  };
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
