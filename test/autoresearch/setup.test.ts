// `forge-pack loop`'s core: validation, workspace, epic, registry, baseline and cycle 1, with fake ports.
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLedger } from '../../src/autoresearch/ledger.js';
import { readCachedSummary } from '../../src/autoresearch/ledger-summary.js';
import {
  buildConfigFile,
  parseScoreOption,
  type LoopSetupOptions,
} from '../../src/autoresearch/setup-options.js';
import { setupLoop, type SetupPorts } from '../../src/autoresearch/setup.js';
import { loopRoleOf } from '../../src/autoresearch/loop-beads.js';
import { readLoopsRegistry } from '../../src/autoresearch/workspace.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import type { BeadStore } from '../../src/beads/types.js';
import { AppError, ConfigError, ExitCode } from '../../src/infra/errors.js';
import type { ProcessResult } from '../../src/infra/process.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';
import { processResult as sharedResult } from '../support/process-result.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

// These tests keep the loop's files on disk, beside the repository they work on.
const loopFiles = diskLoopFiles();

/** The metric's run, 1,234 ms long (the baseline's recorded duration). */
const processResult = (overrides: Partial<ProcessResult> = {}): ProcessResult =>
  sharedResult({ durationMs: 1234, ...overrides });

interface Fixture {
  repo: TempRepo;
  store: BeadStore;
  ports: SetupPorts;
  metricCalls: { argv: readonly string[]; cwd: string; timeoutMs: number }[];
}

async function fixture(stdout = 'Score: 58.5\n'): Promise<Fixture> {
  const repo = await createTempRepo({
    'src/limiter.ts': 'export const x = 1;\n',
    'docs/spec.md': '# Spec\n',
    'rubric.md': 'Score clarity from 0 to 10.\n',
  });
  const store = createMemoryBeadStore();
  const metricCalls: Fixture['metricCalls'] = [];
  const ports: SetupPorts = {
    store,
    git: repo.git,
    runMetric: async (argv, options) => {
      metricCalls.push({ argv, ...options });
      return processResult({ stdout });
    },
    now: () => Date.parse('2026-11-22T10:00:00Z'),
    host: 'h',
    isProcessAlive: () => false,
    files: diskLoopFiles(),
  };
  return { repo, store, ports, metricCalls };
}

const HARD: LoopSetupOptions = {
  subject: 'rate limiter',
  program: 'Make the limiter exact.',
  metric: {
    type: 'hard',
    command: 'node bench.js --json',
    score: { from: 'regex', pattern: 'Score: ([0-9.]+)' },
  },
  scope: ['src/'],
  target: 95,
};

const SOFT: LoopSetupOptions = {
  subject: 'spec',
  program: 'Make the spec unambiguous.',
  metric: { type: 'soft', rubric: 'rubric.md', artifact: 'docs/spec.md' },
};

