// A population loop (`forge-pack loop --population 3`) as a user runs it, on the scripted agent: each
// iteration's three candidates work in their own worktrees, are judged by the hard metric one by one,
// and the arbiter keeps the best if it beats the best kept score.
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  retrospectiveRules,
  scriptedLoopRepo,
  stampNext,
  type ScriptedLoopRepo,
} from '../support/loop-script.js';

const VALUE_METRIC = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) }));
`;

/** Candidate `candidate` of iteration `iter` writes `value` to its own src/value.txt. */
const candidateDoer = (iter: number, candidate: number, value: string, extra: unknown[] = []) => ({
  when: { role: 'doer', iter, labels: [`candidate:${candidate}`] },
  steps: [
    { write: 'src/value.txt', content: `${value}\n` },
    ...extra,
    { say: `HYPOTHESIS: ${value} is better` },
  ],
});

interface Line {
  iter: number;
  kind?: string;
  decision: string;
  candidate?: number;
  score?: number | null;
  score_after?: number | null;
  iteration_decision?: string;
  angle?: string;
  reason?: string;
}

async function populationLoop(repo: ScriptedLoopRepo, iterations: number): Promise<string> {
  const stamped = await repo.forge([
    'loop',
    'value',
    '--program',
    'Make the value in src/value.txt as large as possible.\n\nIdeas:\n- try a round number\n- try a prime\n- try the largest value you can justify\n',
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
    String(iterations),
    '--agents',
    'doer=scripted,judge=scripted,strategist=scripted',
  ]);
  expect(stamped.exitCode, stamped.stderr).toBe(0);
  return stamped.stdout.trim();
}

async function newRepo(): Promise<ScriptedLoopRepo> {
  return scriptedLoopRepo({ 'src/value.txt': '10\n', 'metric/score.mjs': VALUE_METRIC });
}

beforeAll(assertBuilt);

describe('a population loop (K=3, scripted agent)', () => {
  it('keeps the best candidate, records all three, then reverts all when none beats the best', async () => {
    const repo = await newRepo();
    await repo.rules([
      candidateDoer(1, 1, '12'),
      candidateDoer(1, 2, '18'),
      candidateDoer(1, 3, '15'),
      candidateDoer(2, 1, '11'),
      candidateDoer(2, 2, '17'),
      candidateDoer(2, 3, '18'),
      ...retrospectiveRules(repo.dir),
      stampNext(repo.dir, '## Angle 1\nsmaller steps\n## Angle 2\nbigger steps\n## Angle 3\nprimes'),
    ]);
    const epic = await populationLoop(repo, 2);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);

    const lines = await repo.ledger<Line>();
    const iterations = lines.filter((l) => l.kind === undefined);
    expect(iterations.map((l) => [l.iter, l.decision, l.score_after, l.candidate])).toEqual([
      [0, 'baseline', 10, undefined],
      [1, 'keep', 18, 2],
      // A tie with the best kept score (18) is not an improvement: nothing is kept.
      [2, 'revert', 18, 3],
    ]);
    const candidates = lines.filter((l) => l.kind === 'candidate');
    expect(candidates.map((c) => [c.iter, c.candidate, c.score, c.decision, c.iteration_decision])).toEqual([
      [1, 1, 12, 'lost', 'keep'],
      [1, 2, 18, 'kept', 'keep'],
      [1, 3, 15, 'lost', 'keep'],
      [2, 1, 11, 'reverted', 'revert'],
      [2, 2, 17, 'reverted', 'revert'],
      [2, 3, 18, 'reverted', 'revert'],
    ]);
    // Distinct angles: the program's listed ideas first, then the strategist's sections.
    expect(candidates.filter((c) => c.iter === 1).map((c) => c.angle)).toEqual([
      'Angle 1 of 3: try a round number',
      'Angle 2 of 3: try a prime',
      'Angle 3 of 3: try the largest value you can justify',
    ]);
    expect(candidates.filter((c) => c.iter === 2).map((c) => c.angle)).toEqual([
      'Angle 1 of 3: smaller steps',
      'Angle 2 of 3: bigger steps',
      'Angle 3 of 3: primes',
    ]);
    // The kept candidate is the loop's tree; no candidate worktree or branch is left behind.
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('18\n');
    expect(await repo.git('worktree', 'list')).not.toContain('candidates');
    expect(await repo.git('branch', '--list', 'forge/*')).toBe('');
    expect(await repo.git('status', '--porcelain')).toBe('');

    // The strategist that set iteration 2's angles was told which of iteration 1's angles won and lost.
    const children = JSON.parse((await repo.beads(['children', epic, '--json'])).stdout) as {
      id: string;
      title: string;
    }[];
    const strategist2 = children.find((bead) => bead.title.startsWith('strategist-2:'));
    const shown = JSON.parse((await repo.beads(['show', strategist2!.id, '--json'])).stdout) as {
      description: string;
    }[];
    expect(shown[0]!.description).toContain(
      '- Iteration 1, candidate 2: Angle 2 of 3: try a prime; score 18; won (kept).',
    );
    expect(shown[0]!.description).toContain('candidate 1: Angle 1 of 3: try a round number; score 12; lost');

    const status = await repo.ralph(['status', epic]);
    expect(status.stdout).toContain('iter 1: c2 kept 18 (c1 12, c3 15)');
    expect(status.stdout).toContain('iter 2: c3 reverted 18 (c1 11, c2 17)');
    const json = JSON.parse((await repo.ralph(['status', epic, '--json'])).stdout) as {
      candidates: { iter: number; candidate: number; decision: string }[];
    };
    expect(json.candidates.map((c) => [c.iter, c.candidate, c.decision])).toEqual(
      candidates.map((c) => [c.iter, c.candidate, c.decision]),
    );
  });

  it('catches a candidate that changes the loop’s tree, another candidate’s worktree or the ledger', async () => {
    const repo = await newRepo();
    const node = process.execPath;
    const ledger = join(repo.dir, '.autoresearch', 'research-log.jsonl');
    await repo.rules([
      candidateDoer(1, 1, '12'),
      // Candidate 2 writes the loop's own src/value.txt and candidate 1's worktree through absolute paths.
      candidateDoer(1, 2, '30', [
        {
          run: [
            node,
            '-e',
            `const fs=require('fs');const cp=require('child_process');
