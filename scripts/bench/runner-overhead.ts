// Figure 1: runner overhead per no-op bead, on the embedded store and through the fake br, against the floor.
//
// Through br, the floor loop and ralph-loop take turns over slices of two identical epics (floor slice,
// runner slice, …) so a change in machine load during the run hits both alike; the last runner slice
// runs to the end of the epic, so the closing path (idle explanation, epic close, flush) is counted.
// Identical means the same size, sliced alike: a `br ready` costs more the more beads it lists (at 30 beads
// into an epic, 48 ms with 200 beads against 41 ms with 40), so a floor over a smaller epic is a faster one.
import { measureContainmentCost, type ContainmentCost } from './containment-cost.js';
import { runFloor, type FloorRun } from './floor.js';
import { runCliInProcess, runCoreInProcess, type InProcessRun } from './runner-inprocess.js';
import { runRalphLoop, type RunnerRun } from './runner-process.js';
import { brEnv, countBrCalls, seedEmbeddedEpic, seedFakeBrEpic } from './seed.js';
import { summarize, type Summary } from './stats.js';
import { measureWholeRun, type WholeRun } from './whole-run.js';
import { cleanEnv, initGitRepo, noopAgentSpec, tempDir, writeNoopAgent } from './support.js';

export interface RunnerOverheadOptions {
  /** Beads of each br epic (the runner's and the floor's), and of the embedded run. */
  beads: number;
  /** Slices the br epics are run in, alternating floor and runner (1: one run each). */
  slices: number;
  /** Beads of the in-process core run (cheap, so more of them). */
  coreBeads: number;
  /** Beads of the whole CLI run in process. Default: beads. */
  cliBeads?: number;
  /** Beads and rounds of the whole-run figure (1d): DESIGN §7's 20 beads, median of 3 rounds. */
  wholeBeads?: number;
  wholeRounds?: number;
  /** Starts of the no-op agent each way for the containment row (default 30). */
  containmentRounds?: number;
  brVersion?: string;
}

export interface ProcessFigures {
  runs: number;
  /** Steady-state bead-to-bead time. */
  cycle: Summary;
  agent: Summary;
  outsideAgent: Summary;
  startupMs: Summary;
  shutdownMs: Summary;
  /** Process wall time of all runs over the beads (each run's start and end included). */
  wallPerBeadMs: number;
}

export interface BrCallFigures {
  total: number;
  perBead: number;
  byCommand: Record<string, number>;
  /** ready + claim + close per bead. */
  protocolPerBead: number;
  /** Everything else (version probes, recovery, idle explanation, flush), per runner process. */
  otherPerRun: number;
}

export interface RunnerOverhead {
  beads: number;
  floorBeads: number;
  brVersion: string;
  embedded: ProcessFigures;
  br: ProcessFigures & { calls: BrCallFigures };
  floor: {
    perBead: Summary;
    spawn: Summary;
    br: Summary;
    ready: Summary;
    claim: Summary;
    close: Summary;
  };
  /** br runner cycle ÷ floor bead: medians, and means (total time, the figure a user feels). */
  ratio: { median: number; mean: number };
  /** Runner outside the agent minus the floor's three br calls: the runner's own time per bead through br. */
  overheadExcludingBrAndAgentMs: number;
  core: InProcessFigures;
  cli: InProcessFigures;
  /** Whole runs against the floor, start to finish, with every br call (figure 1d). */
  whole: WholeRun;
  /** The no-op agent in a PID namespace of its own, as the runner starts it, against started directly. */
  containment: ContainmentCost;
}

export interface InProcessFigures {
  beads: number;
  perBead: Summary;
  /** Whole run over the beads (start and finish included). */
  meanMs: number;
}

function processFigures(runs: readonly RunnerRun[], beads: number): ProcessFigures {
  return {
    runs: runs.length,
    cycle: summarize(runs.flatMap((run) => run.cycle)),
    agent: summarize(runs.flatMap((run) => run.agent)),
    outsideAgent: summarize(runs.flatMap((run) => run.outsideAgent)),
    startupMs: summarize(runs.map((run) => run.startupMs)),
    shutdownMs: summarize(runs.map((run) => run.shutdownMs)),
    wallPerBeadMs: runs.reduce((total, run) => total + run.wallMs, 0) / beads,
  };
}

function inProcessFigures(run: InProcessRun): InProcessFigures {
  return { beads: run.beads, perBead: summarize(run.perBead), meanMs: run.totalMs / run.beads };
}

