// Pipelines of loops as a user runs them: forge-pack pipeline, one ralph-loop <parent> through a soft
// stage, an epic stage with a test gate and a hard stage; a plateau's question and each answer; kill -9.
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN } from '../support/cli.js';
import {
  pipelineRepo,
  threeStageRules,
  threeStages,
  valueDoer,
  type PipelineRepo,
} from '../support/pipeline-script.js';

beforeAll(assertBuilt);

interface StageJson {
  name: string;
  phase: string;
  bead_status: string;
  epic: string | null;
  cycle: number;
  scores: { baseline: number | null; best: number | null; last: number | null } | null;
  beads: { done: number; total: number } | null;
}

interface PipelineJson {
  phase: string;
  runner: { live: boolean; pid: number; bead: string | null } | null;
  stages: StageJson[];
}

async function status(repo: PipelineRepo, parent: string): Promise<PipelineJson> {
  const shown = await repo.ralph(['status', parent, '--json']);
  expect(shown.exitCode, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout) as PipelineJson;
}

/** The iteration lines of a stage's ledger (events such as a tamper record left out). */
async function ledger(repo: PipelineRepo, ws: string): Promise<{ iter: number; decision: string }[]> {
  const text = await readFile(join(repo.dir, ws, 'research-log.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { iter?: number; decision: string })
    .filter((line): line is { iter: number; decision: string } => line.iter !== undefined);
}

/** The kinds of the ledger's event lines (tamper, settings changes, …). */
async function ledgerEvents(repo: PipelineRepo, ws: string): Promise<string[]> {
  const text = await readFile(join(repo.dir, ws, 'research-log.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { kind?: string })
    .flatMap((line) => (line.kind === undefined ? [] : [line.kind]));
}

describe('pipeline of loops, end to end on the embedded store', () => {
  it('runs a soft stage, an epic stage with a test gate and a hard stage from one ralph-loop', async () => {
    const repo = await pipelineRepo();
    const build = await repo.createBuildEpic();
    await repo.rules(threeStageRules(repo.dir, [valueDoer(1, '25')]));
    const parent = await repo.createPipeline(threeStages(build));
    // Creating it again creates nothing.
    expect(await repo.createPipeline(threeStages(build))).toBe(parent);
    const children = await repo.forge(['beads', 'children', parent, '--json']);
    expect((JSON.parse(children.stdout) as unknown[]).length).toBe(3);

    const run = await repo.ralphProcess([parent, '--backoff', '0']);
    expect(run.exitCode, run.stderr).toBe(0);
    const shown = await status(repo, parent);
    expect(shown.phase).toBe('done');
    expect(shown.stages.map((s) => [s.name, s.phase])).toEqual([
      ['spec', 'passed'],
      ['build', 'passed'],
      ['qa', 'passed'],
    ]);
    expect(shown.stages[0]?.scores).toMatchObject({ baseline: 4, best: 9 });
    expect(shown.stages[1]?.beads).toEqual({ done: 1, total: 1 });
    expect(shown.stages[2]?.scores).toMatchObject({ baseline: 10, best: 25 });
    // The gate held the build bead until it was right; each loop kept its own ledger.
    expect((await readFile(join(repo.dir, 'lib', 'impl.txt'), 'utf8')).trim()).toBe('right');
    expect((await ledger(repo, '.autoresearch-spec')).map((l) => l.decision)).toEqual(['baseline', 'keep']);
    expect((await ledger(repo, '.autoresearch-qa')).map((l) => l.decision)).toEqual(['baseline', 'keep']);
    const text = await repo.ralph(['status', parent]);
    expect(text.stdout).toContain('qa [loop]');
    expect(text.stdout).toContain('score 10 → 25 → 25 (target 20)');
  });

  it('stops on a plateau with a question; again runs a new cycle, accept lets it pass', async () => {
    const repo = await pipelineRepo();
    const build = await repo.createBuildEpic();
    // Every qa doer makes it worse: the stage plateaus below its target.
    await repo.rules(threeStageRules(repo.dir, [valueDoer(1, '5'), valueDoer(2, '6')]));
    const def = threeStages(build);
    const parent = await repo.createPipeline({ ...def, stages: def.stages.slice(1) });

    const first = await repo.ralph([parent, '--backoff', '0']);
    expect(first.exitCode, first.stderr).toBe(6);
    expect(first.stderr).toContain('ended short');
    let shown = await status(repo, parent);
    expect(shown.phase).toBe('waiting_for_human');
    const firstLoop = shown.stages[1]?.epic;
    expect(shown.stages[1]?.phase).toBe('terminated (plateau)');

    // Unanswered: resume refuses and changes nothing.
    const early = await repo.ralph(['resume', parent]);
    expect(early.exitCode).toBe(6);

    const again = await repo.ralph(['resume', parent, '--answer', 'again']);
    expect(again.exitCode, again.stderr).toBe(6); // the new cycle plateaus too
    shown = await status(repo, parent);
    expect(shown.stages[1]?.cycle).toBe(2);
    expect(shown.stages[1]?.epic).not.toBe(firstLoop);
    expect(shown.stages[1]?.phase).toBe('terminated (plateau)');

    const accept = await repo.ralph(['resume', parent, '--answer', 'accept']);
    expect(accept.exitCode, accept.stderr).toBe(0);
    shown = await status(repo, parent);
    expect(shown.phase).toBe('done');
    expect(shown.stages.map((s) => s.phase)).toEqual(['passed', 'accepted']);
  });

  it('stop ends the pipeline at the stage that plateaued', async () => {
    const repo = await pipelineRepo();
    await repo.rules(threeStageRules(repo.dir, [valueDoer(1, '5'), valueDoer(2, '6')]));
    const def = threeStages('unused');
    const qa = def.stages[2];
    const parent = await repo.createPipeline({ name: 'qa-only', stages: [qa] });
    expect((await repo.ralph([parent, '--backoff', '0'])).exitCode).toBe(6);
    const stop = await repo.ralph(['resume', parent, '--answer', 'stop']);
    expect(stop.exitCode, stop.stderr).toBe(0);
    expect((await status(repo, parent)).phase).toBe('stopped');
    const rerun = await repo.ralph([parent, '--backoff', '0']);
    expect(rerun.exitCode).toBe(6);
    expect(rerun.stderr).toContain('stopped at stage "qa" by your answer');
  });

  // Each stage's working bead writes a marker, then hangs until the run is killed.
  const hang = (marker: string) => [
    { run: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`] },
    { sleep_ms: 60000 },
  ];
  const slowRules: Record<string, (dir: string, marker: string) => unknown[]> = {
    spec: (dir, marker) => [
      { when: { role: 'doer', titleIncludes: 'spec-doc' }, steps: hang(marker) },
      ...threeStageRules(dir, [valueDoer(1, '25')]),
    ],
    build: (dir, marker) => [
      { when: { titleIncludes: 'implement' }, steps: hang(marker) },
      ...threeStageRules(dir, [valueDoer(1, '25')]),
    ],
    qa: (dir, marker) => threeStageRules(dir, [valueDoer(1, '25', hang(marker))]),
  };

  /** Runs the pipeline until the hanging bead writes `marker`, then kills the runner with SIGKILL. */
  async function runUntilKilled(repo: PipelineRepo, parent: string, marker: string): Promise<void> {
    const child = execa(
      process.execPath,
      [BIN['ralph-loop'], '--store', 'embedded', parent, '--backoff', '0'],
      {
        cwd: repo.dir,
        env: repo.env,
        reject: false,
      },
    );
    let exited: string | undefined;
    void child.then((result) => (exited = `exit ${result.exitCode ?? result.signal}: ${result.stderr}`));
    let started = false;
    for (let i = 0; i < 600 && !started && exited === undefined; i += 1) {
      started = (await readFile(marker, 'utf8').catch(() => undefined)) !== undefined;
      if (!started) await new Promise((r) => setTimeout(r, 100));
    }
    expect(started, `no ${marker}; the runner: ${exited ?? 'still running'}`).toBe(true);
    // While it runs, status names its runner.
    const live = await status(repo, parent);
    expect(live.runner).toMatchObject({ live: true, pid: child.pid });
    expect((await repo.ralph(['status', parent])).stdout).toContain(
      `in progress: running (pid ${child.pid} on `,
    );
    child.kill('SIGKILL');
    await child;
  }

  // One pipeline, killed inside each stage in turn: each rerun recovers from the kill before it, passes
  // that stage and is killed in the next; the last runs to the end. (Three pipelines, one kill each,
  // ran each stage up to three times for the same recoveries.)
  it('survives kill -9 inside the spec, then the build, then the qa stage: the reruns lose and duplicate nothing', async () => {
    const repo = await pipelineRepo();
    const build = await repo.createBuildEpic();
    const parent = await repo.createPipeline(threeStages(build));
    const passed = async () => (await status(repo, parent)).stages.map((s) => s.phase);

    for (const [i, stage] of ['spec', 'build', 'qa'].entries()) {
      const marker = join(repo.base, `started-${stage}`);
      await repo.rules(slowRules[stage]?.(repo.dir, marker) ?? []);
      await runUntilKilled(repo, parent, marker);
      // The stages before this one passed in this run, after the kill in the one before.
      expect((await passed()).slice(0, i), stage).toEqual(Array(i).fill('passed'));
      // Killed, the pipeline is in progress with no runner: status says so, and what goes on with it.
      const killed = await status(repo, parent);
      expect(killed.phase).toBe('in_progress');
      expect(killed.runner).toMatchObject({ live: false, bead: expect.stringMatching(/^bd-/) });
      const text = (await repo.ralph(['status', parent])).stdout;
      expect(text).toContain(`in progress, not running: ralph-loop ${parent} goes on with it`);
      expect(text).toContain(`(a stale lock of pid ${killed.runner?.pid} on `);
    }

    await repo.rules(threeStageRules(repo.dir, [valueDoer(1, '25')]));
    const rerun = await repo.ralph([parent, '--backoff', '0']);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    const shown = await status(repo, parent);
    expect(shown.stages.map((s) => s.phase)).toEqual(['passed', 'passed', 'passed']);
    expect(shown.runner).toBeNull();
    // One loop per stage, one line per iteration.
    const loops = JSON.parse(await readFile(join(repo.dir, '.forge', 'loops.json'), 'utf8')) as object;
    expect(Object.keys(loops)).toHaveLength(2);
    expect((await ledger(repo, '.autoresearch-qa')).map((l) => [l.iter, l.decision])).toEqual([
      [0, 'baseline'],
      [1, 'keep'],
    ]);
    expect((await ledger(repo, '.autoresearch-spec')).map((l) => l.iter)).toEqual([0, 1]);
    // What each killed runner wrote before it died (the iteration's state) is its own, not tamper.
    for (const ws of ['.autoresearch-spec', '.autoresearch-qa']) {
      expect(await ledgerEvents(repo, ws), ws).not.toContain('tamper_between_runs');
    }
    expect(shown.stages[1]?.beads).toEqual({ done: 1, total: 1 });
    const stages = await repo.forge(['beads', 'children', parent, '--json']);
    expect((JSON.parse(stages.stdout) as unknown[]).length).toBe(3);
  });
});
