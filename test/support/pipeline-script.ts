// A scripted repository for pipeline end-to-end tests: a soft-rubric stage (spec.md), an epic stage whose
// bead must pass a test gate (lib/impl.txt), and a hard-metric stage (src/value.txt), each loop in its
// own workspace, played by the scripted agent. Rules are per stage: bead titles carry the loop's subject.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { forgeArgv, scriptedLoopRepo, type ScriptedLoopRepo } from './loop-script.js';

export const VALUE_METRIC = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) }));
`;
/** The test gate: passes only when the epic stage's bead wrote "right". */
export const IMPL_CHECK = `import { readFileSync, existsSync } from 'node:fs';
const ok = existsSync('lib/impl.txt') && readFileSync('lib/impl.txt', 'utf8').trim() === 'right';
if (!ok) { console.log('not ok 1 - lib/impl.txt must say right'); process.exit(1); }
console.log('ok 1 - impl');
`;

export const SCRIPTED = { doer: 'scripted', judge: 'scripted', strategist: 'scripted' };

/** Strategist and retrospective rules for the loop whose subject is `subject`, in workspace `ws`. */
export function loopRoleRules(dir: string, subject: string, ws: string): unknown[] {
  return [
    {
      when: { role: 'strategist', titleIncludes: subject, exists: `${ws}/terminal-signal.json` },
      steps: [
        { run: [...forgeArgv(dir), 'stamp', '--epic', '{{epic}}', '--retrospective'] },
        { say: 'done' },
      ],
    },
    {
      when: { role: 'retrospective', titleIncludes: subject },
      steps: [{ write: `${ws}/retrospective.md`, content: '# notes\n' }, { say: 'written' }],
    },
    {
      when: { role: 'strategist', titleIncludes: subject },
      steps: [
        { write: `${ws}/directives/directive-{{next_iter}}.md`, content: 'Try again.\n' },
        {
          run: [
            ...forgeArgv(dir),
            'stamp',
            '--epic',
            '{{epic}}',
            '--iter',
            '{{next_iter}}',
            '--directive-file',
            `${dir}/${ws}/directives/directive-{{next_iter}}.md`,
          ],
        },
        { say: 'stamped' },
      ],
    },
  ];
}

/** A hard stage's doer of iteration `iter` writes `value` to src/value.txt. */
export const valueDoer = (iter: number, value: string, extra: unknown[] = []) => ({
  when: { role: 'doer', iter, titleIncludes: 'qa-value' },
  steps: [...extra, { write: 'src/value.txt', content: `${value}\n` }, { say: `HYPOTHESIS: ${value}` }],
});

export interface PipelineRepo extends ScriptedLoopRepo {
  /** Writes `pipeline.json` and runs forge-pack pipeline on it; returns the parent epic. */
  createPipeline(definition: unknown): Promise<string>;
  /** Creates an epic with one bead (titled "implement") and returns the epic's id. */
  createBuildEpic(): Promise<string>;
}

export async function pipelineRepo(): Promise<PipelineRepo> {
  const repo = await scriptedLoopRepo(
    {
      '.gitignore': '.forge/\n.beads/\n.autoresearch*/\nlib/\n',
      'spec.md': 'draft\n',
      'rubric.md': 'Score the spec from 0 to 10.\n',
      'src/value.txt': '10\n',
      'metric/score.mjs': VALUE_METRIC,
      'check.mjs': IMPL_CHECK,
    },
    [],
    'forge-pipeline-',
  );
  await mkdir(join(repo.dir, '.forge'), { recursive: true });
  await writeFile(
    join(repo.dir, '.forge', 'config.json'),
    JSON.stringify({ store: 'embedded', gates: { test: ['node', 'check.mjs'] } }),
  );
  return {
    ...repo,
    async createPipeline(definition) {
      await writeFile(join(repo.dir, 'pipeline.json'), JSON.stringify(definition));
      const created = await repo.forge(['pipeline', 'pipeline.json']);
      if (created.exitCode !== 0) throw new Error(`forge-pack pipeline failed: ${created.stderr}`);
      return created.stdout.trim();
    },
    async createBuildEpic() {
      await repo.beads(['init']);
      const epic = await repo.beads(['create', 'build plan', '-t', 'epic']);
      if (epic.exitCode !== 0) throw new Error(epic.stderr);
      const id = epic.stdout.trim();
      const bead = await repo.beads([
        'create',
        'implement the limiter',
        '--parent',
        id,
        '-l',
        'agent:scripted',
      ]);
      if (bead.exitCode !== 0) throw new Error(bead.stderr);
      return id;
    },
  };
}

/** The three stages: spec (soft rubric), build (an epic with a test gate), qa (hard metric). */
export function threeStages(buildEpic: string, caps: Record<string, number> = {}) {
  return {
    name: 'limiter',
    stages: [
      {
        name: 'spec',
        type: 'loop',
        subject: 'spec-doc',
        program: 'Make spec.md complete.',
        metric: { type: 'soft', rubric_path: 'rubric.md', artifact_path: 'spec.md' },
        target: 8,
        caps: { max_iterations: 3 },
        agents: SCRIPTED,
      },
      { name: 'build', type: 'epic', epic: buildEpic },
      {
        name: 'qa',
        type: 'loop',
        subject: 'qa-value',
        program: 'Make the value in src/value.txt as large as possible.',
        metric: { type: 'hard', command: 'node metric/score.mjs', score: { from: 'json', path: 'value' } },
        target: 20,
        caps: { max_iterations: 4, plateau_threshold: 2, ...caps },
        scope: ['src/'],
        agents: SCRIPTED,
      },
    ],
  };
}

/** Rules for all three stages; `qaDoers` play the hard stage's doers. */
export function threeStageRules(dir: string, qaDoers: unknown[]): unknown[] {
  return [
    // spec: the baseline judge scores 4, the first draft 9 (target 8).
    {
      when: { role: 'judge', iter: 0, titleIncludes: 'spec-doc' },
      steps: [{ say: '{"score": 4, "findings": ["thin"]}' }],
    },
    { when: { role: 'judge', titleIncludes: 'spec-doc' }, steps: [{ say: '{"score": 9, "findings": []}' }] },
    {
      when: { role: 'doer', titleIncludes: 'spec-doc' },
      steps: [{ write: 'spec.md', content: '# Limiter\nA full spec.\n' }, { say: 'HYPOTHESIS: fuller' }],
    },
    ...loopRoleRules(dir, 'spec-doc', '.autoresearch-spec'),
    // build: the first attempt fails the test gate, the second (with the gate's report) passes it.
    {
      when: { titleIncludes: 'implement', attempt: 1 },
      steps: [{ write: 'lib/impl.txt', content: 'wrong\n' }, { say: 'done' }],
    },
    {
      when: { titleIncludes: 'implement' },
      steps: [{ write: 'lib/impl.txt', content: 'right\n' }, { say: 'done' }],
    },
    ...qaDoers,
    ...loopRoleRules(dir, 'qa-value', '.autoresearch-qa'),
  ];
}