fs.writeFileSync(${JSON.stringify(join(repo.dir, 'src', 'value.txt'))},'99\\n');
const wt=cp.execFileSync('git',['worktree','list','--porcelain'],{encoding:'utf8'}).split('\\n').filter(l=>l.startsWith('worktree ')&&l.endsWith('/c1')).map(l=>l.slice(9))[0];
fs.writeFileSync(wt+'/src/value.txt','98\\n');`,
          ],
        },
      ]),
      // Candidate 3 appends a forged line to the ledger.
      candidateDoer(1, 3, '14', [
        {
          run: [node, '-e', `require('fs').appendFileSync(${JSON.stringify(ledger)}, '{"forged":true}\\n')`],
        },
      ]),
      ...retrospectiveRules(repo.dir),
      stampNext(repo.dir),
    ]);
    const epic = await populationLoop(repo, 1);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = await repo.ledger<Line>();
    expect(JSON.stringify(lines)).not.toContain('forged');
    const candidates = lines.filter((l) => l.kind === 'candidate');
    expect(candidates.map((c) => [c.candidate, c.score, c.decision])).toEqual([
      [1, 12, 'kept'],
      [2, null, 'lost'],
      [3, null, 'lost'],
    ]);
    expect(candidates[1]!.reason).toMatch(/^tamper: .*the loop’s tree \(changed src\/value\.txt\)/);
    expect(candidates[1]!.reason).toMatch(/^tamper: .*candidate 1’s worktree \(changed src\/value\.txt\)/);
    expect(candidates[2]!.reason).toMatch(/tamper.*research-log\.jsonl/);
    // Candidate 1 was judged on its own 12, not on the 98 candidate 2 wrote into its worktree.
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('12\n');
  });

  it('removes what a candidate planted among its worktree’s ignored files before its metric runs', async () => {
    // The metric multiplies by an ignored local boost file when there is one.
    const repo = await scriptedLoopRepo({
      '.gitignore': '.forge/\n.beads/\n.autoresearch/\nboost.json\n',
      'src/value.txt': '10\n',
      'metric/score.mjs': `import { existsSync, readFileSync } from 'node:fs';