/** Sizes of `slices` slices of `total` beads (the last takes the remainder). */
export function sliceSizes(total: number, slices: number): number[] {
  const count = Math.max(1, Math.min(slices, total));
  const size = Math.floor(total / count);
  return Array.from({ length: count }, (_, i) => (i === count - 1 ? total - size * (count - 1) : size));
}

export async function measureRunnerOverhead(options: RunnerOverheadOptions): Promise<RunnerOverhead> {
  const brVersion = options.brVersion ?? '0.2.19';
  const scratch = await tempDir('runner');
  try {
    const agentScript = await writeNoopAgent(scratch.path);
    const agentSpec = noopAgentSpec(agentScript);

    // In-process first, on a quiet heap: a warm-up, then the measured runs.
    await runCoreInProcess(Math.min(50, options.coreBeads));
    const core = inProcessFigures(await runCoreInProcess(options.coreBeads));
    const cli = inProcessFigures(await runCliInProcess(options.cliBeads ?? options.beads));

    const embeddedDir = await tempDir('embedded');
    let embedded: ProcessFigures;
    try {
      await initGitRepo(embeddedDir.path, embeddedDir.path);
      const seeded = await seedEmbeddedEpic(embeddedDir.path, options.beads);
      const run = await runRalphLoop({
        cwd: embeddedDir.path,
        env: cleanEnv(embeddedDir.path),
        epicId: seeded.epicId,
        store: 'embedded',
        agentSpec,
        beads: options.beads,
      });
      embedded = processFigures([run], options.beads);
    } finally {
      await embeddedDir.remove();
    }

    const floorEpic = await seedFakeBrEpic(options.beads, brVersion);
    const brEpic = await seedFakeBrEpic(options.beads, brVersion);
    try {
      await initGitRepo(floorEpic.workspace.root, floorEpic.workspace.root);
      await initGitRepo(brEpic.workspace.root, brEpic.workspace.root);
      const floors: FloorRun[] = [];
      const runs: RunnerRun[] = [];
      const sizes = sliceSizes(options.beads, options.slices);
      for (const [index, size] of sizes.entries()) {
        const last = index === sizes.length - 1;
        floors.push(
          await runFloor({
            cwd: floorEpic.workspace.root,
            env: brEnv(floorEpic.workspace),
            beadsDir: floorEpic.beadsDir,
            epicId: floorEpic.epicId,
            agentScript,
            ...(last ? {} : { limit: size }),
          }),
        );
        runs.push(
          await runRalphLoop({
            cwd: brEpic.workspace.root,
            env: brEnv(brEpic.workspace),
            epicId: brEpic.epicId,
            store: 'br',
            agentSpec,
            beads: size,
            ...(last ? {} : { maxBeads: size }),
          }),
        );
      }
      const counted = await countBrCalls(brEpic.workspace);
      const containment = await measureContainmentCost({
        agentScript,
        cwd: brEpic.workspace.root,
        env: brEnv(brEpic.workspace),
        rounds: options.containmentRounds ?? 30,
      });
      const whole = await measureWholeRun({
        beads: options.wholeBeads ?? 20,
        rounds: options.wholeRounds ?? 3,
        agentScript,
        agentSpec,
        brVersion,
      });
      const protocol =
        (counted.byCommand.ready ?? 0) + (counted.byCommand.claim ?? 0) + (counted.byCommand.close ?? 0);
      const floor = {
        perBead: summarize(floors.flatMap((f) => f.perBead)),
        spawn: summarize(floors.flatMap((f) => f.spawn)),
        br: summarize(floors.flatMap((f) => f.br)),
        ready: summarize(floors.flatMap((f) => f.ready)),
        claim: summarize(floors.flatMap((f) => f.claim)),
        close: summarize(floors.flatMap((f) => f.close)),
      };
      const br = {
        ...processFigures(runs, options.beads),
        calls: {
          total: counted.total,
          perBead: counted.total / options.beads,
          byCommand: counted.byCommand,
          protocolPerBead: protocol / options.beads,
          otherPerRun: (counted.total - protocol) / runs.length,
        },
      };
      return {
        beads: options.beads,
        floorBeads: options.beads,
        brVersion,
        embedded,
        br,
        floor,
        ratio: {
          median: br.cycle.median / floor.perBead.median,
          mean: br.cycle.mean / floor.perBead.mean,
        },
        overheadExcludingBrAndAgentMs: br.outsideAgent.median - floor.br.median,
        core,
        cli,
        whole,
        containment,
      };
    } finally {
      await floorEpic.workspace.cleanup();
      await brEpic.workspace.cleanup();
    }
  } finally {
    await scratch.remove();
  }
}
