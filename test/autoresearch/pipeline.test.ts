// Pipelines of loops without processes: the definition's schema, the bead graph setup makes (and does not
// make twice), the role:loop executor over fake loop setup and nested runs, and resume's three answers.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePipeline, stageLoopOptions } from '../../src/autoresearch/pipeline-schema.js';
import { resumePipeline } from '../../src/autoresearch/pipeline-resume.js';
import { setupPipeline } from '../../src/autoresearch/pipeline-setup.js';
import { createStageExecutor, type StagePorts } from '../../src/autoresearch/pipeline-stage.js';
import {
  pipelinePath,
  pipelineQuestionPath,
  readPipeline,
  type PipelineRecord,
} from '../../src/autoresearch/pipeline-state.js';
import type { LoopSetupOptions } from '../../src/autoresearch/setup-options.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import type { Bead, BeadStore } from '../../src/beads/types.js';
import { AppError, ConfigError, ExitCode } from '../../src/infra/errors.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import type { ExecutionRequest, RunSummary } from '../../src/loop/types.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempRepo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-pipeline-unit-'));
  dirs.push(dir);
  return dir;
}

const SPEC = {
  name: 'spec',
  type: 'loop',
  program: 'Write the spec.',
  metric: { type: 'soft', rubric_path: 'rubric.md', artifact_path: 'spec.md' },
  target: 8,
} as const;
const QA = {
  name: 'qa',
  type: 'loop',
  program_file: 'programs/qa.md',
  metric: { type: 'hard', command: 'node score.mjs', score: { from: 'json', path: 'value' } },
  target: 20,
  caps: { plateau_threshold: 2 },
  scope: ['src/'],
  agents: { doer: 'scripted' },
  workspace: '.loops/qa',
} as const;

function definition(stages: readonly unknown[] = [SPEC, { name: 'build', type: 'epic', epic: 'bd-9' }, QA]) {
  return { name: 'limiter', stages };
}

function problemsOf(value: unknown): string[] {
  try {
    parsePipeline(value, 'pipeline.json');
  } catch (error) {
    if (error instanceof ConfigError) return error.message.split('\n');
    throw error;
  }
  return [];
}

describe('pipeline definition', () => {
  it('reads loop and epic stages with their defaults', () => {
    const parsed = parsePipeline(definition(), 'pipeline.json');
    expect(parsed.stages.map((s) => [s.name, s.type, s.passes_when])).toEqual([
      ['spec', 'loop', 'goal_reached'],
      ['build', 'epic', 'all_closed'],
      ['qa', 'loop', 'goal_reached'],
    ]);
  });

  it('names each field that is wrong', () => {
    expect(problemsOf(definition([SPEC, { ...SPEC }]))).toEqual([
      'pipeline.json: stages[1].name: the name "spec" is already taken by another stage',
      "pipeline.json: stages[1].workspace: the workspace .autoresearch-spec is already another stage's: every loop keeps its own",
    ]);
    const both = problemsOf(definition([{ ...QA, program: 'x' }]));
    expect(both).toEqual([
      'pipeline.json: stages[0].program: give the program either as "program" (text) or as "program_file", exactly one',
    ]);
    expect(problemsOf(definition([{ ...SPEC, colour: 'red' }]))[0]).toContain('stages[0]');
    expect(problemsOf(definition([{ ...SPEC, name: 'Spec Stage' }]))[0]).toContain('stages[0].name');
    expect(problemsOf(definition([{ ...SPEC, passes_when: 'all_closed' }]))[0]).toContain(
      'stages[0].passes_when',
    );
    expect(problemsOf(definition([{ ...SPEC, caps: { max_iterations: -1 } }]))[0]).toContain(
      'stages[0].caps.max_iterations',
    );
    expect(problemsOf(definition([]))[0]).toContain('stages');
  });

  it("turns a loop stage into forge-pack loop's options", () => {
    const parsed = parsePipeline(definition([QA]), 'pipeline.json');
    const stage = parsed.stages[0];
    if (stage?.type !== 'loop') throw new Error('expected a loop stage');
    const options = stageLoopOptions('limiter', stage, 'Raise it.', { doer: 'scripted' });
    expect(options.population).toBeUndefined();
    const three = parsePipeline(definition([{ ...QA, population: 3 }]), 'pipeline.json').stages[0];
    if (three?.type !== 'loop') throw new Error('expected a loop stage');
    expect(stageLoopOptions('limiter', three, 'Raise it.', {}).population).toBe(3);
    expect(() => parsePipeline(definition([{ ...QA, population: 9 }]), 'pipeline.json')).toThrow(
      /population: expected an integer from 1 to 8/,
    );
    expect(options).toMatchObject({
      subject: 'limiter qa',
      program: 'Raise it.',
      metric: { type: 'hard', command: 'node score.mjs', score: { from: 'json', path: 'value' } },
      target: 20,
      plateau: 2,
      scope: ['src/'],
      agents: { doer: 'scripted' },
      workspace: '.loops/qa',
    });
  });
});

