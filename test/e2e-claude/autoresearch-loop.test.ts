// Autoresearch loops end to end with the real claude as doer, soft judge, strategist and retrospective:
// stamping through Bash, keep and revert in git, the blind contract read off the recorded requests.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { bash, edit, text, toolUse, write, type RecordedRequest } from '../support/model-server/index.js';
import { createAgentWorld, requireClaude, type AgentWorld } from './harness.js';
import { doerRule, fromPrompt, retrospectiveRule, strategistRule } from './scripted-roles.js';

beforeAll(async () => {
  await assertBuilt();
  await requireClaude();
});

interface LedgerLine {
  iter: number;
  decision: string;
  score_after: number | null;
  cost_usd?: number;
  hypothesis?: string;
}

interface ChildBead {
  id: string;
  title: string;
  status: string;
  labels: string[];
}

async function ledger(world: AgentWorld): Promise<LedgerLine[]> {
  const raw = await readFile(join(world.repo, '.autoresearch', 'research-log.jsonl'), 'utf8');
  return raw
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LedgerLine);
}

async function children(world: AgentWorld, epic: string): Promise<ChildBead[]> {
  const listed = await world.forge(['beads', 'children', epic, '--json']);
  expect(listed.exitCode, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as ChildBead[];
}

async function workspaceJson(world: AgentWorld, name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(world.repo, '.autoresearch', name), 'utf8')) as Record<
    string,
    unknown
  >;
}

/** Fails with the forbidden text and where it appeared, for every request of the given rules. */
function expectNotTold(requests: RecordedRequest[], forbidden: Record<string, string>, who: string): void {
  expect(requests.length, `no requests recorded for the ${who}`).toBeGreaterThan(0);
  for (const request of requests) {
    for (const [name, value] of Object.entries(forbidden)) {
      const at = request.prompt.indexOf(value);
      expect(
        at,
        `the ${who} was told the ${name} (${JSON.stringify(value)}) in request #${request.seq}: …${request.prompt.slice(Math.max(0, at - 200), at + 200)}…`,
      ).toBe(-1);
    }
  }
}

async function requireLoopCommands(world: AgentWorld): Promise<void> {
  const help = await world.forge(['loop', '--help']);
  const stamp = await world.forge(['stamp', '--help']);
  const status = await world.ralph(['status', '--help']);
  const missing = [
    help.exitCode !== 0 ? 'forge-pack loop' : undefined,
    stamp.exitCode !== 0 ? 'forge-pack stamp' : undefined,
    status.exitCode !== 0 ? 'ralph-loop status' : undefined,
  ].filter((name) => name !== undefined);
  expect(
    missing,
    `these commands are not reachable from the built CLIs (src/cli/forge-pack.ts, src/cli/ralph-loop.ts must register the commands of src/cli/command-specs.ts): ${missing.join(', ')}`,
  ).toEqual([]);
}

const SCORE_SCRIPT = `// Prints the value in src/value.txt as the loop's score.
import { readFileSync } from 'node:fs';
const value = Number(readFileSync('src/value.txt', 'utf8').trim());
console.log('diagnostics: ok');
console.log('RESULT=' + value);
`;

