// A pipeline of loops with the real claude against the scripted model server: a soft SPEC stage, a
// BUILD epic whose bead is held by a test gate until it is right, and a hard QA stage, from one
// `ralph-loop <parent>`.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { bash, text, toolUse, write } from '../support/model-server/index.js';
import { createAgentWorld, requireClaude } from './harness.js';
import { fromPrompt, retrospectiveRule, strategistRule } from './scripted-roles.js';

beforeAll(async () => {
  await assertBuilt();
  await requireClaude();
});

const SCORE_SCRIPT = `import { readFileSync } from 'node:fs';
console.log('RESULT=' + Number(readFileSync('src/value.txt', 'utf8').trim()));
`;
const CHECK_SCRIPT = `import { existsSync, readFileSync } from 'node:fs';
const ok = existsSync('lib/limiter.txt') && readFileSync('lib/limiter.txt', 'utf8').includes('token bucket');
console.log(ok ? 'ok 1 - limiter' : 'not ok 1 - GATE-SENTINEL lib/limiter.txt must implement a token bucket');
process.exit(ok ? 0 : 1);
`;

describe('a pipeline of loops with the real claude', () => {
  it('runs a soft stage, an epic stage with a test gate and a hard stage from one ralph-loop', async () => {
    const world = await createAgentWorld({
      files: {
        '.gitignore': 'lib/\n',
        '.forge/config.json': JSON.stringify({ store: 'embedded', gates: { test: ['node', 'check.mjs'] } }),
        'docs/spec.md': '# Limiter\n\nTODO\n',
        'rubrics/spec.md': 'Score the spec from 0 to 10.\n',
        'src/value.txt': '10\n',
        'bench/score.mjs': SCORE_SCRIPT,
        'check.mjs': CHECK_SCRIPT,
      },
    });
    const spec = join(world.repo, 'docs', 'spec.md');
    const value = join(world.repo, 'src', 'value.txt');
    world.server.addRule({
      name: 'judge',
      match: /# Judge, iteration \d+: limiter spec/,
      turns: (context) => {
        const iter = Number(fromPrompt(context, /# Judge, iteration (\d+):/, 'its iteration'));
        return text(JSON.stringify({ score: iter === 0 ? 4 : 9, findings: iter === 0 ? ['thin'] : [] }));
      },
    });
    world.server.addRule({
      name: 'spec-doer',
      match: '# Doer, iteration 1: limiter spec',
      turns: [
        toolUse('Read', { file_path: spec }),
        write(spec, '# Limiter\n\nA token bucket of 10 tokens, refilled at 1/s.\n'),
        text('Done.\nHYPOTHESIS: say what the limiter is'),
      ],
    });
    world.server.addRule({
      name: 'builder',
      match: 'implement the limiter',
      turns: (context) => {
        // The retry carries the red gate's report: only then is it done right.
        const fixed = context.request.userText.includes('GATE-SENTINEL');
        if (context.turnIndex === 0) {
          return bash(
            `mkdir -p ${join(world.repo, 'lib')} && printf '${fixed ? 'a token bucket' : 'a fixed window'}\\n' > ${join(world.repo, 'lib', 'limiter.txt')}`,
            'write the limiter',
          );
        }
        return text(fixed ? 'Fixed after the gate.' : 'Implemented.');
      },
    });
    world.server.addRule({
      name: 'qa-doer',
      match: '# Doer, iteration 1: limiter qa',
      turns: [
        toolUse('Read', { file_path: value }),
        write(value, '25\n'),
        text('Done.\nHYPOTHESIS: raise it'),
      ],
    });
    world.server.addRule(strategistRule((iter) => `Directive for iteration ${iter}.\n`));
    world.server.addRule(retrospectiveRule('# Retrospective\n\nReached the target.\n', '- none\n'));

    const plan = await world.createEpic('limiter build plan');
    await world.createBead(plan, 'implement the limiter', {
      description: 'implement the limiter in lib/limiter.txt, as docs/spec.md says',
    });
    const pipeline = {
      name: 'limiter',
      stages: [
        {
          name: 'spec',
          type: 'loop',
          subject: 'limiter spec',
          program: 'Make docs/spec.md a complete spec.',
          metric: { type: 'soft', rubric_path: 'rubrics/spec.md', artifact_path: 'docs/spec.md' },
          target: 8,
          caps: { max_iterations: 3 },
        },
        { name: 'build', type: 'epic', epic: plan },
        {
          name: 'qa',
          type: 'loop',
          subject: 'limiter qa',
          program: 'Raise the value in src/value.txt.',
          metric: {
            type: 'hard',
            command: 'node bench/score.mjs',
            score: { from: 'regex', pattern: 'RESULT=([0-9.]+)' },
          },
          target: 20,
          scope: ['src/'],
        },
      ],
    };
    await writeFile(join(world.repo, 'pipeline.json'), JSON.stringify(pipeline));
    const created = await world.forge(['pipeline', 'pipeline.json']);
    expect(created.exitCode, created.stderr).toBe(0);
    const parent = created.stdout.trim();

    const run = await world.ralph(
      [parent, '--agent', 'claude', '--timeout', '120', '--max-attempts', '2', '--backoff', '0'],
      400_000,
    );
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);

    const status = await world.ralph(['status', parent, '--json']);
    const shown = JSON.parse(status.stdout) as {
      phase: string;
      stages: { name: string; phase: string; scores: { best: number | null } | null }[];
    };
    expect(shown.phase, why).toBe('done');
    expect(shown.stages.map((s) => [s.name, s.phase])).toEqual([
      ['spec', 'passed'],
      ['build', 'passed'],
      ['qa', 'passed'],
    ]);
    expect(shown.stages[0]?.scores?.best).toBe(9);
    expect(shown.stages[2]?.scores?.best).toBe(25);
    expect(await readFile(join(world.repo, 'lib', 'limiter.txt'), 'utf8')).toBe('a token bucket\n');
    // The builder ran twice: once wrong, once with the gate's report.
    expect(world.server.sessionsOf('builder'), why).toHaveLength(2);
  });
});