async function epicWithBead(store: BeadStore): Promise<{ epic: string; bead: string }> {
  const epic = await store.create({ title: 'build plan', type: 'epic' });
  const bead = await store.create({ title: 'implement', parent: epic.id });
  return { epic: epic.id, bead: bead.id };
}

async function setUp(stages?: readonly unknown[]) {
  const repo = await tempRepo();
  const store = createMemoryBeadStore();
  const build = await epicWithBead(store);
  const raw = definition(
    stages ?? [
      SPEC,
      { name: 'build', type: 'epic', epic: build.epic },
      { ...QA, program: 'Raise it.', program_file: undefined },
    ],
  );
  const input = { raw, definition: parsePipeline(raw, 'p.json'), programs: { spec: 'Write.', qa: 'Raise.' } };
  return { repo, store, build, raw, input };
}

describe('forge-pack pipeline setup', () => {
  it('makes a parent epic and one role:loop bead per stage, each blocked by the one before', async () => {
    const { repo, store, input } = await setUp();
    const result = await setupPipeline(repo, input, store);
    expect(result.created).toBe(true);
    const parent = await store.show(result.parent);
    expect(parent.issue_type).toBe('epic');
    const stages = result.stages.map((s) => s.bead);
    expect(stages).toHaveLength(3);
    for (const [index, id] of stages.entries()) {
      const bead = await store.show(id);
      expect(bead.labels).toContain('role:loop');
      expect(bead.parent).toBe(result.parent);
      const blockers = bead.dependencies.filter((d) => d.dependency_type === 'blocks').map((d) => d.id);
      expect(blockers).toEqual(index === 0 ? [] : [stages[index - 1]]);
    }
    expect((await store.ready(result.parent)).map((b) => b.id)).toEqual([stages[0]]);
  });

  it('creates nothing twice: on a rerun, nor after a crash that lost the record', async () => {
    const { repo, store, input } = await setUp();
    const first = await setupPipeline(repo, input, store);
    const again = await setupPipeline(repo, input, store);
    expect(again.created).toBe(false);
    expect(again.stages.map((s) => s.bead)).toEqual(first.stages.map((s) => s.bead));
    // A run that died after creating the beads but before its record was written.
    await rm(pipelinePath(repo, first.parent));
    const recovered = await setupPipeline(repo, input, store);
    expect(recovered.parent).toBe(first.parent);
    expect(recovered.stages.map((s) => s.bead)).toEqual(first.stages.map((s) => s.bead));
    expect(await store.children(first.parent)).toHaveLength(3);
    expect(await store.list({ label: 'pipeline', all: true })).toHaveLength(1);
  });

  it('refuses a changed definition under the same name, and an epic stage without its epic', async () => {
    const { repo, store, input, raw } = await setUp();
    await setupPipeline(repo, input, store);
    const changed = { ...input, programs: { ...input.programs, qa: 'Lower it.' } };
    await expect(setupPipeline(repo, changed, store)).rejects.toThrow(
      /already exists .* with another definition/,
    );
    const missing = definition([{ name: 'build', type: 'epic', epic: 'bd-none' }]);
    await expect(
      setupPipeline(
        repo,
        {
          raw: { ...missing, name: 'other' },
          definition: parsePipeline({ ...missing, name: 'other' }, 'p'),
          programs: {},
        },
        store,
      ),
    ).rejects.toThrow('Stage "build": the epic bd-none is not in the bead store.');
    expect(raw.name).toBe('limiter');
  });
});

// ---- the stage executor ----

interface Harness {
  repo: string;
  store: BeadStore;
  record: PipelineRecord;
  ports: StagePorts;
  setups: LoopSetupOptions[];
  runs: string[];
  /** What the spec's readiness gate answers. */
  gate: boolean;
  /** What each nested run does to the stage's workspace before it returns. */
  onRun: (epic: string) => Promise<RunSummary['reason']>;
  execute(stage: string): ReturnType<ReturnType<typeof createStageExecutor>['execute']>;
}

const terminal = (reason: string, best: number) =>
  JSON.stringify({
    type: 'terminal',
    reason,
    iter: 3,
    final_score: best,
    best_score: best,
    decision: 'keep',
  });