const boost = existsSync('boost.json') ? JSON.parse(readFileSync('boost.json', 'utf8')).factor : 1;
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) * boost }));
`,
    });
    await repo.rules([
      candidateDoer(1, 1, '12', [{ write: 'boost.json', content: '{"factor": 100}\n' }]),
      candidateDoer(1, 2, '18'),
      candidateDoer(1, 3, '15'),
      ...retrospectiveRules(repo.dir),
      stampNext(repo.dir),
    ]);
    const epic = await populationLoop(repo, 1);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/removed the ignored files the doer made or changed \(\/.*\/boost\.json\)/);
    const candidates = (await repo.ledger<Line>()).filter((l) => l.kind === 'candidate');
    expect(candidates.map((c) => [c.candidate, c.score, c.decision])).toEqual([
      [1, 12, 'lost'],
      [2, 18, 'kept'],
      [3, 15, 'lost'],
    ]);
  });

  it('removes a test file the measured code made among a candidate’s ignored files, and that run gives no score', async () => {
    // Code the metric runs (here the metric itself, for candidate 1's value) leaves a test file where
    // git ignores it: every later run of `node --test` there would count it.
    const repo = await scriptedLoopRepo({
      '.gitignore': '.forge/\n.beads/\n.autoresearch/\ndist/\n',
      'src/value.txt': '10\n',
      'metric/score.mjs': `import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
const value = Number(readFileSync('src/value.txt', 'utf8').trim());
if (value === 12) {
  mkdirSync('dist', { recursive: true });
  writeFileSync('dist/extra.test.js', "require('node:test')('extra', () => {});\\n");
}
console.log(JSON.stringify({ value }));
`,
    });
    await repo.rules([
      candidateDoer(1, 1, '12'),
      candidateDoer(1, 2, '18'),
      candidateDoer(1, 3, '15'),
      ...retrospectiveRules(repo.dir),
      stampNext(repo.dir),
    ]);
    const epic = await populationLoop(repo, 1);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    const candidates = (await repo.ledger<Line>()).filter((l) => l.kind === 'candidate');
    expect(candidates.map((c) => [c.candidate, c.score ?? null, c.decision])).toEqual([
      [1, null, 'lost'],
      [2, 18, 'kept'],
      [3, 15, 'lost'],
    ]);
    expect(candidates[0]!.reason).toContain('made dist/extra.test.js while the metric command ran it');
    const left = await execa('find', [join(repo.dir, '.git'), '-name', 'extra.test.js']);
    expect(left.stdout).toBe('');
  });

  it('kill -9 of the runner mid-population, then a rerun, loses and duplicates nothing', async () => {
    const repo = await newRepo();
    const marker = join(repo.base, 'killed-once');
    // Candidate 2's doer writes its value, then kills the runner the first time only.
    const killOnce = {
      run: [
        process.execPath,
        '-e',
        `const fs=require('fs');if(!fs.existsSync(${JSON.stringify(marker)})){fs.writeFileSync(${JSON.stringify(marker)},'');process.kill(process.ppid,'SIGKILL');}`,
      ],
    };
    await repo.rules([
      candidateDoer(1, 1, '12'),
      candidateDoer(1, 2, '18', [killOnce]),
      candidateDoer(1, 3, '15'),
      ...retrospectiveRules(repo.dir),
      stampNext(repo.dir),
    ]);
    const epic = await populationLoop(repo, 1);
    const killed = await repo.ralphProcess([epic, '--agent', 'scripted']);
    expect(killed.exitCode).not.toBe(0);
    // The crashed candidate's worktree is still there for the rerun to reuse.
    expect(await repo.git('worktree', 'list')).toContain('c2');
    const rerun = await repo.ralph([epic, '--agent', 'scripted']);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    const lines = await repo.ledger<Line>();
    expect(lines.filter((l) => l.kind === undefined).map((l) => [l.iter, l.decision, l.candidate])).toEqual([
      [0, 'baseline', undefined],
      [1, 'keep', 2],
    ]);
    expect(
      lines.filter((l) => l.kind === 'candidate').map((c) => [c.candidate, c.score, c.decision]),
    ).toEqual([
      [1, 12, 'lost'],
      [2, 18, 'kept'],
      [3, 15, 'lost'],
    ]);
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('18\n');
    expect(await repo.git('worktree', 'list')).not.toContain('candidates');
    expect(await repo.git('branch', '--list', 'forge/*')).toBe('');
  });
});
