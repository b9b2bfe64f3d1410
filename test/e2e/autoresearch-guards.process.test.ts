// Guards and tracks as a user runs them: forge-pack loop --guard/--track, ralph-loop with the scripted
// agent on the embedded store, the ledger, status and the strategist's next bead.
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, type CliResult } from '../support/cli.js';
import { doer, retrospectiveRules, scriptedLoopRepo, stampNext } from '../support/loop-script.js';

interface LedgerRow {
  iter: number;
  decision: string;
  score_after: number | null;
  failed_guard?: {
    name: string;
    kind: string;
    exit_code: number | null;
    reason: string;
    output_tail: string;
  };
  tracks?: Record<string, number | null>;
}

interface GuardRepo {
  dir: string;
  base: string;
  ralph(args: string[]): Promise<CliResult>;
  forge(args: string[]): Promise<CliResult>;
  ledger(): Promise<LedgerRow[]>;
  rules(rules: unknown[]): Promise<void>;
}

// The metric notes every run outside the repository, so a test can tell whether the judge ran.
const METRIC = `import { appendFileSync, readFileSync } from 'node:fs';
const value = Number(readFileSync('src/value.txt', 'utf8').trim());
appendFileSync(process.env.HOME + '/metric-calls.log', value + '\\n');
console.log(JSON.stringify({ value }));
`;
// The project's "test suite": the value must stay at most 20.
const CHECK = `import { readFileSync } from 'node:fs';
const value = Number(readFileSync('src/value.txt', 'utf8').trim());
if (value > 20) { console.log('ok 1 - reads the value'); console.log('not ok 2 - value stays at most 20 (got ' + value + ')'); process.exit(1); }
console.log('ok 1 - reads the value');
`;
// A second figure: "bundle size", 100 bytes per unit of value.
const SIZE = `import { readFileSync } from 'node:fs';
console.log('size: ' + Number(readFileSync('src/value.txt', 'utf8').trim()) * 100);
`;

async function guardRepo(): Promise<GuardRepo> {
  const repo = await scriptedLoopRepo(
    {
      'src/value.txt': '10\n',
      'metric/score.mjs': METRIC,
      'checks/test.mjs': CHECK,
      'checks/size.mjs': SIZE,
    },
    [],
    'forge-guards-',
  );
  return { ...repo, ledger: () => repo.ledger() };
}

const LOOP = [
  'loop',
  'value',
  '--program',
  'Make the value in src/value.txt as large as possible.',
  '--metric-command',
  'node metric/score.mjs',
  '--score',
  'json:value',
  '--scope',
  'src/',
  '--agents',
  'doer=scripted,judge=scripted,strategist=scripted',
];

interface BeadRow {
  id: string;
  title: string;
  description?: string;
}

async function beads(repo: GuardRepo): Promise<BeadRow[]> {
  const listed = await repo.forge(['beads', 'list', '-a', '--json']);
  expect(listed.exitCode, listed.stderr).toBe(0);
  const rows = JSON.parse(listed.stdout) as BeadRow[];
  const shown = await repo.forge(['beads', 'show', ...rows.map((b) => b.id), '--json']);
  return JSON.parse(shown.stdout) as BeadRow[];
}

async function metricCalls(repo: GuardRepo): Promise<string[]> {
  return (await readFile(join(repo.base, 'metric-calls.log'), 'utf8')).trim().split('\n');
}

beforeAll(assertBuilt);