async function harness(stages?: readonly unknown[]): Promise<Harness> {
  const { repo, store, input } = await setUp(stages);
  const setup = await setupPipeline(repo, input, store);
  const record = await readPipeline(repo, setup.parent);
  if (record === undefined) throw new Error('no record');
  let loops = 0;
  const h: Harness = {
    repo,
    store,
    record,
    setups: [],
    runs: [],
    gate: false,
    onRun: async () => 'terminal',
    ports: {
      repo,
      files: diskLoopFiles(),
      store,
      loopAgents: (own) => own,
      specGatePasses: async () => h.gate,
      setupLoop: async (options) => {
        h.setups.push(options);
        loops += 1;
        const epic = `loop-${loops}`;
        const ws = join(repo, options.workspace ?? '');
        await mkdir(ws, { recursive: true });
        await rm(join(ws, 'terminal-signal.json'), { force: true });
        await writeFile(join(ws, 'config.json'), JSON.stringify({ epic_id: epic }));
        return { epic };
      },
      runEpic: async (epic) => {
        h.runs.push(epic);
        const reason = await h.onRun(epic);
        return { reason, message: `ran ${epic}`, beadsRun: 1, beadsClosed: 1, costUsd: 0 };
      },
    },
    async execute(name) {
      const fresh = await readPipeline(repo, setup.parent);
      const bead = await store.show(fresh?.stages[name]?.bead ?? '');
      return createStageExecutor(h.ports).execute(request(setup.parent, bead));
    },
  };
  return h;
}

function request(epicId: string, bead: Bead, signal = new AbortController().signal): ExecutionRequest {
  return {
    bead,
    epicId,
    role: 'loop',
    agentSpec: 'scripted',
    agentFromLabel: false,
    attempt: 1,
    cwd: '/',
    signal,
    timeoutMs: 1000,
    transcriptPath: '/dev/null',
  };
}

