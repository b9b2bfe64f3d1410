// `forge-pack spec status|record|advance`: a spec walked through all twelve phases, refusals with the
// rule's name and exit 4, the history, corrupt files left untouched, and concurrent writers.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DIMENSIONS, runStateSchema, type RunState } from '../../src/autoresearch/spec-state/schema.js';
import { createForgePackProgram } from '../../src/cli/forge-pack.js';
import { runProgram } from '../../src/cli/main.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function project(): Promise<{ dir: string; forge: (...args: string[]) => Promise<Run> }> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-spec-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return {
    dir,
    async forge(...args) {
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
    },
  };
}

const FILE = 'specs/rate-limiter/run-state.json';

async function readState(dir: string): Promise<RunState> {
  return runStateSchema.parse(JSON.parse(await readFile(join(dir, FILE), 'utf8')));
}

function ok(run: Run): Run {
  expect(run, run.stderr).toMatchObject({ code: 0 });
  return run;
}

const scores = (value: number) => DIMENSIONS.flatMap((d) => ['--score', `${d}=${value}`]);

/** Records and advances a spec from intake to the readiness gate, as the skills do. */
async function toReadinessGate(forge: (...args: string[]) => Promise<Run>, dir: string): Promise<void> {
  await mkdir(join(dir, 'specs/rate-limiter'), { recursive: true });
  await writeFile(join(dir, 'specs/rate-limiter/spec.md'), '# Rate limiter\n');
  const go = (to: string) =>
    forge('spec', 'advance', 'rate-limiter', '--to', to, '--by', 'tester', '--reason', `on to ${to}`);
  ok(await forge('spec', 'record', 'rate-limiter', '--prompt', 'sparse', '--by', 'intake'));
  ok(await go('evidence_fan_out'));
  ok(
    await forge(
      'spec',
      'record',
      'rate-limiter',
      '--evidence',
      'store locks with O_EXCL',
      '--source',
      'src/lock.ts',
    ),
  );
  ok(await go('reduce_merge'));
  ok(
    await forge(
      'spec',
      'record',
      'rate-limiter',
      '--reducer',
      'reducer',
      '--claim',
      'writes serialise',
      '--from',
      'E1',
    ),
  );
  ok(await go('gap_analysis'));
  ok(await forge('spec', 'record', 'rate-limiter', '--gap', 'errors_and_edge_cases: lock timeout'));
  ok(await go('user_input'));
  ok(await forge('spec', 'record', 'rate-limiter', '--question-round', '3'));
  ok(await go('SPECULATIVE_DRAFT'));
  const refused = await go('verify');
  expect(refused.code).toBe(4);
  expect(refused.stderr).toContain('draft-recorded');
  ok(await forge('spec', 'record', 'rate-limiter', '--draft', 'specs/rate-limiter/spec.md'));
  ok(await go('verify'));
  ok(await forge('spec', 'record', 'rate-limiter', ...scores(85)));
  ok(await go('readiness_gate'));
}

