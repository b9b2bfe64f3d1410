// `forge-pack spec` as a user runs the built CLI: a run state started, a move refused with exit 4 and
// the rule's name, the file unchanged, and `status --json` saying what the next move needs.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, runCli } from '../support/cli.js';

describe('forge-pack spec (built CLI)', () => {
  beforeAll(assertBuilt);

  it('starts a run state, refuses a skipped phase with exit 4, and reports what the next move needs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-spec-e2e-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const forge = (...args: string[]) => runCli('forge-pack', ['-C', dir, ...args], { cwd: dir });

    const started = await forge('spec', 'record', 'parser', '--prompt', 'sparse', '--by', 'intake');
    expect(started.exitCode, started.stderr).toBe(0);
    expect(started.stderr).toContain('parser: recorded prompt sparse.');
    const file = join(dir, 'specs/parser/run-state.json');
    const before = await readFile(file, 'utf8');

    const skipped = await forge(
      'spec',
      'advance',
      'parser',
      '--to',
      'draft',
      '--by',
      'me',
      '--reason',
      'hurry',
    );
    expect(skipped.exitCode).toBe(4);
    expect(skipped.stderr).toContain('one-phase-at-a-time: draft is not the phase after intake');
    expect(await readFile(file, 'utf8')).toBe(before);

    const moved = await forge(
      'spec',
      'advance',
      'parser',
      '--to',
      'evidence_fan_out',
      '--by',
      'me',
      '--reason',
      'classified',
    );
    expect(moved.exitCode, moved.stderr).toBe(0);
    const status = await forge('--json', 'spec', 'status', 'parser');
    expect(status.exitCode, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      phase: 'evidence_fan_out',
      planning: 'DISCOVERY',
      next: { target: 'reduce_merge', needs: [{ rule: 'evidence-fan-out-collects' }] },
      gate: { passes: false },
    });
  });

  it('loses no record when several processes record at once (the lock serialises them)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-spec-e2e-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const forge = (...args: string[]) => runCli('forge-pack', ['-C', dir, ...args], { cwd: dir });
    expect((await forge('spec', 'record', 'parser', '--prompt', 'rich')).exitCode).toBe(0);
    const runs = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        forge('spec', 'record', 'parser', '--blocker', `reason ${i}`, '--by', `agent-${i}`),
      ),
    );
    for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
    const state = JSON.parse(await readFile(join(dir, 'specs/parser/run-state.json'), 'utf8')) as {
      blockers: { id: string; by: string }[];
      history: unknown[];
    };
    expect(state.blockers.map((b) => b.id).sort()).toEqual(['B1', 'B2', 'B3', 'B4']);
    expect(new Set(state.blockers.map((b) => b.by))).toEqual(
      new Set(['agent-1', 'agent-2', 'agent-3', 'agent-4']),
    );
    expect(state.history).toHaveLength(5);
  });
});