describe('guards on keeps, end to end', () => {
  it('reverts a faster doer that breaks a guarded test as guard_failed, unjudged, and tells the strategist', async () => {
    const repo = await guardRepo();
    await repo.rules([
      doer(1, '30'),
      doer(2, '15'),
      ...retrospectiveRules(repo.dir, '# Notes'),
      stampNext(repo.dir),
    ]);
    const created = await repo.forge([
      ...LOOP,
      '--max-iterations',
      '2',
      '--guard',
      'tests=node checks/test.mjs',
      '--track',
      'size=node checks/size.mjs',
      '--track-score',
      'size=regex:size: (\\d+)',
    ]);
    expect(created.exitCode, created.stderr).toBe(0);
    const epic = created.stdout.trim();
    const config = JSON.parse(await readFile(join(repo.dir, '.autoresearch', 'config.json'), 'utf8')) as {
      guards: unknown;
      tracks: unknown;
    };
    expect(config.guards).toEqual([{ name: 'tests', command: 'node checks/test.mjs' }]);
    expect(config.tracks).toEqual([
      { name: 'size', command: 'node checks/size.mjs', score: { from: 'regex', pattern: 'size: (\\d+)' } },
    ]);

    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    const ledger = await repo.ledger();
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'guard_failed', null],
      [2, 'keep', 15],
    ]);
    expect(ledger[0]?.tracks).toEqual({ size: 1000 });
    expect(ledger[1]?.failed_guard).toMatchObject({ name: 'tests', kind: 'guard', exit_code: 1 });
    expect(ledger[1]?.failed_guard?.output_tail).toContain('not ok 2 - value stays at most 20 (got 30)');
    expect(ledger[2]?.tracks).toEqual({ size: 1500 });
    // The judge never ran for iteration 1: the metric ran for the baseline and iteration 2 only.
    expect(await metricCalls(repo)).toEqual(['10', '15']);
    await expect(access(join(repo.dir, '.autoresearch', 'judge-output-1.json'))).rejects.toThrow();
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('15\n');

    const all = await beads(repo);
    const strategist2 = all.find((b) => b.title.startsWith('strategist-2:'));
    expect(strategist2?.description).toContain(
      'Iteration 1 was reverted without judging: guard tests exited with code 1',
    );
    expect(strategist2?.description).toContain('not ok 2 - value stays at most 20 (got 30)');
    // The judge learns nothing of the guards.
    for (const judge of all.filter((b) => b.title.startsWith('judge-'))) {
      expect(judge.description ?? '').not.toMatch(/guard|checks\/|tests/);
    }

    const status = await repo.ralph(['status', epic, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({
      iterations: { guard_failed: 1, kept: 1 },
      tracks: [{ name: 'size', baseline: 1000, last: 1500, last_iter: 2 }],
    });
    const text = (await repo.ralph(['status', epic])).stdout;
    expect(text).toContain('track     size 1000 (baseline) → 1500 (last, iter 2)');
    expect(text).toContain('guard failed');
  });

  it('reverts an iteration whose track breaks --track-max, naming the track', async () => {
    const repo = await guardRepo();
    await repo.rules([doer(1, '20'), ...retrospectiveRules(repo.dir, '# Notes'), stampNext(repo.dir)]);
    const created = await repo.forge([
      ...LOOP,
      '--max-iterations',
      '1',
      '--track',
      'size=node checks/size.mjs',
      '--track-score',
      'size=regex:size: (\\d+)',
      '--track-max',
      'size=+50%',
    ]);
    expect(created.exitCode, created.stderr).toBe(0);
    const run = await repo.ralph([created.stdout.trim(), '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    const ledger = await repo.ledger();
    expect(ledger.map((l) => [l.iter, l.decision])).toEqual([
      [0, 'baseline'],
      [1, 'guard_failed'],
    ]);
    expect(ledger[1]).toMatchObject({
      tracks: { size: 2000 },
      failed_guard: {
        name: 'size',
        kind: 'track',
        reason: 'track size is 2000, above its maximum 1500 (+50% of the baseline 1000)',
      },
    });
    expect(await metricCalls(repo)).toEqual(['10']);
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('10\n');
  });

  it('refuses a loop whose guard fails on the baseline, creating nothing', async () => {
    const repo = await guardRepo();
    await writeFile(join(repo.dir, 'src', 'value.txt'), '25\n');
    const refused = await repo.forge([...LOOP, '--guard', 'node checks/test.mjs']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('guard node-test.mjs exited with code 1 on the baseline');
    expect(refused.stderr).toContain('not ok 2 - value stays at most 20 (got 25)');
    expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack
    await expect(access(join(repo.dir, '.autoresearch', 'config.json'))).rejects.toThrow();
    const listed = await repo.forge(['beads', 'list', '-a', '--json']);
    expect(JSON.parse(listed.stdout || '[]')).toEqual([]);
  });

  it('refuses a malformed threshold naming the field and the flag', async () => {
    const repo = await guardRepo();
    const refused = await repo.forge([
      ...LOOP,
      '--track',
      'size=node checks/size.mjs',
      '--track-max',
      'size=lots',
    ]);
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toContain('tracks[0].max: expected a number (absolute) or a percentage');
    expect(refused.stderr).toContain('(from --track-max)');
  });
});