describe('the role:loop stage executor', () => {
  it('creates the stage loop, runs it, and passes when it reached its goal', async () => {
    const h = await harness();
    h.onRun = async () => {
      await writeFile(
        join(h.repo, '.autoresearch-spec', 'terminal-signal.json'),
        terminal('goal_reached', 9),
      );
      return 'terminal';
    };
    const result = await h.execute('spec');
    expect(result).toMatchObject({ outcome: 'ok', closeReason: 'stage spec: goal reached (best score 9)' });
    expect(h.setups.map((s) => [s.subject, s.workspace, s.program])).toEqual([
      ['limiter spec', '.autoresearch-spec', 'Write.'],
    ]);
    expect(h.runs).toEqual(['loop-1']);
    expect((await readPipeline(h.repo, h.record.parent))?.stages.spec?.epic).toBe('loop-1');
  });

  it('reuses a loop created by a run that died before recording it', async () => {
    const h = await harness();
    await mkdir(join(h.repo, '.autoresearch-spec'), { recursive: true });
    await writeFile(
      join(h.repo, '.autoresearch-spec', 'config.json'),
      JSON.stringify({ epic_id: 'loop-old' }),
    );
    await h.execute('spec');
    expect(h.setups).toEqual([]);
    expect(h.runs).toEqual(['loop-old']);
    expect((await readPipeline(h.repo, h.record.parent))?.stages.spec?.epic).toBe('loop-old');
  });

  it('asks again/accept/stop when the loop plateaus, and runs nothing while the question waits', async () => {
    const h = await harness();
    h.onRun = async () => {
      await writeFile(join(h.repo, '.autoresearch-spec', 'terminal-signal.json'), terminal('plateau', 6));
      return 'terminal';
    };
    const first = await h.execute('spec');
    expect(first.outcome).toBe('needs_human');
    expect(first.message).toContain('ended on plateau');
    const question = await readFile(pipelineQuestionPath(h.repo, h.record.parent), 'utf8');
    expect(question).toContain('Stage: spec');
    const second = await h.execute('spec');
    expect(second.outcome).toBe('needs_human');
    expect(h.runs).toHaveLength(1);
  });

  it('a loop that ended short passes when its stage asks only that it end', async () => {
    const h = await harness([{ ...SPEC, passes_when: 'ended' }]);
    h.onRun = async () => {
      await writeFile(
        join(h.repo, '.autoresearch-spec', 'terminal-signal.json'),
        terminal('iteration_cap', 6),
      );
      return 'terminal';
    };
    expect((await h.execute('spec')).outcome).toBe('ok');
  });

  it('a spec_ready stage passes only when the spec passes its gate, whatever the loop scored', async () => {
    const h = await harness([{ ...SPEC, spec: 'limiter', passes_when: 'spec_ready' }]);
    h.onRun = async () => {
      await writeFile(
        join(h.repo, '.autoresearch-spec', 'terminal-signal.json'),
        terminal('goal_reached', 9),
      );
      return 'terminal';
    };
    const shut = await h.execute('spec');
    expect(shut.outcome).toBe('needs_human');
    expect(shut.message).toContain('does not pass its readiness gate');
    expect(h.setups[0]?.spec).toBe('limiter');
    await rm(pipelineQuestionPath(h.repo, h.record.parent));
    h.gate = true;
    expect(await h.execute('spec')).toMatchObject({ outcome: 'ok' });
    expect(problemsOf(definition([{ ...SPEC, passes_when: 'spec_ready' }]))).toEqual([
      'pipeline.json: stages[0].spec: passes_when "spec_ready" needs the spec the loop serves: "spec": "<slug>"',
    ]);
  });

  it('again retires the loop for a new one, accept passes as it ended, stop ends the pipeline', async () => {
    const h = await harness();
    h.onRun = async () => {
      await writeFile(join(h.repo, '.autoresearch-spec', 'terminal-signal.json'), terminal('plateau', 6));
      return 'terminal';
    };
    await h.execute('spec');
    const unanswered = resumePipeline(h.repo, h.record, undefined);
    await expect(unanswered).rejects.toMatchObject({ exitCode: ExitCode.needsHuman });
    await expect(resumePipeline(h.repo, h.record, 'maybe')).rejects.toThrow(/none of again, accept or stop/);

    const again = await resumePipeline(
      h.repo,
      (await readPipeline(h.repo, h.record.parent)) ?? h.record,
      'again',
    );
    expect(again).toMatchObject({ stage: 'spec', answer: 'again', cycle: 2 });
    await h.execute('spec');
    expect(h.setups.map((s) => s.force)).toEqual([false, true]);
    expect(h.runs).toEqual(['loop-1', 'loop-2']);
    const afterAgain = await readPipeline(h.repo, h.record.parent);
    expect(afterAgain?.stages.spec).toMatchObject({ epic: 'loop-2', retired: ['loop-1'], cycle: 2 });

    await resumePipeline(h.repo, afterAgain ?? h.record, 'accept');
    const accepted = await h.execute('spec');
    expect(accepted).toMatchObject({ outcome: 'ok', closeReason: 'stage spec: accepted as it ended' });
    expect(h.runs).toHaveLength(2);

    await h.execute('build'); // the build epic's bead is open: the stage asks
    await resumePipeline(h.repo, (await readPipeline(h.repo, h.record.parent)) ?? h.record, 'stop');
    const stopped = await h.execute('build');
    expect(stopped.outcome).toBe('needs_human');
    expect(stopped.message).toContain('stopped at stage "build"');
    expect(h.runs).toHaveLength(3);
    await expect(resumePipeline(h.repo, h.record, undefined)).rejects.toBeInstanceOf(AppError);
  });

  it('an epic stage passes when every bead of its epic is closed', async () => {
    const h = await harness();
    const build = h.record.definition.stages[1];
    if (build?.type !== 'epic') throw new Error('expected the epic stage');
    h.onRun = async (epic) => {
      for (const bead of await h.store.children(epic)) await h.store.close(bead.id, 'done');
      return 'done';
    };
    const result = await h.execute('build');
    expect(result).toMatchObject({
      outcome: 'ok',
      closeReason: `stage build: all 1 beads of ${build.epic} closed`,
    });
    expect(h.setups).toEqual([]);
  });

  it('passes a failure inside the stage on as fatal, and an interrupt as aborted', async () => {
    const h = await harness();
    h.onRun = async () => 'failed';
    expect(await h.execute('spec')).toMatchObject({ outcome: 'error', fatal: true });
    h.onRun = async () => 'interrupted';
    expect((await h.execute('spec')).outcome).toBe('aborted');
    h.onRun = async () => 'stopped';
    const stopped = await h.execute('spec');
    expect(stopped.outcome).toBe('needs_human');
    expect(stopped.message).toContain('was stopped by ralph-loop stop');
    // The message names the command that goes on: the run adds no hint of its own.
    expect(stopped.hint).toBe('');
    h.onRun = async () => 'needs_human';
    const asked = await h.execute('spec');
    expect(asked.outcome).toBe('needs_human');
    expect(asked.message).toContain('waits for a human');
    expect(asked.hint).toBe('');
  });

  it('refuses a role:loop bead that is no stage of a pipeline', async () => {
    const h = await harness();
    const stray = await h.store.create({ title: 'stray', labels: ['role:loop'] });
    const result = await createStageExecutor(h.ports).execute(
      request('bd-other', await h.store.show(stray.id)),
    );
    expect(result).toMatchObject({ outcome: 'error', fatal: true });
  });
});
