// Figure 1d: a whole ralph-loop run through the fake br against the floor loop over an epic of the same
// size, start to finish (Node's start, the checks before the run, recovery, the end-of-run explanation,
// the epic's close and the flush all counted), with every br call the run made. Rounds alternate floor
// and runner on fresh epics, so a change in machine load hits both alike; the ratio is the median round's.
import { runFloor } from './floor.js';
import { runRalphLoop } from './runner-process.js';
import { brEnv, countBrCalls, seedFakeBrEpic, type BrCallCounts } from './seed.js';
import { median } from './stats.js';
import { initGitRepo } from './support.js';

export interface WholeRunOptions {
  beads: number;
  rounds: number;
  agentScript: string;
  agentSpec: string;
  brVersion: string;
}

export interface WholeRunRound {
  floorMs: number;
  runnerMs: number;
  ratio: number;
}

export interface WholeRun {
  beads: number;
  rounds: WholeRunRound[];
  /** Median of the rounds' runner ÷ floor. */
  ratio: number;
  floorMs: number;
  runnerMs: number;
  /** Every br call of one whole run (the last round's), by command. */
  calls: BrCallCounts;
  /** The floor's br calls over the same epic: one ready, claim and close per bead and the last ready. */
  floorCalls: number;
  /** The runner's calls that are not ready/claim/close, for the whole run. */
  otherCalls: number;
}

async function floorRound(options: WholeRunOptions): Promise<{ ms: number; calls: number }> {
  const epic = await seedFakeBrEpic(options.beads, options.brVersion);
  try {
    await initGitRepo(epic.workspace.root, epic.workspace.root);
    const run = await runFloor({
      cwd: epic.workspace.root,
      env: brEnv(epic.workspace),
      beadsDir: epic.beadsDir,
      epicId: epic.epicId,
      agentScript: options.agentScript,
    });
    if (run.beads !== options.beads) throw new Error(`the floor closed ${run.beads} of ${options.beads}`);
    return { ms: run.totalMs, calls: (await countBrCalls(epic.workspace)).total };
  } finally {
    await epic.workspace.cleanup();
  }
}

async function runnerRound(options: WholeRunOptions): Promise<{ ms: number; calls: BrCallCounts }> {
  const epic = await seedFakeBrEpic(options.beads, options.brVersion);
  try {
    await initGitRepo(epic.workspace.root, epic.workspace.root);
    const run = await runRalphLoop({
      cwd: epic.workspace.root,
      env: brEnv(epic.workspace),
      epicId: epic.epicId,
      store: 'br',
      agentSpec: options.agentSpec,
      beads: options.beads,
    });
    return { ms: run.wallMs, calls: await countBrCalls(epic.workspace) };
  } finally {
    await epic.workspace.cleanup();
  }
}

export async function measureWholeRun(options: WholeRunOptions): Promise<WholeRun> {
  const rounds: WholeRunRound[] = [];
  let calls: BrCallCounts = { total: 0, byCommand: {} };
  let floorCalls = 0;
  for (let i = 0; i < Math.max(1, options.rounds); i += 1) {
    const floor = await floorRound(options);
    const runner = await runnerRound(options);
    rounds.push({ floorMs: floor.ms, runnerMs: runner.ms, ratio: runner.ms / floor.ms });
    calls = runner.calls;
    floorCalls = floor.calls;
  }
  const protocol = (calls.byCommand.ready ?? 0) + (calls.byCommand.claim ?? 0) + (calls.byCommand.close ?? 0);
  return {
    beads: options.beads,
    rounds,
    ratio: median(rounds.map((round) => round.ratio)),
    floorMs: median(rounds.map((round) => round.floorMs)),
    runnerMs: median(rounds.map((round) => round.runnerMs)),
    calls,
    floorCalls,
    otherCalls: calls.total - protocol,
  };
}
