// The `role:loop` executor: a pipeline's stage bead. It creates the stage's loop (or takes the stage's
// epic), runs it to its end through the same runner as any epic, and passes when the stage's condition
// holds. A stage that ends short asks the user (again, accept, stop) and stops the pipeline.
//
// Idempotent at every step: the loop is found through its workspace's config.json before one is created,
// the record is written as soon as anything exists, and a nested run recovers its own epic as any run does.
import { resolve } from 'node:path';
import type { BeadStore } from '../beads/types.js';
import type { LoopFiles } from '../infra/loop-files.js';
import type { ExecutionRequest, ExecutionResult, Executor, RunSummary } from '../loop/types.js';
import { stageLoopOptions, stageWorkspace, type LoopStage, type PipelineStage } from './pipeline-schema.js';
import {
  askStageQuestion,
  readPipeline,
  readStageQuestion,
  stageOfBead,
  updateStage,
  type PipelineRecord,
  type StageRecord,
} from './pipeline-state.js';
import type { LoopSetupOptions } from './setup-options.js';
import { readTerminalSignal } from './signals.js';
import { configEpicId } from './workspace.js';

/** A stage's stop names its own next command (or that there is none) in its message: no other hint. */
const NAMED_IN_MESSAGE = '';

export interface StagePorts {
  repo: string;
  /** The loops' own files (the stage's terminal signal is read through them). */
  files: LoopFiles;
  store: Pick<BeadStore, 'children'>;
  /** Agents for a stage's loop: its own, over `.forge/config.json`'s (as `forge-pack loop` does). */
  loopAgents(stage: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined;
  /** Creates a loop as `forge-pack loop` does; `force` archives the loop of an earlier cycle. */
  setupLoop(options: LoopSetupOptions): Promise<{ epic: string }>;
  /** Whether a spec passes its readiness gate (a `spec_ready` stage's condition). */
  specGatePasses(slug: string): Promise<boolean>;
  /** Runs an epic to its end (the runner, its lock, recovery and guards), stopping when `signal` aborts. */
  runEpic(epicId: string, signal: AbortSignal): Promise<RunSummary>;
}

export function createStageExecutor(ports: StagePorts): Executor {
  return {
    kind: 'pipeline stage',
    builtin: true,
    writesCode: false,
    runsGates: false,
    // A stage that failed once failed inside its own epic, whose runner already retried its beads.
    maxAttempts: 1,
    execute: (request) => executeStage(ports, request),
  };
}

async function executeStage(ports: StagePorts, request: ExecutionRequest): Promise<ExecutionResult> {
  const record = await readPipeline(ports.repo, request.epicId);
  const found = record === undefined ? undefined : stageOfBead(record, request.bead.id);
  if (record === undefined || found === undefined) {
    return {
      outcome: 'error',
      fatal: true,
      message: `${request.bead.id} has role:loop but is no stage of a pipeline of ${request.epicId} (.forge/pipelines/ has none): create pipelines with forge-pack pipeline <file>.`,
    };
  }
  const { stage, state } = found;
  const question = await readStageQuestion(ports.repo, record.parent);
  if (question.state !== 'none') {
    return {
      outcome: 'needs_human',
      hint: NAMED_IN_MESSAGE,
      message: `The pipeline waits for your answer in ${question.path} (stage "${question.stage}"): write again, accept or stop under "## Answer", then run: ralph-loop resume ${record.parent}`,
    };
  }
  if (state.answer === 'stop') {
    return {
      outcome: 'needs_human',
      hint: NAMED_IN_MESSAGE,
      message: `The pipeline was stopped at stage "${stage.name}" by your answer; nothing more of it runs.`,
    };
  }
  if (state.answer === 'accept') {
    return { outcome: 'ok', message: 'accepted', closeReason: `stage ${stage.name}: accepted as it ended` };
  }

  const epic = await stageEpic(ports, record, stage, state);
  const summary = await ports.runEpic(epic, request.signal);
  if (request.signal.aborted || summary.reason === 'interrupted') {
    return { outcome: 'aborted', message: `Stage "${stage.name}" was interrupted (${epic} left to resume).` };
  }
  const passed = await stagePassed(ports, stage, epic);
  if (passed.ok) {
    return { outcome: 'ok', message: passed.why, closeReason: `stage ${stage.name}: ${passed.why}` };
  }
  return afterShortEnd(ports, record, stage, epic, summary, passed.why);
}

/** The stage's epic: the one recorded, the loop its workspace holds, or a new loop (recorded at once). */
async function stageEpic(
  ports: StagePorts,
  record: PipelineRecord,
  stage: PipelineStage,
  state: StageRecord,
): Promise<string> {
  if (stage.type === 'epic') {
    if (state.epic !== stage.epic)
      await updateStage(ports.repo, record, stage.name, (s) => ({ ...s, epic: stage.epic }));
    return stage.epic;
  }
  if (state.epic !== null) return state.epic;
  // A loop created by a run that died before recording it: its workspace names it.
  const inWorkspace = await configEpicId(resolve(ports.repo, stageWorkspace(stage)));
  if (inWorkspace !== undefined && !state.retired.includes(inWorkspace)) {
    await updateStage(ports.repo, record, stage.name, (s) => ({ ...s, epic: inWorkspace }));
    return inWorkspace;
  }
  const options = loopOptions(ports, record, stage);
  const created = await ports.setupLoop({ ...options, force: inWorkspace !== undefined });
  await updateStage(ports.repo, record, stage.name, (s) => ({ ...s, epic: created.epic }));
  return created.epic;
}

function loopOptions(ports: StagePorts, record: PipelineRecord, stage: LoopStage): LoopSetupOptions {
  const program = record.programs[stage.name] ?? '';
  return stageLoopOptions(record.name, stage, program, ports.loopAgents(stage.agents));
}

async function stagePassed(
  ports: StagePorts,
  stage: PipelineStage,
  epic: string,
): Promise<{ ok: boolean; why: string }> {
  if (stage.type === 'epic') {
    const beads = await ports.store.children(epic);
    const open = beads.filter((b) => b.status !== 'closed' && b.status !== 'tombstone');
    return open.length === 0
      ? { ok: true, why: `all ${beads.length} beads of ${epic} closed` }
      : { ok: false, why: `${open.length} of ${beads.length} beads of ${epic} are not closed` };
  }
  const terminal = await readTerminalSignal(ports.files, resolve(ports.repo, stageWorkspace(stage)));
  if (terminal === undefined) return { ok: false, why: `the loop ${epic} has not ended` };
  const score = `best score ${String(terminal.best_score)}`;
  if (stage.passes_when === 'spec_ready') {
    const slug = stage.spec ?? '';
    return (await ports.specGatePasses(slug))
      ? { ok: true, why: `the spec ${slug} passes its readiness gate (${terminal.reason}, ${score})` }
      : {
          ok: false,
          why: `the loop ${epic} ended (${terminal.reason}, ${score}) but the spec ${slug} does not pass its readiness gate (forge-pack spec status ${slug} says what it needs)`,
        };
  }
  if (terminal.reason === 'goal_reached') return { ok: true, why: `goal reached (${score})` };
  if (stage.passes_when === 'ended') return { ok: true, why: `ended (${terminal.reason}, ${score})` };
  return {
    ok: false,
    why: `the loop ${epic} ended on ${terminal.reason} at iteration ${terminal.iter}, ${score}, without reaching its goal`,
  };
}

/** A stage that did not pass: its own question, a failure inside it, or a short end that asks the user. */
async function afterShortEnd(
  ports: StagePorts,
  record: PipelineRecord,
  stage: PipelineStage,
  epic: string,
  summary: RunSummary,
  why: string,
): Promise<ExecutionResult> {
  switch (summary.reason) {
    case 'needs_human':
      return {
        outcome: 'needs_human',
        hint: NAMED_IN_MESSAGE,
        message: `Stage "${stage.name}" (${epic}) waits for a human: ${summary.message} Then run: ralph-loop ${record.parent}`,
      };
    case 'auth':
      return { outcome: 'auth', message: summary.message };
    case 'environment':
    case 'refused':
      return { outcome: 'error', environment: true, message: summary.message };
    case 'wall_clock':
    case 'max_beads':
      return { outcome: 'aborted', message: `Stage "${stage.name}" (${epic}) stopped: ${summary.message}` };
    case 'stopped':
      // Someone ran ralph-loop stop on the stage's epic: the pipeline waits for them to run it again.
      return {
        outcome: 'needs_human',
        hint: NAMED_IN_MESSAGE,
        message: `Stage "${stage.name}" (${epic}) was stopped by ralph-loop stop; run the pipeline again to go on: ralph-loop ${record.parent}`,
      };
    case 'failed':
    case 'stalled':
      return {
        outcome: 'error',
        fatal: true,
        message: `Stage "${stage.name}" (${epic}) stopped (${summary.reason}): ${summary.message}`,
      };
    default: {
      // It ended (terminal, done) short of its condition: the user decides.
      const path = await askStageQuestion(
        ports.repo,
        record.parent,
        stage.name,
        `Stage "${stage.name}": ${why}.`,
      );
      return {
        outcome: 'needs_human',
        hint: NAMED_IN_MESSAGE,
        message: `Stage "${stage.name}" ended short: ${why}. Answer again, accept or stop in ${path}, then run: ralph-loop resume ${record.parent}`,
      };
    }
  }
}
