// Figure 2b: `ralph-loop status` of a plain epic (no autoresearch loop) as a whole process, on the
// embedded store: an epic of many beads, some closed by a real run whose event log status reads. Timed
// with the store's view cached (the store settled, as in the morning or between an agent's changes),
// and with none (right after a change), which reads every bead of the store.
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SETTLE_MS, STATUS_CACHE_FILE } from '../../src/cli/epic-status-cache.js';
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
}

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
    return {
      beads: options.beads,
      closed: options.closed,
      ms: median(runs),
      runs,
      beyondNodeMs: median(differences),
      uncachedMs: median(uncached),
    };
  } finally {
    await dir.remove();
    await scratch.remove();
  }
}
