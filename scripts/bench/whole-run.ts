// Figure 1d: a whole ralph-loop run through the fake br against the floor loop over an epic of the same
// size, start to finish (Node's start, the checks before the run, recovery, the end-of-run explanation,
// the epic's close and the flush all counted), with every br call the run made. Rounds alternate floor
// and runner on fresh epics, so a change in machine load hits both alike; the ratio is the median round's.
// Each round's difference is split where it arises (RunExcess): before the first bead's attempt, over the
// beads, and after the last bead closed, so the table says which part a change moved.
import { runFloor, type FloorRun } from './floor.js';
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
  /** Where this round's runner spent its time beyond the floor's (runnerMs − floorMs, split in three). */
  excess: RunExcess;
}

/**
 * The runner's time beyond the floor's, in three parts that sum to the whole difference:
 * - start: up to the first bead's attempt (the runner's process start to its first bead_started, against
 *   the floor's first ready and claim): Node's start, the checks before the run, the first ready and claim;
 * - beads: from there to the last bead closed, against the floor's same stretch (per bead: ÷ beads);
 * - end: from the last bead closed to the process's exit, against the floor's last ready.
 */
export interface RunExcess {
  startMs: number;
  perBeadMs: number;
  endMs: number;
}

export interface WholeRun {
  beads: number;
  rounds: WholeRunRound[];
  /** Median of the rounds' runner ÷ floor. */
  ratio: number;
  floorMs: number;
  runnerMs: number;
  /** Each part's median over the rounds (so the parts need not sum to runnerMs − floorMs exactly). */
  excess: RunExcess;
  /** Every br call of one whole run (the last round's), by command. */
  calls: BrCallCounts;
  /** The floor's br calls over the same epic: one ready, claim and close per bead and the last ready. */
  floorCalls: number;
  /** The runner's calls that are not ready/claim/close, for the whole run. */
  otherCalls: number;
}

interface Stretches {
  startMs: number;
  beadsMs: number;
  endMs: number;
}

/** The floor's run in the same three stretches as the runner's (see RunExcess). */
export function floorStretches(run: Pick<FloorRun, 'totalMs' | 'perBead' | 'ready' | 'claim'>): Stretches {
  const startMs = (run.ready[0] ?? 0) + (run.claim[0] ?? 0);
  const beadsEnd = run.perBead.reduce((sum, bead) => sum + bead, 0);
  return { startMs, beadsMs: beadsEnd - startMs, endMs: run.totalMs - beadsEnd };
}

/**
 * The runner's run in three stretches, from its event log: process start to the first bead_started,
 * from there to the last bead_closed, and from there to the process's exit.
 */
export function runnerStretches(
  startedAt: number,
  wallMs: number,
  events: readonly { type: string; ts: string }[],
): Stretches {
  const at = (type: string) => events.filter((event) => event.type === type).map((e) => Date.parse(e.ts));
  const firstBead = at('bead_started')[0] ?? startedAt;
  const lastClosed = at('bead_closed').at(-1) ?? firstBead;
  return {
    startMs: firstBead - startedAt,
    beadsMs: lastClosed - firstBead,
    endMs: startedAt + wallMs - lastClosed,
  };
}

/** The runner's stretches less the floor's; the bead stretch per bead. */
export function excessOver(runner: Stretches, floor: Stretches, beads: number): RunExcess {
  return {
    startMs: runner.startMs - floor.startMs,
    perBeadMs: (runner.beadsMs - floor.beadsMs) / Math.max(1, beads),
    endMs: runner.endMs - floor.endMs,
  };
}

async function floorRound(
  options: WholeRunOptions,
): Promise<{ ms: number; calls: number; parts: Stretches }> {
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
    return { ms: run.totalMs, calls: (await countBrCalls(epic.workspace)).total, parts: floorStretches(run) };
  } finally {
    await epic.workspace.cleanup();
  }
}

async function runnerRound(
  options: WholeRunOptions,
): Promise<{ ms: number; calls: BrCallCounts; parts: Stretches }> {
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
    return {
      ms: run.wallMs,
      calls: await countBrCalls(epic.workspace),
      parts: runnerStretches(run.process.startedAt, run.wallMs, run.events),
    };
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
    rounds.push({
      floorMs: floor.ms,
      runnerMs: runner.ms,
      ratio: runner.ms / floor.ms,
      excess: excessOver(runner.parts, floor.parts, options.beads),
    });
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
    excess: {
      startMs: median(rounds.map((round) => round.excess.startMs)),
      perBeadMs: median(rounds.map((round) => round.excess.perBeadMs)),
      endMs: median(rounds.map((round) => round.excess.endMs)),
    },
    calls,
    floorCalls,
    otherCalls: calls.total - protocol,
  };
}
