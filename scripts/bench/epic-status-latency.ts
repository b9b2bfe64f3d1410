// Figure 2b: `ralph-loop status` of a plain epic (no autoresearch loop) as a whole process, on the
// embedded store: an epic of many beads, some closed by a real run whose event log status reads.
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
  /** Median ms of the whole `ralph-loop status <epic>` process. */
  ms: number;
  runs: number[];
  /** Median of (status − a `node -e 0` run just before it). */
  beyondNodeMs: number;
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
    const runs: number[] = [];
    const differences: number[] = [];
    for (let i = 0; i < options.runs; i += 1) {
      const node = expectSuccess(await runTimed(NODE, ['-e', '0'], { cwd: dir.path, env }), 'node -e 0');
      const status = expectSuccess(
        await runTimed(NODE, [BIN.ralphLoop, '--store', 'embedded', 'status', seeded.epicId], {
          cwd: dir.path,
          env,
        }),
        `ralph-loop status ${seeded.epicId} (plain epic)`,
      );
      runs.push(status.ms);
      differences.push(status.ms - node.ms);
    }
    return {
      beads: options.beads,
      closed: options.closed,
      ms: median(runs),
      runs,
      beyondNodeMs: median(differences),
    };
  } finally {
    await dir.remove();
    await scratch.remove();
  }
}