describe('a hard loop', () => {
  it('measures the baseline at once: judge-output-0.json, ledger line 0 at HEAD, then stamps cycle 1', async () => {
    const { repo, store, ports, metricCalls } = await fixture();
    const result = await setupLoop(repo.dir, HARD, ports);

    // Under the exit watch, as every run of the loop's will be: what it costs a Node process to start
    // is in the baseline too.
    expect(metricCalls).toEqual([
      {
        argv: ['node', 'bench.js', '--json'],
        cwd: repo.dir,
        timeoutMs: 600_000,
        watchExits: { entries: [], keys: [] },
      },
    ]);
    const ws = join(repo.dir, '.autoresearch');
    expect(result.workspace).toBe(ws);
    expect(result.baseline).toMatchObject({ kind: 'measured', score: 58.5 });
    const judge0 = JSON.parse(await readFile(join(ws, 'judge-output-0.json'), 'utf8')) as { score: number };
    expect(judge0.score).toBe(58.5);
    const ledger = await readLedger(loopFiles, join(ws, 'research-log.jsonl'));
    expect(ledger.lines).toHaveLength(1);
    expect(ledger.lines[0]).toMatchObject({
      iter: 0,
      decision: 'baseline',
      score_after: 58.5,
      best_after: 58.5,
      base_sha: repo.head(),
      sha: repo.head(),
      duration_ms: 1234,
    });
    expect((await readCachedSummary(loopFiles, join(ws, 'research-log.jsonl')))?.best_score).toBe(58.5);
    expect(JSON.parse(await readFile(join(ws, 'arbiter-signal.json'), 'utf8'))).toMatchObject({
      type: 'continue',
      next_iter: 1,
    });

    const config = JSON.parse(await readFile(join(ws, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(config).slice(0, 2)).toEqual(['subject', 'epic_id']);
    expect(config.epic_id).toBe(result.epic);
    expect(await readFile(join(ws, 'program.md'), 'utf8')).toBe('Make the limiter exact.\n');
    expect(await readLoopsRegistry(repo.dir)).toEqual({
      [result.epic]: { workspace: '.autoresearch', subject: 'rate limiter', store: store.kind },
    });

    const epic = await store.show(result.epic);
    expect(epic.issue_type).toBe('epic');
    expect(epic.labels).toEqual(['autoresearch']);
    const children = await store.children(result.epic);
    expect(children.map((b) => b.title)).toEqual([
      'doer-1: rate limiter',
      'judge-1: rate limiter',
      'arbiter-1: rate limiter',
      'strategist-1: rate limiter',
    ]);
    expect(result.beads.map((b) => b.id)).toEqual(children.map((b) => b.id));
    expect(result.warnings).toEqual([]);
  });

  it('creates nothing when the baseline cannot be read', async () => {
    const { repo, store, ports } = await fixture('no number here\n');
    const error = await setupLoop(repo.dir, HARD, ports).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as Error).message).toContain('The baseline could not be measured');
    expect((error as AppError).hint).toContain('no number here');
    expect(await store.list({ all: true })).toEqual([]);
    expect(await readdir(repo.dir)).not.toContain('.autoresearch');
    expect(await readLoopsRegistry(repo.dir)).toEqual({});
  });

  it('creates nothing when code in the scope already ends a test process at the baseline', async () => {
    /** The fixture, its metric's one run logging an exit called from `frame` in a test process. */
    const ending = async (frame: string) => {
      const f = await fixture();
      const exits = [
        {
          pid: 7,
          entry: join(f.repo.dir, 'test', 'a.test.mjs'),
          test: true,
          via: 'exit' as const,
          code: 0,
          frames: [join(f.repo.dir, frame), 'node:internal/modules/esm/module_job:195'],
        },
      ];
      f.ports.runMetric = async () => ({ ...processResult({ stdout: 'Score: 58.5\n' }), exits });
      return f;
    };
    // The test file's own exit is the user's: the loop is made.
    const own = await ending('test/a.test.mjs:3');
    await expect(setupLoop(own.repo.dir, HARD, own.ports)).resolves.toBeDefined();
    // Code in the scope: every change would give no score, so nothing is made.
    const { repo, store, ports } = await ending('src/limiter.ts:1');
    const error = await setupLoop(repo.dir, HARD, ports).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as Error).message).toBe(
      "At the baseline, code in the doer's scope already ended the process of test/a.test.mjs with process.exit(0), called from src/limiter.ts:1 while `node bench.js --json` ran: in the loop that gives no score, so every change would be refused for it.",
    );
    expect((error as AppError).hint).toContain('--doer-may-patch-runtime');
    expect(await store.list({ all: true })).toEqual([]);
    expect(await readdir(repo.dir)).not.toContain('.autoresearch');
  });

  it("creates nothing when code in the scope already reads in git's folder at the baseline", async () => {
    /** The fixture, its metric's one run logging a read of `.git/HEAD` from `frame`. */
    const reading = async (
      frame: string,
      at: { kind: 'state' | 'who'; path?: string; event?: string } = { kind: 'state' },
    ) => {
      const f = await fixture();
      const record = {
        pid: 7,
        event: at.event ?? 'open',
        path: at.path ?? join(f.repo.dir, '.git', 'HEAD'),
        kind: at.kind,
        write: false,
        ctimeMs: 1,
        frames: [join(f.repo.dir, frame)],
      };
      f.ports.runMetric = async () => ({
        ...processResult({ stdout: 'Score: 58.5\n' }),
        reads: { records: [record], complete: true },
      });
      return f;
    };
    // The metric's own script (or any code out of the scope) may: the loop is made.
    const own = await reading('bench.js:3');
    await expect(setupLoop(own.repo.dir, HARD, own.ports)).resolves.toBeDefined();
    const { repo, store, ports } = await reading('src/version.py:4');
    const error = await setupLoop(repo.dir, HARD, ports).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as Error).message).toBe(
      "At the baseline, code in the doer's scope already read .git/HEAD (from src/version.py:4) while `node bench.js --json` ran: in the loop a read of what no commit holds, or of what tells the code who runs it, is tamper, so every change would be refused for it.",
    );
    expect((error as AppError).hint).toContain('--doer-may-patch-runtime');
    expect(await store.list({ all: true })).toEqual([]);
    expect(await readdir(repo.dir)).not.toContain('.autoresearch');
    // Its process's command line, read where the metric and the tests would tell it apart.
    const asking = await reading('src/version.py:4', { kind: 'who', path: '/proc/7/cmdline' });
    const asked = await setupLoop(asking.repo.dir, HARD, asking.ports).catch((e: unknown) => e);
    expect((asked as Error).message).toMatch(
      /^At the baseline, code in the doer's scope already read \/proc\/self\/cmdline, which tells it who runs its process \(from src\/version\.py:4\)/,
    );
    // Or from the process itself (sys.argv), in the metric's run.
    const argv = await reading('src/version.py:4', { kind: 'who', path: '', event: 'sys.argv' });
    const read = await setupLoop(argv.repo.dir, HARD, argv.ports).catch((e: unknown) => e);
    expect((read as Error).message).toMatch(
      /^At the baseline, code in the doer's scope already read sys\.argv, which tells it who runs its process \(from src\/version\.py:4\) while `node bench\.js --json` ran/,
    );
    expect((read as AppError).hint).toContain('sys.argv');
    // Or what the process has spent so far (a test runner's imports add to it).
    const spent = await reading('src/cache.py:9', { kind: 'who', path: '', event: 'resource.getrusage()' });
    const spendingRefused = await setupLoop(spent.repo.dir, HARD, spent.ports).catch((e: unknown) => e);
    expect((spendingRefused as Error).message).toMatch(
      /^At the baseline, code in the doer's scope already read resource\.getrusage\(\), which tells it who runs its process \(from src\/cache\.py:9\)/,
    );
    expect((spendingRefused as AppError).hint).toContain('what its process has spent so far');
    // Or sys's output through another name than sys (a line that says sys.stdout is never logged).
    const output = await reading('src/cli.py:2', { kind: 'who', path: '', event: 'sys.stdout' });
    const outputRefused = await setupLoop(output.repo.dir, HARD, output.ports).catch((e: unknown) => e);
    expect((outputRefused as Error).message).toMatch(
      /^At the baseline, code in the doer's scope already read sys\.stdout, which tells it who runs its process \(from src\/cli\.py:2\)/,
    );
    expect((outputRefused as AppError).hint).toContain('read as `sys.stdout`, not through another name');
  });

  it("creates nothing when code in the scope already reads the metric's own cases at the baseline", async () => {
    const f = await fixture();
    await f.repo.write('metric/bench.js', '// the metric\n');
    await f.repo.write('metric/cases.json', '[]\n');
    f.repo.commitAll('the metric in a folder of its own');
    const key = (frame: string) => ({
      pid: 7,
      event: 'open',
      path: join(f.repo.dir, 'metric', 'cases.json'),
      kind: 'key' as const,
      write: false,
      ctimeMs: 1,
      frames: [join(f.repo.dir, frame)],
    });
    const watched: unknown[] = [];
    f.ports.runMetric = async (_argv, options) => {
      watched.push(options.watchExits);
      return {
        ...processResult({ stdout: 'Score: 58.5\n' }),
        reads: { records: [key('src/limiter.ts:2'), key('metric/bench.js:3')], complete: true },
      };
    };
    const options = { ...HARD, metric: { ...HARD.metric, command: 'node metric/bench.js --json' } };
    const error = await setupLoop(f.repo.dir, options, f.ports).catch((e: unknown) => e);
    // The baseline's run is watched with the metric's folder, as the loop's runs will be.
    expect(watched).toEqual([
      { entries: [join(f.repo.dir, 'metric', 'bench.js')], keys: [join(f.repo.dir, 'metric')] },
    ]);
    expect(error).toBeInstanceOf(AppError);
    expect((error as Error).message).toBe(
      "At the baseline, code in the doer's scope already read metric/cases.json, which the metric reads for itself (from src/limiter.ts:2) while `node metric/bench.js --json` ran: in the loop the doer's code reading what the metric compares it with is tamper, so every change would be refused for it.",
    );
    expect((error as AppError).hint).toContain('Have the metric hand that code what it reads');
    expect(await f.store.list({ all: true })).toEqual([]);
  });

  it('a baseline that already meets the target ends the loop: terminal signal, no cycle stamped', async () => {
    const { repo, store, ports } = await fixture('Score: 99\n');
    const result = await setupLoop(repo.dir, HARD, ports);
    expect(result.beads).toEqual([]);
    expect(result.warnings.join(' ')).toContain('goal_reached');
    expect(await readFile(join(result.workspace, 'terminal-signal.json'), 'utf8')).toContain('goal_reached');
    expect(await store.children(result.epic)).toEqual([]);
  });

  it('warns about uncommitted changes in scope: the baseline would not match HEAD', async () => {
    const { repo, ports } = await fixture();
    await repo.write('src/limiter.ts', 'export const x = 2;\n');
    const result = await setupLoop(repo.dir, HARD, ports);
    expect(result.warnings.join('\n')).toContain('Uncommitted changes in scope (src/limiter.ts)');
  });

  it('warns about a scope that names nothing in the repository (a typo reverts every change)', async () => {
    const { repo, ports } = await fixture();
    const result = await setupLoop(repo.dir, { ...HARD, scope: ['srcx/'] }, ports);
    expect(result.warnings).toContain(
      'The scope srcx/ does not exist in the repository: a doer may create it, but every change it makes elsewhere is reverted as out of scope (check the path for a typo).',
    );
  });

  // What the doer writes to an ignored file is put back before the metric runs, in its scope too.
  it('warns about ignored data or build outputs in scope, not caches', async () => {
    const { repo, ports } = await fixture();
    await repo.write('.gitignore', 'src/gen/\n__pycache__/\n');
    repo.commitAll('ignore the build');
    await repo.write('src/gen/limiter.js', 'export const x = 1;\n');
    await repo.write('src/__pycache__/limiter.cpython-311.pyc', 'x');
    const result = await setupLoop(repo.dir, HARD, ports);
    const warning = result.warnings.find((line) => line.startsWith('Ignored by git'));
    expect(warning).toMatch(
      /^Ignored by git and in the doer's scope \(src\/gen\): what the doer writes there is put back/,
    );
    expect(warning).toContain('(or name the path with --rebuilt)');
  });
});

