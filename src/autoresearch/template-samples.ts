// A sample view for each loop template, so a workspace's overrides can be rendered before a run and a
// template that names a variable its role does not see is found then, not when the bead is stamped.
import type { LedgerDigest, LoopFilePaths, MetricDigest, ViewFor } from './templates.js';

const at = (name: string) => `.autoresearch/${name}`;
const paths: LoopFilePaths = {
  workspace: '.autoresearch',
  config: at('config.json'),
  program: at('program.md'),
  ledger: at('research-log.jsonl'),
  arbiter_signal: at('arbiter-signal.json'),
  terminal_signal: at('terminal-signal.json'),
  needs_human: at('needs-human.md'),
  directives: at('directives'),
  retrospective: at('retrospective.md'),
  rubric_suggestions: at('rubric-suggestions.md'),
};
const metric: MetricDigest = {
  type: 'hard',
  description: 'the command `npm test`, score from its exit code',
  direction: 'maximize (higher is better)',
  target: '100',
  caps: 'at most 20 iterations',
};
const ledger: LedgerDigest = {
  lines: [
    {
      iter: 1,
      decision: 'keep',
      score: '50',
      delta: '+10',
      best: '50',
      hypothesis: 'sample hypothesis',
      reason: '',
      cost: '$0.00',
    },
  ],
  omitted: 0,
  baseline: '40',
  best: '50',
  best_iter: '1',
  current: '50',
  kept: 1,
  reverted: 0,
  crashed: 0,
  non_improvement_streak: 0,
  cost: '$0.00',
};
const commands = {
  stamp_next:
    'forge-pack -C . stamp --epic bd-sample --iter 3 --directive-file .autoresearch/directives/directive-3.md',
  stamp_retrospective: 'forge-pack -C . stamp --epic bd-sample --retrospective',
  resume: 'ralph-loop resume bd-sample',
};
const base = { epic: 'bd-sample', subject: 'sample', iter: 2 };

export const SAMPLE_VIEWS: ViewFor = {
  doer: {
    ...base,
    program: 'Sample program.',
    directive: 'Sample directive.',
    scope: ['src/'],
    history: [{ iter: 1, outcome: 'kept', hypothesis: 'sample hypothesis' }],
    history_omitted: 0,
    counts: { kept: 1, reverted: 0, crashed: 0 },
  },
  'judge-soft': {
    ...base,
    baseline: false,
    rubric: 'Sample rubric.',
    rubric_path: 'rubric.md',
    artifacts: ['docs/sample.md'],
    read_paths: ['docs/sample.md'],
  },
  'judge-hard': {
    ...base,
    baseline: false,
    command: 'npm test',
    score_source: '100 when it exits with code 0, else 0',
    timeout_seconds: 600,
    judge_output_path: at('judge-output-2.json'),
  },
  arbiter: {
    ...base,
    baseline: false,
    direction: 'maximize',
    min_delta: 0,
    target: '100',
    max_iterations: '20',
    plateau_threshold: '3',
    max_cost: 'no cap',
    wall_clock: 'no cap',
    confirmation_rounds: 1,
    judge_output_path: at('judge-output-2.json'),
    ledger_path: paths.ledger,
    arbiter_signal_path: paths.arbiter_signal,
    terminal_signal_path: paths.terminal_signal,
  },
  strategist: {
    ...base,
    next_iter: 3,
    program: 'Sample program.',
    metric,
    ledger,
    paths,
    judge_output_path: at('judge-output-2.json'),
    next_directive_path: at('directives/directive-3.md'),
    commands,
  },
  retrospective: { ...base, program: 'Sample program.', metric, soft: false, ledger, paths },
  'resume-strategist': {
    ...base,
    k: 1,
    next_iter: 3,
    question: 'Sample question?',
    answer: 'Sample answer.',
    program: 'Sample program.',
    metric,
    ledger,
    signal: '{"type":"continue"}',
    terminal: null,
    findings: ['sample finding'],
    paths,
    next_directive_path: at('directives/directive-3.md'),
    commands,
  },
};
