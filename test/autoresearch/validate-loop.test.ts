// The loop checks of `forge-pack validate`: a table of loop states and beads (pure), and the reading of a
// real workspace (config, ledger, iteration records, template overrides rendered with sample views).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkLoop, readLoopState, type LoopState } from '../../src/autoresearch/validate-loop.js';
import type { Bead } from '../../src/beads/types.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

// These tests keep the loop's files on disk, beside the repository they work on.
const loopFiles = diskLoopFiles();

function loopBead(id: string, role: string, iter: number, status = 'open'): Bead {
  return {
    id,
    title: `${role}-${iter}`,
    status,
    priority: 2,
    issue_type: 'task',
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    labels: ['autoresearch', `role:${role}`, `iter:${iter}`],
  };
}

const healthy: LoopState = {
  workspace: '.autoresearch',
  exists: true,
  configEpic: 'E',
  lastIter: 1,
  iterationMismatches: [],
  templateErrors: [],
  strayTemplates: [],
};
const cycle2 = [
  loopBead('E.1', 'doer', 1, 'closed'),
  loopBead('E.2', 'judge', 1, 'closed'),
  loopBead('E.3', 'arbiter', 1, 'closed'),
  loopBead('E.4', 'strategist', 1, 'closed'),
  loopBead('E.5', 'doer', 2),
  loopBead('E.6', 'judge', 2),
];

const CASES: {
  name: string;
  state?: Partial<LoopState>;
  beads?: Bead[];
  expected: [string, string, string][];
}[] = [
  { name: 'a loop in step with its ledger', expected: [] },
  {
    name: 'a missing workspace',
    state: { exists: false },
    expected: [['loop', '.autoresearch', 'is missing']],
  },
  {
    name: 'an invalid config, and one of another epic',
    state: { configError: '.autoresearch/config.json: caps.max_iterations: expected a number' },
    expected: [['loop', '.autoresearch/config.json', 'caps.max_iterations']],
  },
  {
    name: 'a config of another epic',
    state: { configEpic: 'F' },
    expected: [['loop', '.autoresearch/config.json', 'belongs to epic F, not E']],
  },
  {
    name: 'two open doers',
    beads: [...cycle2, loopBead('E.9', 'doer', 3)],
    state: { lastIter: 1 },
    expected: [
      ['loop', 'E.5', '2 doers are open: E.5 (iter 2), E.9 (iter 3)'],
      [
        'loop',
        'E.9',
        'doer-3 (E.9) is stamped, but the ledger ends at iteration 1: iteration 2 was never decided',
      ],
    ],
  },
  {
    name: 'an open doer of an iteration the ledger already decided',
    state: { lastIter: 2 },
    expected: [['loop', 'E.5', 'doer-2 (E.5) is open, but the ledger already decided iteration 2']],
  },
  {
    name: 'a closed arbiter without its ledger line',
    state: { lastIter: 0 },
    expected: [
      ['loop', 'E.3', 'arbiter-1 (E.3) is closed, but the ledger has no iteration 1'],
      ['loop', 'E.5', 'the ledger ends at iteration 0: iteration 1 was never decided'],
    ],
  },
  {
    name: 'the same role stamped twice for one iteration',
    beads: [...cycle2, loopBead('E.7', 'judge', 2)],
    expected: [['loop', 'E.6', '2 beads are judge-2 (E.6, E.7)']],
  },
  {
    name: 'an iteration record of another iteration, a template that does not render, a stray file',
    state: {
      iterationMismatches: [{ path: '.autoresearch/iterations/iter-2.json', recorded: 5 }],
      templateErrors: [
        { path: '.autoresearch/templates/doer.hbs', message: 'doer.hbs: unknown variable "metric"' },
      ],
      strayTemplates: ['.autoresearch/templates/judge.hbs'],
    },
    expected: [
      ['loop', '.autoresearch/iterations/iter-2.json', 'records iteration 5'],
      ['template', '.autoresearch/templates/doer.hbs', 'unknown variable "metric"'],
      ['template', '.autoresearch/templates/judge.hbs', 'is not a template name'],
    ],
  },
];

describe('checkLoop', () => {
  it.each(CASES)('$name', ({ state, beads, expected }) => {
    const problems = checkLoop('E', beads ?? cycle2, { ...healthy, ...state });
    expect(problems.map((p) => [p.check, p.subject])).toEqual(expected.map(([c, s]) => [c, s]));
    problems.forEach((p, i) => expect(p.message).toContain(expected[i]![2]));
    expect(problems.every((p) => p.fix.length > 10)).toBe(true);
  });
});

describe('readLoopState', () => {
  it('reads the config and ledger, renders the overrides and names what is wrong', async () => {
    const repo = await mkdtemp(join(tmpdir(), 'forge-validate-loop-'));
    onTestFinished(() => rm(repo, { recursive: true, force: true }));
    const root = join(repo, '.autoresearch');
    await mkdir(join(root, 'templates'), { recursive: true });
    await mkdir(join(root, 'iterations'));
    const config = {
      subject: 'value',
      epic_id: 'E',
      metric: { type: 'hard', command: 'node score.js', score: { from: 'exit-code' }, direction: 'maximize' },
      scope: { doer_paths: ['src/'], judge_paths: ['src/'] },
    };
    await writeFile(join(root, 'config.json'), JSON.stringify(config));
    await writeFile(join(root, 'research-log.jsonl'), '');
    await writeFile(join(root, 'templates', 'doer.hbs'), 'Do {{program}} to reach {{metric.target}}\n');
    await writeFile(join(root, 'templates', 'strategist.hbs'), 'Plan {{subject}}\n');
    await writeFile(join(root, 'templates', 'judge.hbs'), 'never used\n');
    await writeFile(join(root, 'iterations', 'iter-2.json'), JSON.stringify({ iter: 7 }));

    const state = await readLoopState(loopFiles, repo, root, cycle2);
    expect(state).toMatchObject({
      workspace: '.autoresearch',
      exists: true,
      configEpic: 'E',
      lastIter: -1,
      iterationMismatches: [{ path: '.autoresearch/iterations/iter-2.json', recorded: 7 }],
      strayTemplates: ['.autoresearch/templates/judge.hbs'],
    });
    expect(state.templateErrors.map((e) => e.path)).toEqual(['.autoresearch/templates/doer.hbs']);
    expect(state.templateErrors[0]!.message).toContain('unknown variable "metric"');
    expect(state.templateErrors[0]!.message).not.toContain(repo);

    await writeFile(
      join(root, 'config.json'),
      JSON.stringify({ ...config, caps: { max_iterations: 'ten' } }),
    );
    const broken = await readLoopState(loopFiles, repo, root, cycle2);
    expect(broken.configError).toContain('caps.max_iterations');
    expect(broken.lastIter).toBeUndefined();
    expect((await readLoopState(loopFiles, repo, join(repo, 'gone'), cycle2)).exists).toBe(false);
  });
});