describe('a soft loop', () => {
  it('warns when the artifact already speaks to a model or a grader: what the doer adds of that kind is tamper', async () => {
    const { repo, ports } = await fixture();
    expect((await setupLoop(repo.dir, SOFT, ports)).warnings).toEqual([]);
    const prompt = await fixture();
    await prompt.repo.write('docs/spec.md', '# Reviewer prompt\n\nYou are an expert reviewer of specs.\n');
    prompt.repo.commitAll('a prompt');
    expect((await setupLoop(prompt.repo.dir, SOFT, prompt.ports)).warnings).toEqual([
      'docs/spec.md already speaks to a model or a grader ("you are an expert reviewer"): text of that kind the doer adds is tamper. If the artifact is a prompt, make the loop again with --doer-may-address-judge.',
    ]);
    const allowed = await fixture();
    await allowed.repo.write('docs/spec.md', 'You are an expert reviewer.\n');
    allowed.repo.commitAll('a prompt');
    const options = { ...SOFT, doerMayAddressJudge: true };
    expect((await setupLoop(allowed.repo.dir, options, allowed.ports)).warnings).toEqual([]);
  });

  it('stamps judge-0 and arbiter-0 for the baseline and leaves the ledger empty; scope defaults to the artifact', async () => {
    const { repo, store, ports, metricCalls } = await fixture();
    const result = await setupLoop(repo.dir, SOFT, ports);
    expect(metricCalls).toEqual([]);
    expect(result.baseline.kind).toBe('pending');
    expect(result.config.scope.doer_paths).toEqual(['docs/spec.md']);
    expect(await readFile(join(result.workspace, 'research-log.jsonl'), 'utf8')).toBe('');
    const children = await store.children(result.epic);
    expect(children.map((b) => `${loopRoleOf(b)}:${b.title}`)).toEqual([
      'judge:judge-0: spec',
      'arbiter:arbiter-0: spec',
      'doer:doer-1: spec',
      'judge:judge-1: spec',
      'arbiter:arbiter-1: spec',
      'strategist:strategist-1: spec',
    ]);
    expect((await store.ready(result.epic)).map((b) => b.title)).toEqual(['judge-0: spec']);
  });

  it('refuses a rubric the doer could edit, and a missing rubric', async () => {
    const { repo, ports } = await fixture();
    await expect(setupLoop(repo.dir, { ...SOFT, scope: ['.'] }, ports)).rejects.toThrow(/scope/);
    await expect(
      setupLoop(repo.dir, { ...SOFT, metric: { ...SOFT.metric, rubric: 'missing.md' } as never }, ports),
    ).rejects.toThrow(/The rubric missing.md does not exist/);
    await expect(
      setupLoop(
        repo.dir,
        { ...SOFT, metric: { ...SOFT.metric, rubric: 'docs/rubric.md' } as never, scope: ['docs/'] },
        ports,
      ),
    ).rejects.toThrow(/inside the doer's scope/);
  });
});

describe('validation', () => {
  it('names the config field of a bad value, with the workspace file', async () => {
    const { repo, ports } = await fixture();
    const error = await setupLoop(repo.dir, { ...HARD, maxIterations: -1, plateau: 1.5 }, ports).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('.autoresearch/config.json: caps.max_iterations: expected');
    expect((error as Error).message).toContain('.autoresearch/config.json: caps.plateau_threshold: expected');
  });

  it('needs a scope when there is no artifact to default to', () => {
    const { scope: _none, ...noScope } = HARD;
    expect(() => buildConfigFile(noScope)).toThrow(/--scope/);
    expect(buildConfigFile({ ...noScope, metric: { ...HARD.metric, artifact: 'src/' } }).scope).toEqual({
      doer_paths: ['src/'],
      judge_paths: ['src/'],
    });
  });

  it('names the ignored paths the metric writes again, with --rebuilt', () => {
    expect(buildConfigFile({ ...HARD, rebuilt: ['dist/', 'data/processed/'] }).scope).toMatchObject({
      rebuilt_paths: ['dist/', 'data/processed/'],
    });
    expect(buildConfigFile(HARD).scope).not.toHaveProperty('rebuilt_paths');
  });

  it('refuses a scope that reaches the workspace or the bead store', async () => {
    const { repo, ports } = await fixture();
    await expect(setupLoop(repo.dir, { ...HARD, scope: ['.beads/'] }, ports)).rejects.toThrow(/\.beads/);
    await expect(
      setupLoop(repo.dir, { ...HARD, scope: ['loops/'], workspace: 'loops/parser' }, ports),
    ).rejects.toThrow(/overlaps loops\/parser/);
  });

  it('parses --score', () => {
    expect(parseScoreOption('exit-code')).toEqual({ from: 'exit-code' });
    expect(parseScoreOption('regex:Score: (\\d+)')).toEqual({ from: 'regex', pattern: 'Score: (\\d+)' });
    expect(parseScoreOption('regex-stderr:Tests: (\\d+)')).toEqual({
      from: 'regex',
      pattern: 'Tests: (\\d+)',
      stream: 'stderr',
    });
    expect(parseScoreOption('json:a.b[0]')).toEqual({ from: 'json', path: 'a.b[0]' });
    expect(parseScoreOption('tap')).toEqual({ from: 'tap' });
    expect(() => parseScoreOption('regex:')).toThrow(/--score/);
    expect(() => parseScoreOption('xml')).toThrow(/--score/);
  });
});

describe('an existing loop in the workspace', () => {
  it('is never overwritten without --force', async () => {
    const { repo, ports } = await fixture();
    const first = await setupLoop(repo.dir, HARD, ports);
    const ledgerBefore = await readFile(join(first.workspace, 'research-log.jsonl'), 'utf8');
    const error = (await setupLoop(repo.dir, HARD, ports).catch((e: unknown) => e)) as AppError;
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toContain(`already holds the loop of ${first.epic}`);
    expect(error.hint).toContain('--workspace');
    expect(await readFile(join(first.workspace, 'research-log.jsonl'), 'utf8')).toBe(ledgerBefore);
  });

  it('also counts a ledger with lines and no config as a loop', async () => {
    const { repo, ports } = await fixture();
    await repo.write('.autoresearch/research-log.jsonl', '{"iter":0}\n');
    await expect(setupLoop(repo.dir, HARD, ports)).rejects.toThrow(/already holds the loop/);
  });

  it('with --force is archived with its ledger, keeps user templates, and its epic stays readable', async () => {
    const { repo, ports } = await fixture();
    const first = await setupLoop(repo.dir, HARD, ports);
    await writeFile(join(first.workspace, 'templates-marker'), 'x');
    await repo.write('.autoresearch/templates/doer.hbs', 'custom {{subject}}');
    const second = await setupLoop(repo.dir, { ...HARD, subject: 'limiter v2', force: true }, ports);

    expect(second.archived).toBe(join(first.workspace, 'archive', '2026-11-22T10-00-00-000Z'));
    const archivedLedger = await readLedger(loopFiles, join(second.archived ?? '', 'research-log.jsonl'));
    expect(archivedLedger.lines).toHaveLength(1);
    expect(await readFile(join(second.workspace, 'templates', 'doer.hbs'), 'utf8')).toBe(
      'custom {{subject}}',
    );
    const registry = await readLoopsRegistry(repo.dir);
    expect(registry[first.epic]?.workspace).toBe('.autoresearch/archive/2026-11-22T10-00-00-000Z');
    expect(registry[second.epic]?.workspace).toBe('.autoresearch');
    // The user's override renders the new loop's doer.
    const doer = (await ports.store.children(second.epic)).find((b) => loopRoleOf(b) === 'doer');
    expect((await ports.store.show(doer?.id ?? '')).description).toBe('custom limiter v2\n');
  });

  it('with --force is still refused while a runner holds the loop, here or on another host', async () => {
    const { repo, ports } = await fixture();
    const first = await setupLoop(repo.dir, HARD, ports);
    const lock = (host: string) =>
      JSON.stringify({ pid: 4242, host, started_at: '2026-11-22T09:00:00Z', epic: first.epic, run_id: 'r1' });
    const force = { ...HARD, force: true };
    await writeFile(join(first.workspace, 'ralph-loop.lock'), lock('h'));
    const here = (await setupLoop(repo.dir, force, {
      ...ports,
      isProcessAlive: (pid) => pid === 4242,
    }).catch((e: unknown) => e)) as AppError;
    expect(here.exitCode).toBe(ExitCode.locked);
    // Pid 4242 is not alive here, but the lock is another machine's: its runner cannot be checked.
    await writeFile(join(first.workspace, 'ralph-loop.lock'), lock('elsewhere'));
    const there = (await setupLoop(repo.dir, force, ports).catch((e: unknown) => e)) as AppError;
    expect(there.exitCode).toBe(ExitCode.locked);
    expect(there.message).toContain('on elsewhere');
    // This host's lock whose pid is gone is a dead runner's: the loop is replaced.
    await writeFile(join(first.workspace, 'ralph-loop.lock'), lock('h'));
    await expect(setupLoop(repo.dir, force, ports)).resolves.toMatchObject({ subject: 'rate limiter' });
  });
});
