// forge-pack loop / stamp and ralph-loop status / resume as a user runs them: a temp git repo, the
// embedded store, a real metric command; the programs are built here with the autoresearch commands added.
import { execa } from 'execa';
import { access, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PASS_CONDITIONS } from '../../src/autoresearch/pipeline-schema.js';
import { prefersUnicode } from '../../src/cli/status-command.js';
import { createForgePackProgram } from '../../src/cli/forge-pack.js';
import { runProgram } from '../../src/cli/main.js';
import { createRalphLoopProgram } from '../../src/cli/ralph-loop.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';
import { ROOT } from '../support/cli.js';
import { moduleTrace } from '../support/module-trace.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sink(): { write(text: string): void; text: string } {
  return {
    text: '',
    write(text) {
      this.text += text;
    },
  };
}

async function run(repo: TempRepo, program: 'forge-pack' | 'ralph-loop', args: string[]): Promise<Run> {
  const stdout = sink();
  const stderr = sink();
  const create = program === 'forge-pack' ? createForgePackProgram : createRalphLoopProgram;
  const code = await runProgram(program, create, ['node', program, '--store', 'embedded', ...args], {
    cwd: repo.dir,
    env: { ...repo.env, NO_COLOR: '1', LANG: 'en_US.UTF-8' },
    stdout,
    stderr,
    stderrIsTTY: false,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

async function repoWithMetric(score = '58.5'): Promise<TempRepo> {
  const repo = await createTempRepo({
    'metric.mjs': `console.log('Score: ${score}');\n`,
    'src/limiter.ts': 'export const limit = 1;\n',
    'docs/spec.md': '# Rate limiter\n',
    'rubrics/spec.md': 'Score the spec for clarity, 0 to 10.\n',
  });
  return repo;
}

const HARD_ARGS = [
  'loop',
  'rate limiter',
  '--program',
  'Make the limiter exact under bursts.',
  '--metric-command',
  'node metric.mjs',
  '--score',
  'regex:Score: ([0-9.]+)',
  '--scope',
  'src/',
  '--target',
  '95',
];

async function children(repo: TempRepo, epic: string) {
  const listed = await run(repo, 'forge-pack', ['beads', 'children', epic, '--json']);
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as { id: string; title: string; labels: string[]; status: string }[];
}

async function createHardLoop(repo: TempRepo): Promise<string> {
  const created = await run(repo, 'forge-pack', HARD_ARGS);
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim();
}

describe('forge-pack loop', () => {
  it('hard metric: prints the epic id, measures the baseline, registers the loop and stamps cycle 1', async () => {
    const repo = await repoWithMetric();
    const created = await run(repo, 'forge-pack', HARD_ARGS);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^bd-[a-z0-9]+\n$/);
    const epic = created.stdout.trim();
    expect(created.stderr).toContain('Baseline: 58.5 (measured now');
    expect(created.stderr).toContain(`Run it: ralph-loop ${epic}`);

    const ledger = (await repo.read('.autoresearch/research-log.jsonl')).trim().split('\n');
    expect(ledger).toHaveLength(1);
    expect(JSON.parse(ledger[0] ?? '')).toMatchObject({
      iter: 0,
      decision: 'baseline',
      score_after: 58.5,
      base_sha: repo.head(),
    });
    expect(JSON.parse(await repo.read('.autoresearch/judge-output-0.json'))).toMatchObject({ score: 58.5 });
    expect(JSON.parse(await repo.read('.forge/loops.json'))).toEqual({
      [epic]: { workspace: '.autoresearch', subject: 'rate limiter', store: 'embedded' },
    });
    expect(JSON.parse(await repo.read('.autoresearch/config.json'))).toMatchObject({
      epic_id: epic,
      target: 95,
    });
    expect((await children(repo, epic)).map((b) => b.title)).toEqual([
      'doer-1: rate limiter',
      'judge-1: rate limiter',
      'arbiter-1: rate limiter',
      'strategist-1: rate limiter',
    ]);
  });

  it('soft metric with --json: one document, judge-0 and arbiter-0 for the baseline, in its own workspace', async () => {
    const repo = await repoWithMetric();
    const created = await run(repo, 'forge-pack', [
      'loop',
      'spec',
      '--program',
      'Make the spec unambiguous.',
      '--rubric',
      'rubrics/spec.md',
      '--artifact',
      'docs/spec.md',
      '--workspace',
      '.autoresearch-spec',
      '--agents',
      'doer=codex,judge=claude-haiku',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const doc = JSON.parse(created.stdout) as {
      epic: string;
      workspace: string;
      baseline: { kind: string; beads: { title: string }[] };
      beads: { title: string }[];
    };
    expect(doc.workspace).toBe('.autoresearch-spec');
    expect(doc.baseline.kind).toBe('pending');
    expect(doc.baseline.beads.map((b) => b.title)).toEqual(['judge-0: spec', 'arbiter-0: spec']);
    expect(await repo.read('.autoresearch-spec/research-log.jsonl')).toBe('');
    const beads = await children(repo, doc.epic);
    expect(beads.find((b) => b.title === 'doer-1: spec')?.labels).toContain('agent:codex');
    expect(beads.find((b) => b.title === 'judge-0: spec')?.labels).toContain('agent:claude-haiku');
  });

  it('a bad value names the config field and the flag, and nothing is created', async () => {
    const repo = await repoWithMetric();
    const failed = await run(repo, 'forge-pack', [...HARD_ARGS, '--max-iterations', '-1']);
    expect(failed.code).toBe(4);
    expect(failed.stderr).toContain(
      '.autoresearch/config.json: caps.max_iterations: expected a non-negative integer (0 = no cap), got -1 (from --max-iterations)',
    );
    await expect(access(join(repo.dir, '.autoresearch'))).rejects.toThrow();

    const noMetric = await run(repo, 'forge-pack', ['loop', 'x', '--program', 'p', '--scope', 'src/']);
    expect(noMetric.code).toBe(2);
    expect(noMetric.stderr).toContain('The loop needs a metric');
  });

  it('takes the size limits as sizes people write, and refuses what is not one (exit 2)', async () => {
    const repo = await repoWithMetric();
    const bad = await run(repo, 'forge-pack', [...HARD_ARGS, '--max-file-size', '5 parsecs']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("expected a size such as 100M, 2G or a number of bytes, got '5 parsecs'");
    await expect(access(join(repo.dir, '.autoresearch'))).rejects.toThrow();
    const made = await run(repo, 'forge-pack', [
      ...HARD_ARGS,
      '--max-file-size',
      '5M',
      '--max-change-size',
      '0',
      '--max-change-files',
      '500',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const config = JSON.parse(await repo.read('.autoresearch/config.json')) as { scope: object };
    expect(config.scope).toMatchObject({
      max_file_bytes: 5 * 2 ** 20,
      max_change_bytes: 0,
      max_change_files: 500,
    });
  });

  it('refuses to overwrite a loop, and --help teaches with examples', async () => {
    const repo = await repoWithMetric();
    await createHardLoop(repo);
    const again = await run(repo, 'forge-pack', HARD_ARGS);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('its ledger is never overwritten');
    const help = await run(repo, 'forge-pack', ['loop', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:');
    expect(help.stdout).toContain('--metric-command');

    // Every condition a pipeline's schema takes is taught by its help (spec_ready once was not).
    const pipeline = await run(repo, 'forge-pack', ['pipeline', '--help']);
    expect(pipeline.code).toBe(0);
    for (const condition of PASS_CONDITIONS) expect(pipeline.stdout).toContain(condition);
  });
});

describe('forge-pack loop keeps the doer inside the repository and away from the metric', () => {
  it('refuses a scope that leads out of the repository through a link, naming it (exit 2)', async () => {
    const repo = await repoWithMetric();
    const outside = await mkdtemp(join(tmpdir(), 'forge-outside-'));
    onTestFinished(() => rm(outside, { recursive: true, force: true }));
    await symlink(outside, join(repo.dir, 'linkdir'));
    const args = HARD_ARGS.map((arg) => (arg === 'src/' ? 'linkdir' : arg));
    const refused = await run(repo, 'forge-pack', args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('The scope linkdir leads out of the repository');
    expect(await readdir(join(repo.dir))).not.toContain('.autoresearch');
  });

  it('refuses a scope that holds a file the metric command reads, saying which and why (exit 2)', async () => {
    const repo = await createTempRepo({ 'score.txt': '5\n', 'src/x.ts': 'x\n' });
    const refused = await run(repo, 'forge-pack', [
      'loop',
      'score',
      '--program',
      'Raise the score.',
      '--metric-command',
      'cat score.txt',
      '--score',
      'regex:([0-9]+)',
      '--scope',
      'score.txt',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'The scope score.txt holds score.txt, a metric file (the metric command, a guard or a track reads it)',
    );
  });
});

describe('forge-pack loop measures the baseline on a tree the metric leaves alone', () => {
  /** `forge-pack loop` over a metric of `source`: refused (exit 2) saying `said`, nothing created. */
  async function refusedBaseline(source: string, said: string): Promise<TempRepo> {
    const repo = await repoWithMetric();
    await repo.write('metric.mjs', source);
    repo.commitAll('a metric that changes what it measures');
    const refused = await run(repo, 'forge-pack', HARD_ARGS);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`\`node metric.mjs\` ${said} while it measured the untouched tree`);
    expect(refused.stderr).toContain('Nothing was created.');
    expect(await readdir(join(repo.dir))).not.toContain('.autoresearch');
    return repo;
  }

  it('refuses a metric command that changes a tracked file, putting it back (exit 2), and creates nothing', async () => {
    const repo = await refusedBaseline(
      "import { appendFileSync } from 'node:fs';\nappendFileSync('docs/spec.md', 'ran\\n');\nconsole.log('Score: 58.5');\n",
      'changed docs/spec.md',
    );
    expect(await repo.read('docs/spec.md')).toBe('# Rate limiter\n');
  });

  it('refuses one that writes what later runs load outside the tree (a git hook), putting it back', async () => {
    const repo = await refusedBaseline(
      "import { writeFileSync } from 'node:fs';\nwriteFileSync('.git/hooks/pre-commit', '#!/bin/sh\\n', { mode: 0o755 });\nconsole.log('Score: 58.5');\n",
      'changed .git/hooks/pre-commit',
    );
    await expect(readFile(join(repo.dir, '.git', 'hooks', 'pre-commit'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses one that makes a test file, which a test runner would find on its own, removing it', async () => {
    const repo = await refusedBaseline(
      "import { writeFileSync } from 'node:fs';\nwriteFileSync('extra.test.js', '');\nconsole.log('Score: 58.5');\n",
      'made extra.test.js',
    );
    expect(await repo.exists('extra.test.js')).toBe(false);
  });
});

describe('forge-pack loop keeps the tests away from the doer', () => {
  it('refuses a scope that holds test files, naming them (exit 2), and takes it with --doer-may-change-tests', async () => {
    const repo = await repoWithMetric();
    await repo.write('src/limiter.test.ts', 'test("limits", () => {});\n');
    repo.commitAll('a test beside the code');
    const refused = await run(repo, 'forge-pack', HARD_ARGS);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('The scope src/ holds test files (src/limiter.test.ts)');
    expect(refused.stderr).toContain('--doer-may-change-tests');
    expect(await readdir(join(repo.dir))).not.toContain('.autoresearch');
    const taken = await run(repo, 'forge-pack', [...HARD_ARGS, '--doer-may-change-tests']);
    expect(taken.code, taken.stderr).toBe(0);
    const config = JSON.parse(await repo.read('.autoresearch/config.json')) as {
      scope: Record<string, unknown>;
    };
    expect(config.scope.doer_may_change_tests).toBe(true);
  });
});

describe('forge-pack stamp', () => {
  it('stamps an iteration once when several stamps of it run at once (an agent’s parallel tool calls)', async () => {
    const repo = await repoWithMetric();
    const epic = await createHardLoop(repo);
    const args = ['stamp', '--epic', epic, '--iter', '2', '--json'];
    const runs = await Promise.all(Array.from({ length: 6 }, () => run(repo, 'forge-pack', args)));
    for (const one of runs) expect(one.code, one.stderr).toBe(0);
    const docs = runs.map((one) => JSON.parse(one.stdout) as { created: string[]; existing: string[] });
    const created = docs.flatMap((doc) => doc.created);
    expect(created).toHaveLength(4);
    // Each of the others found those four, and no other.
    for (const doc of docs) expect([...doc.created, ...doc.existing].sort()).toEqual([...created].sort());
  });

  it('stamps the next iteration once, refuses a skipped one, asks the user, and stamps the retrospective', async () => {
    const repo = await repoWithMetric();
    const epic = await createHardLoop(repo);
    await repo.write('.autoresearch/directives/directive-2.md', 'Try a sliding window.\n');
    const args = [
      'stamp',
      '--epic',
      epic,
      '--iter',
      '2',
      '--directive-file',
      '.autoresearch/directives/directive-2.md',
    ];

    const first = await run(repo, 'forge-pack', [...args, '--json']);
    expect(first.code, first.stderr).toBe(0);
    const doc = JSON.parse(first.stdout) as { created: string[]; existing: string[] };
    expect(doc.created).toHaveLength(4);
    expect(doc.existing).toEqual([]);

    const second = await run(repo, 'forge-pack', [...args, '--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ created: [], existing: doc.created });
    expect(second.stderr).toContain('Iteration 2 of');
    expect(second.stderr).toContain('already stamped');

    const text = await run(repo, 'forge-pack', args);
    expect(text.stdout).toBe('');

    const skipped = await run(repo, 'forge-pack', ['stamp', '--epic', epic, '--iter', '4']);
    expect(skipped.code).toBe(2);
    expect(skipped.stderr).toContain('the next is 3');

    await repo.write('question.md', 'Per user or per key?\n');
    const asked = await run(repo, 'forge-pack', ['stamp', '--epic', epic, '--needs-human', 'question.md']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(await repo.read('.autoresearch/needs-human.md')).toContain('## Answer');
    const blocked = await run(repo, 'forge-pack', ['stamp', '--epic', epic, '--iter', '3']);
    expect(blocked.code).toBe(6);

    await repo.write(
      '.autoresearch/terminal-signal.json',
      JSON.stringify({ type: 'terminal', reason: 'plateau' }),
    );
    const retro = await run(repo, 'forge-pack', ['stamp', '--epic', epic, '--retrospective']);
    expect(retro.code, retro.stderr).toBe(0);
    expect(retro.stdout).toMatch(/^bd-[a-z0-9.]+\n$/);
    const titles = (await children(repo, epic)).map((b) => b.title);
    expect(titles.filter((t) => t === 'retrospective: rate limiter')).toHaveLength(1);

    const modes = await run(repo, 'forge-pack', ['stamp', '--epic', epic, '--iter', '3', '--retrospective']);
    expect(modes.code).toBe(2);
    expect(modes.stderr).toContain('exactly one of');
  });

  it('the strategist command names the repository relative to where it runs: a moved repository still stamps', async () => {
    const repo = await repoWithMetric();
    const epic = await createHardLoop(repo);
    const strategist = (await children(repo, epic)).find((b) => b.title.startsWith('strategist-1'));
    const shown = await run(repo, 'forge-pack', ['beads', 'show', strategist?.id ?? '', '--json']);
    const description = (JSON.parse(shown.stdout) as { description: string }[])[0]?.description ?? '';
    expect(description).not.toContain(repo.dir);
    const line = description
      .split('\n')
      .find((l) => l.trim().startsWith('forge-pack -C') && l.includes('--iter 2'));
    expect(line).toBeDefined();
    const words = (line ?? '').trim().split(' ');
    expect(words.slice(0, 5)).toEqual(['forge-pack', '-C', '.', '--store', 'embedded']);
    // The user renames the repository mid-loop; the strategist runs at its new root.
    const moved = `${repo.dir}-renamed`;
    await rename(repo.dir, moved);
    onTestFinished(() => rm(moved, { recursive: true, force: true }));
    await mkdir(join(moved, '.autoresearch', 'directives'), { recursive: true });
    await writeFile(join(moved, '.autoresearch', 'directives', 'directive-2.md'), 'Next idea.\n');
    const there = { ...repo, dir: moved };
    const stamped = await run(
      there,
      'forge-pack',
      words.slice(1).filter((w, i) => !(i >= 2 && i <= 3)),
    );
    expect(stamped.code, stamped.stderr).toBe(0);
    expect((await children(there, epic)).map((b) => b.title)).toContain('doer-2: rate limiter');
  });
});

describe('ralph-loop status', () => {
  it('prints the report (text and --json), with the live bead while a runner holds the lock', async () => {
    const repo = await repoWithMetric();
    const epic = await createHardLoop(repo);
    const text = await run(repo, 'ralph-loop', ['status', epic]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`rate limiter  (epic ${epic})`);
    expect(text.stdout).toContain(
      'metric    hard: `node metric.mjs` → regex:Score: ([0-9.]+), maximize · target 95',
    );
    expect(text.stdout).toContain('phase     idle (not running)');
    expect(text.stdout).toContain('score     58.5 (baseline) → 58.5 (best, iter 0) → 58.5 (last, iter 0)');
    expect(text.stderr).toBe('');

    await repo.write(
      '.autoresearch/ralph-loop.lock',
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        started_at: new Date().toISOString(),
        epic,
        run_id: 'r',
        bead: `${epic}.1`,
        bead_started_at: new Date().toISOString(),
      }),
    );
    const json = await run(repo, 'ralph-loop', ['status', epic, '--json', '--beads']);
    expect(json.code, json.stderr).toBe(0);
    const status = JSON.parse(json.stdout) as {
      phase: { state: string; bead: string; pid: number };
      scores: { baseline: number };
      beads: Record<string, number>;
      summary_source: string;
    };
    expect(status.phase).toMatchObject({ state: 'running', bead: `${epic}.1`, pid: process.pid });
    expect(status.scores.baseline).toBe(58.5);
    expect(status.beads).toEqual({ open: 4 });
    expect(status.summary_source).toBe('cache');

    const unknown = await run(repo, 'ralph-loop', ['status', 'bd-nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('bd-nope has no autoresearch loop');
  });

  it('draws ASCII when the locale is not UTF-8', () => {
    expect(prefersUnicode({ LANG: 'C' })).toBe(false);
    expect(prefersUnicode({ LC_ALL: 'en_US.UTF-8', LANG: 'C' })).toBe(true);
    expect(prefersUnicode({})).toBe(true);
    expect(prefersUnicode({ TERM: 'dumb' })).toBe(false);
  });
});

describe('ralph-loop resume', () => {
  it('refuses an unanswered question, then archives the answer, stamps the resume strategist and runs on', async () => {
    const repo = await repoWithMetric();
    const epic = await createHardLoop(repo);
    const ledgerBefore = await repo.read('.autoresearch/research-log.jsonl');
    await repo.write('q.md', 'Per user or per key?\n');
    expect((await run(repo, 'forge-pack', ['stamp', '--epic', epic, '--needs-human', 'q.md'])).code).toBe(0);

    const unanswered = await run(repo, 'ralph-loop', ['resume', epic, '--no-run']);
    expect(unanswered.code).toBe(6);
    expect(unanswered.stderr).toContain('not answered');

    const waiting = await run(repo, 'ralph-loop', ['status', epic]);
    expect(waiting.stdout).toContain('phase     waiting for a human: "Per user or per key?"');

    const resumed = await run(repo, 'ralph-loop', [
      'resume',
      epic,
      '--answer',
      'Per key.',
      '--dry-run',
      '--json',
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const first = JSON.parse(resumed.stdout.split('\n')[0] ?? '') as {
      type: string;
      k: number;
      bead: string;
    };
    expect(first).toMatchObject({ type: 'resumed', k: 1 });
    // The dry run plans the resume strategist (no blockers) before the open cycle.
    expect(resumed.stderr).toContain(`${first.bead}  role:resume-strategist`);
    expect(await repo.read('.autoresearch/needs-human-resolved-1.md')).toContain('Per key.');
    await expect(access(join(repo.dir, '.autoresearch', 'needs-human.md'))).rejects.toThrow();
    expect(await repo.read('.autoresearch/research-log.jsonl')).toBe(ledgerBefore);
    const after = JSON.parse((await run(repo, 'ralph-loop', ['status', epic, '--json'])).stdout) as {
      scores: { best: number };
    };
    expect(after.scores.best).toBe(58.5);

    const nothing = await run(repo, 'ralph-loop', ['resume', epic]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('not waiting for a human');
  });
});

describe('the status path stays light', () => {
  it('loads neither zod, execa nor handlebars when the summary cache is fresh', async () => {
    const built = join(ROOT, 'dist', 'cli', 'status-command.js');
    await access(built).catch(() => {
      throw new Error(
        'dist/cli/status-command.js is missing: run `npm run build` (npm test does it for you).',
      );
    });
    const repo = await repoWithMetric();
    const epic = await createHardLoop(repo);
    const trace = await moduleTrace(repo.dir);
    const commander = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('commander')).href;
    const script = `
import { Command } from ${JSON.stringify(commander)};
import { createStatusCommand } from ${JSON.stringify(pathToFileURL(built).href)};
import { diskLoopFiles } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist/infra/loop-files.js')).href)};
const out = [];
const deps = { cwd: process.cwd(), env: process.env, stdout: { write: (t) => out.push(t) }, stderr: process.stderr,
  clock: { now: () => Date.now() }, host: 'h', loopFiles: diskLoopFiles() };
const program = new Command('ralph-loop').option('--json').option('--store <s>').addCommand(createStatusCommand(deps));
await program.parseAsync(['node', 'ralph-loop', 'status', ${JSON.stringify(epic)}, '--json']);
process.stdout.write(out.join(''));
`;
    const child = await execa(process.execPath, [...trace.nodeArgs, '--input-type=module', '-e', script], {
      cwd: repo.dir,
      env: repo.env,
      reject: false,
    });
    expect(child.exitCode, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toMatchObject({ epic, summary_source: 'cache' });
    const loaded = (await trace.loaded()).join('\n');
    expect(loaded).toContain('autoresearch/status.js');
    expect(loaded).not.toMatch(/node_modules\/(zod|execa|handlebars)\//);
  });
});
