// Two population cases as a user runs them on the scripted agent: a soft metric (a read-only judge with
// a rubric) where each candidate's judge sees only its own candidate's artifact, and a cost cap that
// the candidates of one iteration cross together while none of them would alone.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { retrospectiveRules, scriptedLoopRepo, stampNext } from '../support/loop-script.js';

interface Line {
  iter: number;
  kind?: string;
  decision: string;
  candidate?: number;
  score?: number | null;
  score_after?: number | null;
  cost_usd?: number;
  reason?: string;
}

const VALUE_METRIC = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) }));
`;

/** What candidate i writes to its src/value.txt: a token no other candidate's tree holds. */
const token = (candidate: number) => `artifact-of-candidate-${candidate}`;

/**
 * A judge step that fails the judge's run unless what it was given (its working directory, read
 * whole) holds its own candidate's artifact, no other candidate's, and no ledger.
 */
const ownArtifactOnly = (candidate: number, k: number) => ({
  run: [
    process.execPath,
    '-e',
    `const fs=require('fs'),path=require('path');
const own=${JSON.stringify(token(candidate))};
const others=${JSON.stringify(Array.from({ length: k }, (_, i) => token(i + 1)).filter((t) => t !== token(candidate)))};
const seen=[];
const walk=(d)=>{for(const e of fs.readdirSync(d,{withFileTypes:true})){const p=path.join(d,e.name);
if(e.isDirectory())walk(p);else seen.push([p,fs.readFileSync(p,'utf8')]);}};
walk(process.cwd());
const value=fs.readFileSync('src/value.txt','utf8').trim();
if(value!==own){console.error('judged '+value+', not '+own);process.exit(1);}
for(const [p,text] of seen){
if(/research-log|ledger/.test(p)){console.error('the ledger is in the judge\\'s copy: '+p);process.exit(1);}
for(const t of others)if(text.includes(t)){console.error(p+' holds '+t);process.exit(1);}}`,
  ],
});

const softRules = (scores: readonly number[]) => [
  { when: { role: 'judge', iter: 0 }, steps: [{ say: '{"score": 5, "findings": []}' }] },
  ...scores.flatMap((score, index) => {
    const candidate = index + 1;
    return [
      {
        when: { role: 'doer', iter: 1, labels: [`candidate:${candidate}`] },
        steps: [
          { write: 'src/value.txt', content: `${token(candidate)}\n` },
          { say: `HYPOTHESIS: ${token(candidate)} reads better` },
        ],
      },
      {
        when: { role: 'judge', iter: 1, labels: [`candidate:${candidate}`] },
        steps: [
          ownArtifactOnly(candidate, scores.length),
          { say: `{"score": ${score}, "findings": ["candidate ${candidate}"]}` },
        ],
      },
    ];
  }),
];

beforeAll(assertBuilt);

describe('a soft-metric population (K=3, scripted agent)', () => {
  it('judges each candidate on its own artifact alone, keeps the best and records all three', async () => {
    const repo = await scriptedLoopRepo({
      'src/value.txt': 'the start\n',
      'rubric.md': 'Score the file from 0 to 10.\n',
    });
    await repo.rules([...softRules([6, 8, 7]), ...retrospectiveRules(repo.dir), stampNext(repo.dir)]);
    const stamped = await repo.forge([
      'loop',
      'value',
      '--program',
      'Make src/value.txt read better.',
      '--rubric',
      'rubric.md',
      '--artifact',
      'src/value.txt',
      '--population',
      '3',
      '--max-iterations',
      '1',
      '--agents',
      'doer=scripted,judge=scripted,strategist=scripted',
    ]);
    expect(stamped.exitCode, stamped.stderr).toBe(0);
    const epic = stamped.stdout.trim();
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);

    const lines = await repo.ledger<Line>();
    expect(
      lines.filter((l) => l.kind === undefined).map((l) => [l.iter, l.decision, l.score_after, l.candidate]),
    ).toEqual([
      [0, 'baseline', 5, undefined],
      [1, 'keep', 8, 2],
    ]);
    expect(
      lines.filter((l) => l.kind === 'candidate').map((c) => [c.iter, c.candidate, c.score, c.decision]),
    ).toEqual([
      [1, 1, 6, 'lost'],
      [1, 2, 8, 'kept'],
      [1, 3, 7, 'lost'],
    ]);
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe(`${token(2)}\n`);
    expect(await repo.git('worktree', 'list')).not.toContain('candidates');
    expect(await repo.git('status', '--porcelain')).toBe('');

    // What each candidate's judge was told: no candidate's artifact, hypothesis or the ledger, and it
    // ran outside the repository (the run step above checked what its directory held).
    const logs = join(repo.dir, '.autoresearch', 'logs');
    const starts = await Promise.all(
      (await readdir(logs)).map(async (name) => {
        const first = (await readFile(join(logs, name), 'utf8')).split('\n')[0]!;
        return JSON.parse(first) as { cwd: string; mode: string; prompt: string };
      }),
    );
    const judges = starts.filter((s) => s.prompt.startsWith('# Judge, iteration 1:'));
    expect(judges).toHaveLength(3);
    for (const judge of judges) {
      expect(judge.mode).toBe('read-only');
      expect(judge.cwd.startsWith(repo.dir)).toBe(false);
      expect(judge.prompt).not.toMatch(/artifact-of-candidate|HYPOTHESIS|research-log|Angle \d/);
    }
  });
});

describe('a population under a cost cap (K=3, scripted agent)', () => {
  it('counts every candidate’s spend: three of $0.40 cross a $1 cap in one iteration and the loop stops there', async () => {
    const repo = await scriptedLoopRepo({ 'src/value.txt': '10\n', 'metric/score.mjs': VALUE_METRIC });
    const spender = (candidate: number, value: string) => ({
      when: { role: 'doer', iter: 1, labels: [`candidate:${candidate}`] },
      steps: [
        { write: 'src/value.txt', content: `${value}\n` },
        { usage: { costUsd: 0.4 } },
        { say: `HYPOTHESIS: ${value} is better` },
      ],
    });
    await repo.rules([
      spender(1, '12'),
      spender(2, '18'),
      spender(3, '15'),
      ...retrospectiveRules(repo.dir),
      stampNext(repo.dir),
    ]);
    const stamped = await repo.forge([
      'loop',
      'value',
      '--program',
      'Make the value in src/value.txt as large as possible.',
      '--metric-command',
      'node metric/score.mjs',
      '--score',
      'json:value',
      '--direction',
      'maximize',
      '--scope',
      'src/',
      '--population',
      '3',
      '--max-iterations',
      '5',
      '--max-cost',
      '1',
      '--agents',
      'doer=scripted,judge=scripted,strategist=scripted',
    ]);
    expect(stamped.exitCode, stamped.stderr).toBe(0);
    const epic = stamped.stdout.trim();
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);

    const lines = await repo.ledger<Line>();
    const iterations = lines.filter((l) => l.kind === undefined);
    expect(iterations.map((l) => [l.iter, l.decision, l.score_after, l.candidate])).toEqual([
      [0, 'baseline', 10, undefined],
      [1, 'keep', 18, 2],
    ]);
    // The iteration's cost is all three candidates', each candidate's line its own.
    expect(iterations[1]!.cost_usd).toBeCloseTo(1.2, 9);
    expect(lines.filter((l) => l.kind === 'candidate').map((c) => c.cost_usd)).toEqual([0.4, 0.4, 0.4]);

    const terminal = JSON.parse(
      await readFile(join(repo.dir, '.autoresearch', 'terminal-signal.json'), 'utf8'),
    ) as { reason: string; iter: number };
    expect(terminal).toMatchObject({ reason: 'budget', iter: 1 });
    const spend = JSON.parse(await readFile(join(repo.dir, '.autoresearch', 'spend.json'), 'utf8')) as {
      cost_usd: number;
      by_role: Record<string, { cost_usd: number; runs: number }>;
    };
    expect(spend.cost_usd).toBeCloseTo(1.2, 9);
    expect(spend.by_role['doer']).toMatchObject({ runs: 3 });
    expect(spend.by_role['doer']!.cost_usd).toBeCloseTo(1.2, 9);

    const status = await repo.ralph(['status', epic]);
    expect(status.stdout).toContain('spend     $1.20');
    const json = JSON.parse((await repo.ralph(['status', epic, '--json'])).stdout) as { cost_usd: number };
    expect(json.cost_usd).toBeCloseTo(1.2, 9);

    // A rerun starts no agent: the budget is spent.
    const again = await repo.ralph([epic, '--agent', 'scripted']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(await readFile(join(repo.dir, '.autoresearch', 'spend.json'), 'utf8'))).toEqual(spend);
  });
});