describe('autoresearch with the real claude', () => {
  it('a hard-metric loop: three iterations (keep, revert, keep to the target), strategists stamp through Bash, a retrospective ends it', async () => {
    const metricCommand = 'node bench/score.mjs --emit result';
    const target = '91.25';
    const program = 'PROGRAM-SENTINEL-4471: raise the value kept in src/value.txt, one step per iteration.';
    const world = await createAgentWorld({
      files: { 'src/value.txt': '11\n', 'bench/score.mjs': SCORE_SCRIPT },
    });
    await requireLoopCommands(world);
    const value = join(world.repo, 'src', 'value.txt');
    world.server.addRule(doerRule({ iter: 1, path: value, content: '40\n', hypothesis: 'raise it to 40' }));
    world.server.addRule(
      doerRule({ iter: 2, path: value, editFrom: '40', content: '27', hypothesis: 'try 27 instead' }),
    );
    world.server.addRule(doerRule({ iter: 3, path: value, content: '95.5\n', hypothesis: 'go to 95.5' }));
    world.server.addRule(
      strategistRule((iter) => `Directive for iteration ${iter}: change src/value.txt.\n`),
    );
    world.server.addRule(retrospectiveRule('# Retrospective\n\nKept 1 and 3, reverted 2.\n', '- none\n'));

    const created = await world.forge([
      'loop',
      'value booster',
      '--program',
      program,
      '--metric-command',
      metricCommand,
      '--score',
      'regex:RESULT=([0-9.]+)',
      '--scope',
      'src/',
      '--target',
      target,
      '--max-iterations',
      '6',
    ]);
    expect(created.exitCode, created.stderr).toBe(0);
    const epic = created.stdout.trim();

    const run = await world.ralph(
      [epic, '--agent', 'claude', '--timeout', '120', '--max-attempts', '1'],
      280_000,
    );
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);

    // The ledger: baseline, keep, revert, keep; the target was met, so the loop ended on its goal.
    const lines = await ledger(world);
    expect(
      lines.map((line) => [line.iter, line.decision, line.score_after]),
      why,
    ).toEqual([
      [0, 'baseline', 11],
      [1, 'keep', 40],
      [2, 'revert', 27],
      [3, 'keep', 95.5],
    ]);
    expect(lines[2]!.hypothesis, why).toContain('try 27 instead');
    expect(await workspaceJson(world, 'terminal-signal.json'), why).toMatchObject({ reason: 'goal_reached' });
    expect(await readFile(value, 'utf8')).toBe('95.5\n');

    // Git: the doer's edits were committed by the runner, iteration 2 reverted by the arbiter's commit,
    // whose message (like every commit an agent can read) carries no score and no decision.
    const log = (await world.git('log', '--format=%H %s')).split('\n');
    const arbiter2 = log.filter((line) => / autoresearch iter 2: arbiter$/.test(line));
    expect(arbiter2, log.join('\n')).toHaveLength(1);
    const reverted = await world.git('show', '--format=', '--name-only', arbiter2[0]!.split(' ')[0]!);
    expect(reverted.trim()).toBe('src/value.txt');
    expect(await world.git('log', '--format=%s%n%b')).not.toMatch(/score|best|keep|revert/i);
    expect(await world.git('show', 'HEAD~0:src/value.txt')).toBe('95.5');

    // The cycle replicated: the strategists stamped iterations 2 and 3 and the retrospective themselves.
    const beads = await children(world, epic);
    const titles = beads.map((bead) => bead.title.split(':')[0]);
    for (const name of ['doer-2', 'strategist-2', 'doer-3', 'strategist-3', 'retrospective'])
      expect(titles, JSON.stringify(beads, null, 1)).toContain(name);
    expect(titles).not.toContain('doer-4');
    expect(
      beads.filter((bead) => bead.status !== 'closed'),
      why,
    ).toEqual([]);
    const stampCalls = world.server
      .turnsOf('strategist')
      .flatMap((turn) => turn.latestToolResults)
      .map((result) => result.text)
      .filter((output) => /Stamped/.test(output));
    expect(stampCalls, why).toHaveLength(3);
    expect(await readFile(join(world.repo, '.autoresearch', 'retrospective.md'), 'utf8')).toContain(
      'Kept 1 and 3',
    );

    // One claude process per agent bead: three doers, three strategists, one retrospective; no judge.
    expect(
      ['doer-1', 'doer-2', 'doer-3', 'strategist', 'retrospective'].map(
        (rule) => world.server.sessionsOf(rule).length,
      ),
      why,
    ).toEqual([1, 1, 1, 3, 1]);
    expect(
      world.server.agentTurns().every((turn) => turn.response?.rule !== undefined),
      why,
    ).toBe(true);

    // Blind contract: the doers were never told the metric, its command, its score pattern or the target.
    const doerTurns = ['doer-1', 'doer-2', 'doer-3'].flatMap((rule) => world.server.turnsOf(rule));
    expectNotTold(
      doerTurns,
      { 'metric command': metricCommand, 'metric script': 'score.mjs', 'score pattern': 'RESULT=', target },
      'doer',
    );
    // …while the strategist was (so the check above can see these strings when they are there).
    expect(world.server.turnsOf('strategist')[0]!.prompt).toContain(metricCommand);
    expect(doerTurns[0]!.prompt).toContain(program);

    // Tokens and cost from Claude's result objects: in the events, and the cost in ralph-loop status.
    const events = await world.events(epic);
    const agentAttempts = events.filter((e) => e.type === 'attempt_finished' && e.agent === 'claude');
    expect(agentAttempts, JSON.stringify(events, null, 1)).toHaveLength(7);
    for (const attempt of agentAttempts) {
      expect(attempt.input_tokens, JSON.stringify(attempt)).toBeGreaterThan(0);
      expect(attempt.output_tokens, JSON.stringify(attempt)).toBeGreaterThan(0);
      expect(attempt.cost_usd, JSON.stringify(attempt)).toBeGreaterThan(0);
    }
    const status = await world.ralph(['status', epic, '--json']);
    expect(status.exitCode, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as {
      cost_usd: number;
      tokens: { input: number; output: number };
      agent_runs: number;
      phase: { state: string; reason?: string };
      iterations: { kept: number; reverted: number };
      scores: { baseline: number; best: number };
    };
    expect(report, status.stdout).toMatchObject({
      phase: { state: 'terminated', reason: 'goal_reached' },
      iterations: { kept: 2, reverted: 1 },
      scores: { baseline: 11, best: 95.5 },
    });
    // Status counts every agent run, including the last strategist and the retrospective, which
    // run after the last ledger line: exactly what Claude's result objects reported.
    const sum = (key: 'cost_usd' | 'input_tokens' | 'output_tokens') =>
      agentAttempts.reduce((total, attempt) => total + (attempt[key] ?? 0), 0);
    expect(report.agent_runs, status.stdout).toBe(7);
    expect(report.cost_usd, status.stdout).toBeCloseTo(sum('cost_usd'), 6);
    expect(report.tokens, status.stdout).toEqual({
      input: sum('input_tokens'),
      output: sum('output_tokens'),
    });
    const ledgerCost = lines.reduce((sum, line) => sum + (line.cost_usd ?? 0), 0);
    expect(report.cost_usd).toBeGreaterThan(ledgerCost);
    const textStatus = await world.ralph(['status', epic]);
    expect(textStatus.stdout, textStatus.stderr).toMatch(/\$\d+\.\d+/);
  });

  it('a soft-metric loop: the read-only judge tries to write, is refused, answers JSON and is scored; judge and doer stay blind', async () => {
    const program = 'PROGRAM-SENTINEL-8823: make the spec clearer, one section at a time.';
    const rubric = 'RUBRIC-SENTINEL-3390: score clarity from 0 to 100; penalise vague words.\n';
    const hypothesis = 'HYPOTHESIS-SENTINEL-5127 a definitions section removes ambiguity';
    const original = '# Rate limiter\n\nIt limits things, roughly.\n';
    const improved = '# Rate limiter\n\n## Definitions\n\nA token bucket of 10 tokens, refilled at 1/s.\n';
    const world = await createAgentWorld({
      files: { 'docs/spec.md': original, 'rubrics/spec.md': rubric },
    });
    await requireLoopCommands(world);
    const spec = join(world.repo, 'docs', 'spec.md');
    world.server.addRule({
      name: 'judge',
      match: /# Judge, iteration \d+:/,
      turns: (context) => {
        const iter = Number(fromPrompt(context, /# Judge, iteration (\d+):/, 'its iteration'));
        const attempts = [
          write(spec, 'rewritten by the judge\n'),
          edit(spec, 'Rate limiter', 'Judged limiter'),
          bash(`echo judged > ${join(world.repo, 'judge-was-here.txt')}`, 'leave a mark'),
        ];
        if (context.turnIndex < attempts.length) return attempts[context.turnIndex]!;
        const score = iter === 0 ? 40 : 55;
        return text(
          JSON.stringify({ score, findings: [`iteration ${iter}: still vague`], strengths: ['short'] }),
        );
      },
    });
    world.server.addRule({
      name: 'doer-1',
      match: '# Doer, iteration 1:',
      turns: [
        toolUse('Read', { file_path: spec }),
        write(spec, improved),
        text(`Done.\nHYPOTHESIS: ${hypothesis}`),
      ],
    });
    world.server.addRule(strategistRule(() => 'unused: the loop ends after one iteration\n'));
    world.server.addRule(
      retrospectiveRule('# Retrospective\n\nOne iteration, kept.\n', '- sharper rubric\n'),
    );

    const created = await world.forge([
      'loop',
      'spec clarity',
      '--program',
      program,
      '--rubric',
      'rubrics/spec.md',
      '--artifact',
      'docs/spec.md',
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

    // Both judges were scored from their final JSON, despite their attempts to write.
    expect(await workspaceJson(world, 'judge-output-0.json'), why).toMatchObject({ score: 40 });
    expect(await workspaceJson(world, 'judge-output-1.json'), why).toMatchObject({ score: 55 });
    const lines = await ledger(world);
    expect(
      lines.map((line) => [line.iter, line.decision, line.score_after]),
      why,
    ).toEqual([
      [0, 'baseline', 40],
      [1, 'keep', 55],
    ]);
    expect(await workspaceJson(world, 'terminal-signal.json'), why).toMatchObject({
      reason: 'iteration_cap',
    });

    // Nothing the judges tried reached the tree: the spec is the doer's, no mark, no judge commit.
    expect(await readFile(spec, 'utf8'), why).toBe(improved);
    expect(existsSync(join(world.repo, 'judge-was-here.txt')), why).toBe(false);
    const status = await world.git('status', '--porcelain', '--', 'docs', 'rubrics', 'src');
    expect(status, why).toBe('');

    // The judges were offered only read-only tools; every write attempt came back an error and is in
    // their transcripts.
    const judgeTurns = world.server.turnsOf('judge');
    expect(world.server.sessionsOf('judge'), why).toHaveLength(2);
    for (const turn of judgeTurns) expect([...turn.tools].sort(), why).toEqual(['Glob', 'Grep', 'Read']);
    const refused = judgeTurns.flatMap((turn) => turn.latestToolResults);
    expect(refused, why).toHaveLength(6);
    for (const result of refused) expect(result.text, why).toMatch(/No such tool available/);
    const judge1 = (await children(world, epic)).find((bead) => bead.title.startsWith('judge-1'))!;
    const transcript = await world.transcript(epic, judge1.id);
    for (const tool of ['Write', 'Edit', 'Bash'])
      expect(transcript, transcript.slice(-2000)).toContain(`No such tool available: ${tool}`);

    // Blind contract, both ways.
    expectNotTold(
      judgeTurns,
      { program, 'program file': 'program.md', ledger: 'research-log', hypothesis: 'HYPOTHESIS-SENTINEL' },
      'judge',
    );
    expect(judgeTurns[0]!.prompt, 'the judge must be given the rubric').toContain('RUBRIC-SENTINEL-3390');
    expectNotTold(
      world.server.turnsOf('doer-1'),
      { rubric: 'RUBRIC-SENTINEL', 'rubric file': 'rubrics/spec.md' },
      'doer',
    );
    expect(existsSync(join(world.repo, '.autoresearch', 'retrospective.md')), why).toBe(true);
  });
});
