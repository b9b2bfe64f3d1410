// A pipeline's parent epic in a run: the `role:loop` executor of its stage beads, wired to the real
// setup (forge-pack loop's) and to a nested run of the stage's epic in this same process.
//
// In process rather than as a child ralph-loop: a kill -9 of the run takes the stage's run with it (no
// orphan left holding the stage's lock), one Ctrl-C reaches both, and the nested run is the ordinary
// run of the stage's epic, with its own lock, recovery, guards and event log.
import type { BeadStore } from '../beads/types.js';
import { AppError, ExitCode } from '../infra/errors.js';
import type { Executor, RunSummary } from '../loop/types.js';
import type { GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import type { ForgeConfig } from './forge-config.js';
import type { RunFlags } from './run-flags.js';

export interface PipelineRunContext {
  repo: string;
  epicId: string;
  store: BeadStore;
  config: ForgeConfig;
  runNested(epicId: string, signal: AbortSignal): Promise<RunSummary>;
}

/** The `loop` executor when the epic is a pipeline's parent; none otherwise. */
export async function pipelineBuiltins(
  deps: CliDeps,
  _options: GlobalOptions,
  flags: RunFlags,
  ctx: PipelineRunContext,
): Promise<Record<string, Executor> | undefined> {
  const [{ pathExists }, { pipelinePath }] = await Promise.all([
    import('../infra/atomic-file.js'),
    import('../autoresearch/pipeline-paths.js'),
  ]);
  // Asked at every run's start: only a pipeline's parent loads the record's reader and schema.
  if (!(await pathExists(pipelinePath(ctx.repo, ctx.epicId)))) return undefined;
  const { readPipeline } = await import('../autoresearch/pipeline-state.js');
  if ((await readPipeline(ctx.repo, ctx.epicId)) === undefined) return undefined;
  if (flags.worktree === true) {
    throw new AppError(
      `Epic ${ctx.epicId} is a pipeline: its stages run in the repository itself, not in a worktree.`,
      {
        exitCode: ExitCode.usage,
        hint: `Run it without --worktree: ralph-loop ${ctx.epicId}`,
      },
    );
  }
  const [{ createStageExecutor }, { setupLoop }, { loopSetupPorts }, { loopAgents }] = await Promise.all([
    import('../autoresearch/pipeline-stage.js'),
    import('../autoresearch/setup.js'),
    import('./setup-ports.js'),
    import('./agent-options.js'),
  ]);
  const stage = createStageExecutor({
    repo: ctx.repo,
    files: deps.loopFiles,
    store: ctx.store,
    loopAgents: (own) => {
      const agents = loopAgents(own, ctx.config);
      return Object.keys(agents).length === 0 ? undefined : agents;
    },
    setupLoop: async (options) => {
      const result = await setupLoop(ctx.repo, options, loopSetupPorts(deps, ctx.repo, ctx.store));
      return { epic: result.epic };
    },
    specGatePasses: async (slug) =>
      (await import('../autoresearch/spec-state/file.js')).specGatePasses(ctx.repo, slug),
    runEpic: (epicId, signal) => ctx.runNested(epicId, signal),
  });
  return { loop: stage };
}

/** When the run's own --wall-clock runs out (epoch ms), if it has one. */
export function deadlineOf(deps: CliDeps, flags: RunFlags): number | undefined {
  return flags.wallClock !== undefined && flags.wallClock > 0
    ? deps.clock.now() + flags.wallClock * 1000
    : undefined;
}

/** A stage's run takes the pipeline run's options, and what is left of its wall clock. */
export function nestedFlags(flags: RunFlags, deadline: number | undefined, deps: CliDeps): RunFlags {
  // --max-beads counts the pipeline's stage beads, not the beads inside a stage.
  const { worktree: _worktree, wallClock: _wallClock, dryRun: _dryRun, maxBeads: _maxBeads, ...rest } = flags;
  if (deadline === undefined) return rest;
  return { ...rest, wallClock: Math.max(1, Math.ceil((deadline - deps.clock.now()) / 1000)) };
}
