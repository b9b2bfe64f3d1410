// One population iteration (K=2) with the real claude as both candidates' doer: each works in its own
// worktree (it writes through Bash in its own working directory), the hard metric judges each commit,
// and the arbiter keeps the better one.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { bash, text, type Rule } from '../support/model-server/index.js';
import { createAgentWorld, requireClaude } from './harness.js';
import { retrospectiveRule, strategistRule } from './scripted-roles.js';

beforeAll(async () => {
  await assertBuilt();
  await requireClaude();
});

const SCORE_SCRIPT = `import { readFileSync } from 'node:fs';
console.log('RESULT=' + Number(readFileSync('src/value.txt', 'utf8').trim()));
`;

/** Candidate `candidate` of iteration 1 writes `value` to src/value.txt where it runs, through Bash. */
function candidateRule(candidate: number, value: string): Rule {
  return {
    name: `candidate-${candidate}`,
    match: new RegExp(`# Doer, iteration 1:[\\s\\S]*Angle ${candidate} of 2:`),
    turns: [
      bash(`printf '%s\\n' ${value} > src/value.txt`, 'write the new value'),
      text(`Done.\nHYPOTHESIS: ${value} is better`),
    ],
  };
}

interface Line {
  iter: number;
  kind?: string;
  decision: string;
  candidate?: number;
  score?: number | null;
  score_after?: number | null;
}

describe('a population loop with the real claude', () => {
  it('K=2: both candidates work in their own worktrees, the better one is kept, both are recorded', async () => {
    const world = await createAgentWorld({
      files: { 'src/value.txt': '11\n', 'bench/score.mjs': SCORE_SCRIPT },
    });
    world.server.addRule(candidateRule(1, '30'));
    world.server.addRule(candidateRule(2, '45'));
    world.server.addRule(
      strategistRule((iter) => `## Angle 1\nsmall\n## Angle 2\nlarge (iteration ${iter})\n`),
    );
    world.server.addRule(retrospectiveRule('# Retrospective\n\nKept candidate 2.\n', '- none\n'));
    const created = await world.forge([
      'loop',
      'value booster',
      '--program',
      'Raise the value kept in src/value.txt.',
      '--metric-command',
      'node bench/score.mjs',
      '--score',
      'regex:RESULT=([0-9.]+)',
      '--scope',
      'src/',
      '--population',
      '2',
      '--max-iterations',
      '1',
    ]);
    expect(created.exitCode, created.stderr).toBe(0);
    const epic = created.stdout.trim();
    const run = await world.ralph(
      [epic, '--agent', 'claude', '--timeout', '120', '--max-attempts', '1'],
      280_000,
    );
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);

    const raw = await readFile(join(world.repo, '.autoresearch', 'research-log.jsonl'), 'utf8');
    const lines = raw
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Line);
    expect(
      lines.filter((l) => l.kind === undefined).map((l) => [l.iter, l.decision, l.score_after, l.candidate]),
      why,
    ).toEqual([
      [0, 'baseline', 11, undefined],
      [1, 'keep', 45, 2],
    ]);
    expect(
      lines.filter((l) => l.kind === 'candidate').map((c) => [c.candidate, c.score, c.decision]),
    ).toEqual([
      [1, 30, 'lost'],
      [2, 45, 'kept'],
    ]);
    expect(await readFile(join(world.repo, 'src', 'value.txt'), 'utf8')).toBe('45\n');
    expect(await world.git('worktree', 'list')).not.toContain('candidates');

    // Each candidate ran in a worktree of its own, and was never told the other's angle.
    const one = world.server.turnsOf('candidate-1');
    const two = world.server.turnsOf('candidate-2');
    expect(one.length, why).toBeGreaterThan(0);
    expect(two.length, why).toBeGreaterThan(0);
    for (const request of one) expect(request.prompt).not.toContain('Angle 2 of 2');
    for (const request of two) expect(request.prompt).not.toContain('Angle 1 of 2');
    const dirOf = (prompt: string) => /\S*forge\/candidates\/\S*\/iter-1\/c\d/.exec(prompt)?.[0];
    expect(dirOf(one[0]!.prompt), one[0]!.prompt.slice(0, 3000)).toMatch(/\/c1$/);
    expect(dirOf(two[0]!.prompt)).toMatch(/\/c2$/);
  });
});
