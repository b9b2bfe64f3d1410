// Re-entry after a loop that serves a spec: its retrospective records the outcome in the spec's run
// state, the spec goes back to the readiness gate, and `spec status` / specGatePasses say what it needs.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LoopConfigFile } from '../../src/autoresearch/config.js';
import { specGatePasses } from '../../src/autoresearch/spec-state/file.js';
import {
  DIMENSIONS,
  newRunState,
  runStateSchema,
  type RunState,
} from '../../src/autoresearch/spec-state/schema.js';
import { createForgePackProgram } from '../../src/cli/forge-pack.js';
import { runProgram } from '../../src/cli/main.js';
import { createLoopFixture, type LoopFixture } from '../support/loop-fixture.js';

const FILE = 'specs/rate-limiter/run-state.json';
const AT = '2026-11-23T18:00:00.000Z';
const stamp = { by: 'agent', at: AT };

/** A spec that had gone all the way to beads review before a loop was pointed at it. */
function finishedSpec(): RunState {
  return {
    ...newRunState('rate-limiter'),
    prompt: 'rich',
    phase: 'beads_review',
    planning: 'PLANNING_READY',
    handoff: 'ELIGIBLE',
    evidence: [{ id: 'E1', source: 'src/x.ts', summary: 's', ...stamp }],
    claims: [{ id: 'C1', text: 'c', evidence: ['E1'], ...stamp }],
    reducer: 'reducer',
    gaps: [],
    scores: Object.fromEntries(DIMENSIONS.map((d) => [d, 90])),
    reviews: [{ reviewer: 'red-team', material: 0, minor: 0, ...stamp }],
    beads_epic: 'bd-9k2',
  };
}

async function loopThatReachedItsGoal(overrides: Partial<LoopConfigFile>): Promise<LoopFixture> {
  const f = await createLoopFixture({ target: 20, ...overrides }, { guarded: false });
  const run = (role: string, iter: number) =>
    f.executors[role]!.execute(f.request({ labels: [`role:${role}`, `iter:${iter}`] }));
  expect((await run('judge', 0)).outcome).toBe('ok');
  await run('arbiter', 0);
  f.full.behaviour = async () => {
    await f.repo.write('src/value.txt', '25\n');
    return { outcome: 'ok', message: 'edited', finalText: 'HYPOTHESIS: 25 is better' };
  };
  await run('doer', 1);
  await run('judge', 1);
  await run('arbiter', 1);
  f.full.behaviour = async () => ({ outcome: 'ok', message: 'retrospective' });
  return f;
}

async function writeState(dir: string, state: RunState | string): Promise<void> {
  await mkdir(join(dir, 'specs/rate-limiter'), { recursive: true });
  await writeFile(join(dir, FILE), typeof state === 'string' ? state : `${JSON.stringify(state)}\n`);
}

async function forge(
  dir: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { text: '', write: (t: string) => void (out.text += t) };
  const err = { text: '', write: (t: string) => void (err.text += t) };
  const code = await runProgram(
    'forge-pack',
    createForgePackProgram,
    ['node', 'forge-pack', '-C', dir, ...args],
    {
      cwd: dir,
      env: { NO_COLOR: '1' },
      stdout: out,
      stderr: err,
      stderrIsTTY: false,
    },
  );
  return { code, stdout: out.text, stderr: err.text };
}

describe('re-entry after a loop that serves a spec', () => {
  it("records the loop's outcome and puts the spec back at the readiness gate", async () => {
    const f = await loopThatReachedItsGoal({ spec: 'rate-limiter' });
    await writeState(f.repo.dir, finishedSpec());

    const result = await f.executors.retrospective!.execute(f.request({ labels: ['role:retrospective'] }));
    expect(result.outcome).toBe('ok');
    expect(result.closeReason).toContain(`${FILE}: back at the readiness gate (goal_reached)`);

    const state = runStateSchema.parse(JSON.parse(await readFile(join(f.repo.dir, FILE), 'utf8')));
    expect(state).toMatchObject({
      phase: 'readiness_gate',
      planning: 'SPECULATIVE_DRAFT',
      handoff: 'WITHHELD',
    });
    expect(state.loop).toMatchObject({
      strategy: 'autoresearch',
      epic: f.epicId,
      final_score: 25,
      terminal_reason: 'goal_reached',
    });
    expect(state.history.at(-1)).toMatchObject({ kind: 'transition', by: `retrospective ${f.epicId}` });

    // The gate decides again: it passes on these scores, and a blocker shuts it whatever the loop scored.
    expect(await specGatePasses(f.repo.dir, 'rate-limiter')).toBe(true);
    const status = await forge(f.repo.dir, 'spec', 'status', 'rate-limiter');
    expect(status.stderr).toContain(
      `last loop: ${f.epicId} (autoresearch) ended goal_reached, final score 25`,
    );
    expect(status.stderr).toContain('next: forge-pack spec advance rate-limiter --to adversarial_review');
    expect(
      (await forge(f.repo.dir, 'spec', 'record', 'rate-limiter', '--blocker', 'lock timeout unspecified'))
        .code,
    ).toBe(0);
    expect(await specGatePasses(f.repo.dir, 'rate-limiter')).toBe(false);
    const blocked = await forge(f.repo.dir, '--json', 'spec', 'status', 'rate-limiter');
    expect(JSON.parse(blocked.stdout)).toMatchObject({
      gate: { passes: false, needs: [{ rule: 'blockers-beat-scores' }] },
      next: { target: 'adversarial_review', needs: [{ rule: 'blockers-beat-scores' }] },
    });
  });

  it('leaves a run state alone when the loop serves no spec', async () => {
    const f = await loopThatReachedItsGoal({});
    const before = `${JSON.stringify(finishedSpec())}\n`;
    await writeState(f.repo.dir, before);
    const result = await f.executors.retrospective!.execute(f.request({ labels: ['role:retrospective'] }));
    expect(result.closeReason).toBe('retrospective ran; no retrospective.md');
    expect(await readFile(join(f.repo.dir, FILE), 'utf8')).toBe(before);
  });

  it('reports a corrupt run state in the close reason and leaves the file as it was', async () => {
    const f = await loopThatReachedItsGoal({ spec: 'rate-limiter' });
    await writeState(f.repo.dir, '{"version": 1,');
    const result = await f.executors.retrospective!.execute(f.request({ labels: ['role:retrospective'] }));
    expect(result.outcome).toBe('ok');
    expect(result.closeReason).toContain(`${FILE} not updated: ${FILE}: not valid JSON`);
    expect(await readFile(join(f.repo.dir, FILE), 'utf8')).toBe('{"version": 1,');
    expect(await specGatePasses(f.repo.dir, 'other-spec')).toBe(false);
  });

  it('refuses a loop config naming a spec that is not a slug', async () => {
    await expect(createLoopFixture({ spec: '../etc' }, { guarded: false })).rejects.toThrow(
      /spec: expected a slug/,
    );
  });
});