describe('forge-pack spec', () => {
  it('walks a spec through all twelve phases, every move in the history with who and why', async () => {
    const { dir, forge } = await project();
    await toReadinessGate(forge, dir);
    const go = (to: string) =>
      forge('spec', 'advance', 'rate-limiter', '--to', to, '--by', 'lead', '--reason', 'ready');
    ok(await go('ADVERSARIAL_REVIEW'));
    ok(
      await forge(
        'spec',
        'record',
        'rate-limiter',
        '--review',
        'red-team',
        '--material',
        '0',
        '--minor',
        '2',
      ),
    );
    ok(await go('PLANNING_READY'));
    ok(await go('ELIGIBLE'));
    ok(await go('beads_generation'));
    ok(await forge('spec', 'record', 'rate-limiter', '--beads-epic', 'bd-9k2'));
    ok(await go('beads_review'));

    const state = await readState(dir);
    expect(state).toMatchObject({ phase: 'beads_review', planning: 'PLANNING_READY', handoff: 'ELIGIBLE' });
    expect(state.draft).toMatchObject({
      path: 'specs/rate-limiter/spec.md',
      sha256: createHash('sha256').update('# Rate limiter\n').digest('hex'),
    });
    const moves = state.history.filter((h) => h.kind === 'transition');
    expect(moves.map((m) => m.to.phase)).toEqual([
      'evidence_fan_out',
      'reduce_merge',
      'gap_analysis',
      'user_input',
      'draft',
      'verify',
      'readiness_gate',
      'adversarial_review',
      'plan_handoff',
      'plan_handoff',
      'beads_generation',
      'beads_review',
    ]);
    expect(moves.at(-1)).toMatchObject({ by: 'lead', reason: 'ready' });

    const status = ok(await forge('--json', 'spec', 'status', 'rate-limiter'));
    expect(JSON.parse(status.stdout)).toMatchObject({
      phase: 'beads_review',
      gate: { passes: true, needs: [] },
      next: { target: null },
    });
  });

  it('refuses an illegal move with exit 4 and the rule that forbids it, changing nothing', async () => {
    const { dir, forge } = await project();
    await toReadinessGate(forge, dir);
    ok(await forge('spec', 'record', 'rate-limiter', ...scores(100), '--blocker', 'no retry limit'));
    const before = await readFile(join(dir, FILE), 'utf8');

    const refused = await forge(
      'spec',
      'advance',
      'rate-limiter',
      '--to',
      'adversarial_review',
      '--by',
      'a',
      '--reason',
      'scores are 100',
    );
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('blockers-beat-scores: open blockers: B1 (no retry limit)');
    expect(await readFile(join(dir, FILE), 'utf8')).toBe(before);

    const json = await forge(
      '--json',
      'spec',
      'advance',
      'rate-limiter',
      '--to',
      'ELIGIBLE',
      '--by',
      'a',
      '--reason',
      'r',
    );
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      violations: expect.arrayContaining([
        { rule: 'handoff-only-from-planning-ready', message: expect.any(String) },
      ]),
    });

    const status = ok(await forge('spec', 'status', 'rate-limiter'));
    expect(status.stderr).toContain('next: adversarial_review, which needs:');
    expect(status.stderr).toContain('- blockers-beat-scores');

    ok(
      await forge(
        'spec',
        'record',
        'rate-limiter',
        '--resolve',
        'B1',
        '--reason',
        'three attempts, then fail',
      ),
    );
    ok(
      await forge(
        'spec',
        'advance',
        'rate-limiter',
        '--to',
        'adversarial_review',
        '--by',
        'a',
        '--reason',
        'resolved',
      ),
    );
  });

  it('refuses a record a rule forbids (a second reducer) with exit 4, and bad flags with exit 2', async () => {
    const { dir, forge } = await project();
    ok(await forge('spec', 'record', 'rate-limiter', '--prompt', 'rich', '--reducer', 'one'));
    const second = await forge('spec', 'record', 'rate-limiter', '--reducer', 'two');
    expect(second.code).toBe(4);
    expect(second.stderr).toContain('Refused by single-reducer');
    expect((await forge('spec', 'record', 'rate-limiter', '--score', 'vibes=90')).code).toBe(2);
    expect((await forge('spec', 'record', 'rate-limiter', '--evidence', 'no source')).code).toBe(2);
    expect((await forge('spec', 'advance', 'rate-limiter', '--to', 'draft', '--by', 'a')).code).toBe(2);
    expect(
      (await forge('spec', 'advance', 'rate-limiter', '--to', 'nowhere', '--by', 'a', '--reason', 'r')).code,
    ).toBe(2);
    expect((await forge('spec', 'status', '../etc')).code).toBe(2);
    expect((await forge('spec', 'record', 'rate-limiter', '--draft', 'missing.md')).code).toBe(2);
    expect((await forge('spec', 'record', 'rate-limiter', '--draft', '../outside.md')).code).toBe(2);
    const state = await readState(dir);
    expect(state.draft).toBeNull();
  });

  it('says how to start a spec that has no run state, and creates nothing for it', async () => {
    const { dir, forge } = await project();
    const run = await forge('spec', 'advance', 'nothing-here', '--to', 'draft', '--by', 'a', '--reason', 'r');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('specs/nothing-here/run-state.json does not exist');
    expect(run.stderr).toContain('forge-pack spec record nothing-here --prompt');
    await expect(readFile(join(dir, 'specs/nothing-here/run-state.json'), 'utf8')).rejects.toThrow();
  });

  it('names the file and field of a corrupt run state, and never overwrites it', async () => {
    const { dir, forge } = await project();
    await mkdir(join(dir, 'specs/rate-limiter'), { recursive: true });
    await writeFile(join(dir, FILE), '{"version": 1, "slug": "rate-limiter", ');
    const torn = await forge('spec', 'record', 'rate-limiter', '--prompt', 'rich');
    expect(torn.code).toBe(4);
    expect(torn.stderr).toContain('specs/rate-limiter/run-state.json: not valid JSON');
    expect(await readFile(join(dir, FILE), 'utf8')).toBe('{"version": 1, "slug": "rate-limiter", ');

    ok(await forge('spec', 'record', 'other', '--prompt', 'rich'));
    const good = JSON.parse(await readFile(join(dir, 'specs/other/run-state.json'), 'utf8')) as RunState;
    const edited = `${JSON.stringify({ ...good, slug: 'rate-limiter', planning: 'PLANNING_READY' })}\n`;
    await writeFile(join(dir, FILE), edited);
    const status = await forge('spec', 'status', 'rate-limiter');
    expect(status.code).toBe(4);
    expect(status.stderr).toContain(
      'specs/rate-limiter/run-state.json: planning: phase intake belongs to DISCOVERY',
    );
    const advance = await forge(
      'spec',
      'advance',
      'rate-limiter',
      '--to',
      'evidence_fan_out',
      '--by',
      'a',
      '--reason',
      'r',
    );
    expect(advance.code).toBe(4);
    expect(await readFile(join(dir, FILE), 'utf8')).toBe(edited);
  });

  it('serialises concurrent records under the lock: none is lost', async () => {
    const { dir, forge } = await project();
    ok(await forge('spec', 'record', 'rate-limiter', '--prompt', 'rich'));
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        forge('spec', 'record', 'rate-limiter', '--evidence', `finding ${i}`, '--source', `src/${i}.ts`),
      ),
    );
    for (const run of runs) ok(run);
    const state = await readState(dir);
    expect(state.evidence.map((e) => e.id).sort()).toEqual(['E1', 'E2', 'E3', 'E4', 'E5', 'E6', 'E7', 'E8']);
    expect(new Set(state.evidence.map((e) => e.summary)).size).toBe(8);
  });
});
