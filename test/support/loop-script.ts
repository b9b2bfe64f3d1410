// The scripted agent's rules that play a loop's agent roles in end-to-end tests of the built CLIs:
// a doer writing one value, a strategist stamping the next cycle (or the retrospective once the loop
// ended), a retrospective writing its notes. Steps run as argv, never through a shell.
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';
import { BIN, runCli, runCliInProcess, type CliResult } from './cli.js';

/** A forge-pack argv for a strategist's run step (absolute paths, the embedded store). */
export const forgeArgv = (dir: string): string[] => [
  process.execPath,
  BIN['forge-pack'],
  '-C',
  dir,
  '--store',
  'embedded',
];

/** The doer of iteration `iter` writes `value` to src/value.txt and names it as its hypothesis. */
export const doer = (iter: number, value: string) => ({
  when: { role: 'doer', iter },
  steps: [{ write: 'src/value.txt', content: `${value}\n` }, { say: `HYPOTHESIS: ${value} is better` }],
});

/** A strategist that writes a directive and stamps the next cycle through `forge-pack stamp`. */
export const stampNext = (dir: string, directive = 'Try another value.') => ({
  when: { role: 'strategist' },
  steps: [
    { write: '.autoresearch/directives/directive-{{next_iter}}.md', content: `${directive}\n` },
    {
      run: [
        ...forgeArgv(dir),
        'stamp',
        '--epic',
        '{{epic}}',
        '--iter',
        '{{next_iter}}',
        '--directive-file',
        `${dir}/.autoresearch/directives/directive-{{next_iter}}.md`,
      ],
    },
    { say: 'stamped' },
  ],
});

/** Once the loop ended: the strategist stamps the retrospective, which writes `notes`. List before stampNext. */
export const retrospectiveRules = (dir: string, notes = '# What we learned') => [
  {
    when: { role: 'strategist', exists: '.autoresearch/terminal-signal.json' },
    steps: [{ run: [...forgeArgv(dir), 'stamp', '--epic', '{{epic}}', '--retrospective'] }, { say: 'done' }],
  },
  {
    when: { role: 'retrospective' },
    steps: [{ write: '.autoresearch/retrospective.md', content: `${notes}\n` }, { say: 'written' }],
  },
];

export interface ScriptedLoopRepo {
  /** The temp dir holding the repository, the agent script and HOME. */
  base: string;
  dir: string;
  env: Record<string, string>;
  git(...args: string[]): Promise<string>;
  /** forge-pack's program in the test's process (`runCliInProcess`). */
  forge(args: string[]): Promise<CliResult>;
  /** forge-pack `beads …` in the test's process, for setup and for reading the store back. */
  beads(args: string[]): Promise<CliResult>;
  /** ralph-loop's program in the test's process (`runCliInProcess`). */
  ralph(args: string[]): Promise<CliResult>;
  /** ralph-loop as a process: for a test that kills the runner, or needs what only a process shows. */
  ralphProcess(args: string[]): Promise<CliResult>;
  /** Replaces the scripted agent's rules. */
  rules(rules: unknown[]): Promise<void>;
  /** The loop's ledger lines (`.autoresearch/research-log.jsonl`). */
  ledger<Line = Record<string, unknown>>(): Promise<Line[]>;
}

/**
 * A temp git repository with `files` (paths relative to it) committed on `main`, its loop files ignored,
 * the scripted agent playing `rules`, and the built CLIs on the embedded store; removed after the test.
 */
