// Figure 2b: `ralph-loop status` of a plain epic (no autoresearch loop) as a whole process, on the
// embedded store: an epic of many beads, some closed by a real run whose event log status reads. Timed
// with the store's view cached (the store settled, as in the morning or between an agent's changes),
// and with none (right after a change), which reads every bead of the store. Then with the newest run's
// log grown as a long run grows it (an agent's activity lines), read on from the digest the last status
// kept (run-digest.ts) and read whole.
import { appendFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SETTLE_MS, STATUS_CACHE_FILE } from '../../src/cli/epic-status-cache.js';
import { RUN_DIGESTS_FILE } from '../../src/cli/run-digest.js';
import { runRalphLoop } from './runner-process.js';
import { seedEmbeddedEpic } from './seed.js';
import { median } from './stats.js';
import {
  BIN,
  cleanEnv,
  expectSuccess,
  initGitRepo,
  NODE,
  noopAgentSpec,
  runTimed,
  tempDir,
  writeNoopAgent,
} from './support.js';

export interface EpicStatusOptions {
  /** Beads of the epic. */
  beads: number;
  /** Of which a run closes this many first (its event log is what status reads for the last run). */
  closed: number;
  runs: number;
  /** The long run's beads (LONG_RUN_BEADS unless said). */
  longRunBeads?: number;
}

export interface EpicStatusLatency {
  beads: number;
  closed: number;
  /** Median ms of the whole `ralph-loop status <epic>` process, the store settled and its view cached. */
  ms: number;
  runs: number[];
  /** Median of (status − a `node -e 0` run just before it), the view cached. */
  beyondNodeMs: number;
  /** Median ms with no cached view (status right after a change to the store): every bead is read. */
  uncachedMs: number;
  /** The newest run's log grown as a long run's beads grow it. */
  longLog: {
    beads: number;
    bytes: number;
    /** Median ms, the log read on from the digest the last status kept. */
    keptMs: number;
    /** Median ms, the log read whole (no kept digest). */
    wholeMs: number;
  };
}

/** The long run: its beads, and an agent's activity lines for each. */
const LONG_RUN_BEADS = 500;
const ACTIVITY_PER_BEAD = 100;

export async function measureEpicStatus(options: EpicStatusOptions): Promise<EpicStatusLatency> {
  const dir = await tempDir('epic-status');
  const scratch = await tempDir('epic-status-agent');
  try {
    await initGitRepo(dir.path, dir.path);
    const env = cleanEnv(dir.path);
    const seeded = await seedEmbeddedEpic(dir.path, options.beads);
    const agent = noopAgentSpec(await writeNoopAgent(scratch.path));
    if (options.closed > 0) {
      await runRalphLoop({
        cwd: dir.path,
        env,
        epicId: seeded.epicId,
        store: 'embedded',
        agentSpec: agent,
        beads: options.closed,
        maxBeads: options.closed,
      });
    }
    // A status caches what it read of the store only once the store has settled (epic-status-cache.ts).
    const changed = Number(
      (await stat(join(dir.path, '.beads', 'issues.jsonl'), { bigint: true })).ctimeNs / 1_000_000n,
    );
    await sleep(Math.max(0, changed + SETTLE_MS + 100 - Date.now()));
    const cache = join(dir.path, '.forge', 'epics', seeded.epicId, STATUS_CACHE_FILE);
    const status = async () =>
      expectSuccess(
        await runTimed(NODE, [BIN.ralphLoop, '--store', 'embedded', 'status', seeded.epicId], {
          cwd: dir.path,
          env,
        }),
        `ralph-loop status ${seeded.epicId} (plain epic)`,
      ).ms;
    const uncached: number[] = [];
    for (let i = 0; i < options.runs; i += 1) {
      await rm(cache, { force: true });
      uncached.push(await status());
    }
    const runs: number[] = [];
    const differences: number[] = [];
    for (let i = 0; i < options.runs; i += 1) {
      const node = expectSuccess(await runTimed(NODE, ['-e', '0'], { cwd: dir.path, env }), 'node -e 0');
      const ms = await status();
      runs.push(ms);
      differences.push(ms - node.ms);
    }
    const longLog = await measureLongLog(
      dir.path,
      seeded.epicId,
      options.longRunBeads ?? LONG_RUN_BEADS,
      options.runs,
      status,
    );
    return {
      beads: options.beads,
      closed: options.closed,
      ms: median(runs),
      runs,
      beyondNodeMs: median(differences),
      uncachedMs: median(uncached),
      longLog,
    };
  } finally {
    await dir.remove();
    await scratch.remove();
  }
}

/** Grows the epic's newest run log by `beads` beads' events and activity, then times status on it. */
async function measureLongLog(
  cwd: string,
  epicId: string,
  beads: number,
  runs: number,
  status: () => Promise<number>,
): Promise<EpicStatusLatency['longLog']> {
  const epicDir = join(cwd, '.forge', 'epics', epicId);
  const names = (await readdir(join(epicDir, 'runs'))).filter((name) => name.endsWith('.jsonl')).sort();
  const newest = names.at(-1);
  if (newest === undefined) throw new Error(`no run log in ${epicDir}/runs to grow`);
  const log = join(epicDir, 'runs', newest);
  const ts = new Date().toISOString();
  for (let b = 0; b < beads; b += 1) {
    const bead = `${epicId}.long${b}`;
    const lines = [
      JSON.stringify({
        type: 'bead_started',
        ts,
        epic: epicId,
        bead,
        title: `bead ${b}`,
        role: 'doer',
        attempt: 1,
      }),
    ];
    for (let a = 0; a < ACTIVITY_PER_BEAD; a += 1) {
      lines.push(
        JSON.stringify({
          type: 'activity',
          ts,
          epic: epicId,
          bead,
          message: `Bash: npm test -- test/some/file-${a}.test.ts`,
        }),
      );
    }
    lines.push(JSON.stringify({ type: 'bead_closed', ts, epic: epicId, bead }));
    await appendFile(log, `${lines.join('\n')}\n`);
  }
  const kept = join(epicDir, RUN_DIGESTS_FILE);
  const whole: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    await rm(kept, { force: true });
    whole.push(await status());
  }
  const keptRuns: number[] = [];
  for (let i = 0; i < runs; i += 1) keptRuns.push(await status());
  return {
    beads,
    bytes: (await stat(log)).size,
    keptMs: median(keptRuns),
    wholeMs: median(whole),
  };
}
