// The real claude as a soft judge that goes looking for what it must not see: the program and the ledger
// by their absolute paths, a Glob and a Grep over the repository. It runs in a copy of the artifact
// outside the repository, with its file tools held there, so none of it comes back; it is still scored.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { text, toolUse, type Turn } from '../support/model-server/index.js';
import { createAgentWorld, requireClaude } from './harness.js';
import { fromPrompt, retrospectiveRule, strategistRule } from './scripted-roles.js';

beforeAll(async () => {
  await assertBuilt();
  await requireClaude();
});

interface LedgerLine {
  iter: number;
  decision: string;
  score_after: number | null;
}

describe('a soft judge with the real claude', () => {
  it('cannot read the program, the ledger or the repository by absolute path, and is still scored', async () => {
    const program = 'PROGRAM-SENTINEL-6604: make the spec precise.';
    const original = '# Limiter\n\nIt limits, more or less.\n';
    const improved = '# Limiter\n\nAt most 10 requests per second per key.\n';
    // Forge's temp directories (the judge's copy) land here, so the test can see them and their removal.
    const temp = await mkdtemp(join(tmpdir(), 'forge-judge-e2e-'));
    onTestFinished(() => rm(temp, { recursive: true, force: true }));
    const world = await createAgentWorld({
      files: {
        'docs/spec.md': original,
        'rubrics/spec.md': 'RUBRIC-SENTINEL-2291: score precision, 0-100.\n',
      },
      env: { TMPDIR: temp },
    });
    // A user who lets Claude Code read anywhere: the judge's flags must hold against their settings.
    await mkdir(join(world.home, '.claude'), { recursive: true });
    await writeFile(
      join(world.home, '.claude', 'settings.json'),
      JSON.stringify({ permissions: { allow: ['Read', 'Glob', 'Grep'] } }),
    );
    const workspace = join(world.repo, '.autoresearch');
    const probes: Turn[] = [
      toolUse('Read', { file_path: join(workspace, 'program.md') }),
      toolUse('Read', { file_path: join(workspace, 'research-log.jsonl') }),
      toolUse('Glob', { pattern: '**/*', path: world.repo }),
      toolUse('Grep', { pattern: 'SENTINEL|baseline', path: world.repo, output_mode: 'content' }),
      toolUse('Read', { file_path: join(world.repo, '.git', 'HEAD') }),
      // What it may read: the artifact, at its path relative to the repository root.
      toolUse('Read', { file_path: 'docs/spec.md' }),
    ];
    world.server.addRule({
      name: 'judge',
      match: /# Judge, iteration \d+:/,
      turns: (context) => {
        const iter = Number(fromPrompt(context, /# Judge, iteration (\d+):/, 'its iteration'));
        if (context.turnIndex < probes.length) return probes[context.turnIndex]!;
        return text(JSON.stringify({ score: iter === 0 ? 30 : 70, findings: ['vague'], strengths: [] }));
      },
    });
    world.server.addRule({
      name: 'doer-1',
      match: '# Doer, iteration 1:',
      turns: [
        toolUse('Read', { file_path: join(world.repo, 'docs', 'spec.md') }),
        toolUse('Write', { file_path: join(world.repo, 'docs', 'spec.md'), content: improved }),
        text('Done.\nHYPOTHESIS: HYPOTHESIS-SENTINEL-4410 a number beats a vague word'),
      ],
    });
    world.server.addRule(strategistRule(() => 'unused: one iteration\n'));
    world.server.addRule(retrospectiveRule('# Retrospective\n\nOne iteration.\n', '- none\n'));

    const created = await world.forge([
      'loop',
      'spec precision',
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

    // Both judges were scored from their answers.
    const ledgerText = await readFile(join(workspace, 'research-log.jsonl'), 'utf8');
    const lines = ledgerText
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LedgerLine);
    expect(
      lines.map((line) => [line.iter, line.decision, line.score_after]),
      why,
    ).toEqual([
      [0, 'baseline', 30],
      [1, 'keep', 70],
    ]);

    const judgeTurns = world.server.turnsOf('judge');
    expect(world.server.sessionsOf('judge'), why).toHaveLength(2);
    // It ran in Forge's copy under the temp directory, not in the repository.
    for (const turn of judgeTurns) expect(turn.prompt, why).toContain(join(temp, 'forge-judge-'));
    const results = judgeTurns.flatMap((turn) => turn.latestToolResults);
    expect(results, why).toHaveLength(2 * probes.length);
    const baselineLine = ledgerText.split('\n')[0]!;
    const forbidden = {
      program: 'PROGRAM-SENTINEL-6604',
      'the ledger’s first line': baselineLine.slice(0, 60),
      'a ledger field': '"decision"',
      "git's HEAD": 'ref: refs/heads/',
    };
    for (const result of results) {
      for (const [name, value] of Object.entries(forbidden)) {
        expect(
          result.text,
          `the judge got ${name} back from a tool: ${result.text.slice(0, 300)}`,
        ).not.toContain(value);
      }
    }
    // The reads outside its copy were refused (not merely empty), while the artifact itself was readable.
    const perJudge = (index: number) => results.slice(index * probes.length, (index + 1) * probes.length);
    for (const index of [0, 1]) {
      const answers = perJudge(index);
      for (const refused of answers.slice(0, 5)) expect(refused.isError, why).toBe(true);
      // Glob and Grep listed nothing of the repository (their refusal names only the directory).
      for (const search of [answers[2]!, answers[3]!])
        expect(search.text, why).not.toContain(`${world.repo}/`);
      expect(answers[5]!.isError, why).toBe(false);
      expect(answers[5]!.text, why).toContain(index === 0 ? 'more or less' : 'At most 10 requests');
    }

    // The copies are gone, and the repository is the doer's.
    expect(
      (await readdir(temp)).filter((name) => name.startsWith('forge-judge-')),
      why,
    ).toEqual([]);
    expect(await readFile(join(world.repo, 'docs', 'spec.md'), 'utf8')).toBe(improved);
    // Claude Code saved no session for the judges: each would be a project of its own in the user's
    // ~/.claude/projects, named after a checkout that is gone, holding the artifact and the rubric. The
    // doer's session is kept as usual.
    const projects = await readdir(join(world.home, '.claude', 'projects'));
    expect(
      projects.filter((name) => name.includes('forge-judge')),
      why,
    ).toEqual([]);
    expect(
      projects.some((name) => name.endsWith('-repo')),
      projects.join(', '),
    ).toBe(true);
  });
});