export async function scriptedLoopRepo(
  files: Record<string, string>,
  rules: unknown[] = [],
  prefix = 'forge-loop-',
): Promise<ScriptedLoopRepo> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(base, { recursive: true, force: true }));
  const dir = join(base, 'repo');
  const all = { '.gitignore': '.forge/\n.beads/\n.autoresearch/\n', ...files };
  for (const [path, content] of Object.entries(all)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const scriptPath = join(base, 'agent.json');
  const writeRules = (next: unknown[]) => writeFile(scriptPath, JSON.stringify({ rules: next }));
  await writeRules(rules);
  const env = {
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e.st',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e.st',
    FORGE_SCRIPTED_AGENT: scriptPath,
    HOME: base,
    // Java's home too (it reads the account's, not HOME): Forge watches the package stores in both.
    JAVA_TOOL_OPTIONS: `-Duser.home=${base}`,
  };
  const git = async (...args: string[]) => (await execa('git', args, { cwd: dir, env })).stdout;
  await git('init', '-q', '-b', 'main');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'start');
  return {
    base,
    dir,
    env,
    git,
    forge: (args) => runCliInProcess('forge-pack', ['--store', 'embedded', ...args], { cwd: dir, env }),
    beads: (args) =>
      runCliInProcess('forge-pack', ['--store', 'embedded', 'beads', ...args], { cwd: dir, env }),
    ralph: (args) => runCliInProcess('ralph-loop', ['--store', 'embedded', ...args], { cwd: dir, env }),
    ralphProcess: (args) => runCli('ralph-loop', ['--store', 'embedded', ...args], { cwd: dir, env }),
    rules: writeRules,
    async ledger<Line>() {
      const text = await readFile(join(dir, '.autoresearch', 'research-log.jsonl'), 'utf8');
      return text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Line);
    },
  };
}

/**
 * `forge-pack loop value`: one iteration of making the number `metric/score.mjs` reports larger, the
 * doer's scope `src/`, every role scripted. Returns the loop's epic.
 */
export async function createValueLoop(
  repo: ScriptedLoopRepo,
  artifact = 'src/value.txt',
  metricCommand = 'node metric/score.mjs',
  extraArgs: readonly string[] = [],
): Promise<string> {
  const created = await repo.forge(valueLoopArgs(artifact, metricCommand, extraArgs));
  if (created.exitCode !== 0)
    throw new Error(`forge-pack loop failed (${String(created.exitCode)}): ${created.stderr}`);
  return created.stdout.trim();
}

/** createValueLoop's `forge-pack loop` argv, for a test that expects it to be refused. */
export function valueLoopArgs(
  artifact: string,
  metricCommand: string,
  extraArgs: readonly string[] = [],
): string[] {
  return [
    'loop',
    'value',
    '--program',
    `Make the value in ${artifact} as large as possible.`,
    '--metric-command',
    metricCommand,
    '--score',
    'json:value',
    '--scope',
    'src/',
    '--max-iterations',
    '1',
    '--agents',
    'doer=scripted,judge=scripted,strategist=scripted',
    ...extraArgs,
  ];
}

/**
 * The rules of a one-iteration loop: its doer takes `steps`, the retrospective writes its notes and the
 * strategist stamps the next step.
 */
export async function oneDoerLoopRules(repo: ScriptedLoopRepo, steps: unknown[]): Promise<void> {
  await repo.rules([
    { when: { role: 'doer', iter: 1 }, steps },
    ...retrospectiveRules(repo.dir, '# Notes'),
    stampNext(repo.dir),
  ]);
}

/** Each ledger line of a one-value loop as [iter, decision, score_after]. */
export async function ledgerDecisions(repo: ScriptedLoopRepo): Promise<unknown[][]> {
  const lines = await repo.ledger<{ iter: number; decision: string; score_after: number | null }>();
  return lines.map((line) => [line.iter, line.decision, line.score_after]);
}

/** A doer that writes a worse `5` and runs `argv` (its forgery), then states its hypothesis. */
export const worseValueThen = (argv: string[]): unknown[] => [
  { write: 'src/value.txt', content: '5\n' },
  { run: argv },
  { say: 'HYPOTHESIS: 5 is better' },
];

/** A metric that adds a bonus from a helper module it imports; only the metric is named in its command. */
export const BONUS_METRIC = `import { readFileSync } from 'node:fs';
import { bonus } from './helpers.mjs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) + bonus }));
`;
/** BONUS_METRIC's helper (`metric/helpers.mjs`) as committed: no bonus. */
export const BONUS_HELPERS = 'export const bonus = 0;\n';
