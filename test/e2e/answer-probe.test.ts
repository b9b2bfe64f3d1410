// The answer probe as a user meets it: `forge-pack loop` with a metric that times code, run in a temp
// git repo. A metric that scores the scope's code answering nothing as well as its baseline does not
// check the answers, and setup says so; one that checks them is left alone. Nothing of the user's
// changes, and no checkout is left behind.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { answerlessModule } from '../../src/autoresearch/answer-stubs.js';
import { createForgePackProgram } from '../../src/cli/forge-pack.js';
import { runProgram } from '../../src/cli/main.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';

async function forgePack(
  repo: TempRepo,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const argv = ['node', 'forge-pack', '--store', 'embedded', ...args];
  const code = await runProgram('forge-pack', createForgePackProgram, argv, {
    cwd: repo.dir,
    env: { ...repo.env, NO_COLOR: '1', LANG: 'en_US.UTF-8' },
    stdout: { write: (text: string) => void (stdout += text) },
    stderr: { write: (text: string) => void (stderr += text) },
    stderrIsTTY: false,
  });
  return { code, stdout, stderr };
}

/** A benchmark of `work` that prints how fast it ran; `checks`: it scores 0 when an answer is wrong. */
function bench(checks: boolean): string {
  return `const work = require('../src/work.js');
const t0 = performance.now();
let right = true;
for (let i = 0; i < 20; i++) right = work(2000000) === 1999999000000 && right;
const score = Math.round(100000 / (performance.now() - t0));
console.log(JSON.stringify({ score: ${checks ? 'right ? score : 0' : 'score'} }));
`;
}

const WORK = 'module.exports = (n) => { let s = 0; for (let i = 0; i < n; i++) s += i; return s; };\n';

function loopArgs(metric: string, ...more: string[]): string[] {
  return [
    '--json',
    'loop',
    'faster work',
    '--program',
    'Make work() faster.',
    '--metric-command',
    metric,
    '--score',
    'json:score',
    '--scope',
    'src/',
    ...more,
  ];
}

interface Created {
  warnings: string[];
  answer_probe: {
    files: string[];
    stubbed: number;
    score: number | null;
    loaded: boolean;
    unchecked: boolean;
  } | null;
}

describe('forge-pack loop: does the metric check the answers it times', () => {
  it('says so when the metric scores the scope answering nothing as well as its baseline', async () => {
    const repo = await createTempRepo({ 'scripts/bench.js': bench(false), 'src/work.js': WORK });
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created;
    expect(result.answer_probe).toMatchObject({ files: ['src/work.js'], loaded: true, unchecked: true });
    expect(result.warnings.join('\n')).toMatch(
      /the metric scored \d+ with src\/work\.js answering nothing \(its baseline: \d+\): it does not check what that code answers/,
    );
    // Nowhere an agent reads: not in the ledger (its baseline line alone), nor in the workspace.
    const ledger = (await repo.read('.autoresearch/research-log.jsonl')).trim().split('\n');
    expect(ledger.map((line) => (JSON.parse(line) as { decision?: string }).decision)).toEqual(['baseline']);
    const found = spawnSync('grep', ['-rlI', 'answering nothing', '.autoresearch', '.forge'], {
      cwd: repo.dir,
    });
    expect(found.status, String(found.stdout)).toBe(1);
    // The user's tree as it was, and no checkout left.
    expect(await repo.read('src/work.js')).toBe(WORK);
    expect(
      execFileSync('git', ['worktree', 'list'], { cwd: repo.dir, encoding: 'utf8' }).trim().split('\n'),
    ).toHaveLength(1);
  });

  it("runs the metric with the repository's installed dependencies, which git ignores", async () => {
    const repo = await createTempRepo({
      '.gitignore': 'node_modules/\n',
      'node_modules/clock/index.js': 'module.exports = () => performance.now();\n',
      'scripts/bench.js': bench(false).replaceAll('performance.now()', "require('clock')()"),
      'src/work.js': WORK,
    });
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    expect((JSON.parse(created.stdout) as Created).answer_probe).toMatchObject({
      loaded: true,
      unchecked: true,
    });
  });

  it('leaves a metric that checks the answers alone', async () => {
    const repo = await createTempRepo({ 'scripts/bench.js': bench(true), 'src/work.js': WORK });
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created;
    expect(result.answer_probe).toEqual({
      files: ['src/work.js'],
      stubbed: 1,
      score: 0,
      loaded: true,
      unchecked: false,
      // Every call it makes is as large as the first: none went unanswered in the second round.
      larger_calls: { files: [], score: expect.any(Number), unchecked: false },
    });
    expect(result.warnings.join('\n')).not.toMatch(/check the answers/);
  });

  it('tells nothing of a metric that loads the code from elsewhere than the checkout', async () => {
    const repo = await createTempRepo({ 'src/work.js': WORK });
    // The repository's own file by its absolute path: the checkout's stub is never loaded.
    await repo.write(
      'scripts/bench.js',
      bench(false).replace("'../src/work.js'", JSON.stringify(`${repo.dir}/src/work.js`)),
    );
    repo.commitAll('the bench');
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created;
    expect(result.answer_probe).toMatchObject({ files: [], stubbed: 1, loaded: false, unchecked: false });
    expect(result.warnings.join('\n')).not.toMatch(/check the answers/);
  });

  it('probes ES modules and Python the same way, by the names they export', async () => {
    const esm = await createTempRepo({
      'scripts/bench.mjs': `import { work } from '../src/work.mjs';
const t0 = performance.now();
for (let i = 0; i < 20; i++) work(2000000);
console.log(JSON.stringify({ score: Math.round(100000 / (performance.now() - t0)) }));
`,
      'src/work.mjs':
        'export function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }\n',
    });
    const fromEsm = await forgePack(esm, loopArgs('node scripts/bench.mjs'));
    expect(fromEsm.code, fromEsm.stderr).toBe(0);
    expect((JSON.parse(fromEsm.stdout) as Created).answer_probe).toMatchObject({ unchecked: true });

    const python = await createTempRepo({
      'scripts/bench.py': `import json, sys, time
sys.path.insert(0, 'src')
from work import work
t0 = time.perf_counter()
for _ in range(5):
    work(200000)
print(json.dumps({'score': round(1 / (time.perf_counter() - t0))}))
`,
      'src/work.py': 'def work(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n',
    });
    const fromPython = await forgePack(python, loopArgs('python3 -B scripts/bench.py'));
    expect(fromPython.code, fromPython.stderr).toBe(0);
    expect((JSON.parse(fromPython.stdout) as Created).answer_probe).toMatchObject({
      files: ['src/work.py'],
      unchecked: true,
    });
  });

  it('runs no probe with --no-answer-probe, nor for a scope without code', async () => {
    const repo = await createTempRepo({ 'scripts/bench.js': bench(false), 'src/work.js': WORK });
    const skipped = await forgePack(repo, loopArgs('node scripts/bench.js', '--no-answer-probe'));
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stderr).not.toMatch(/Answer probe/);
    expect((JSON.parse(skipped.stdout) as Created).answer_probe).toBeNull();

    const data = await createTempRepo({
      'metric.mjs':
        "import { readFileSync } from 'node:fs';\nconsole.log(JSON.stringify({ score: readFileSync('src/table.txt', 'utf8').length }));\n",
      'src/table.txt': 'abc\n',
    });
    const created = await forgePack(data, loopArgs('node metric.mjs'));
    expect(created.code, created.stderr).toBe(0);
    expect((JSON.parse(created.stdout) as Created).answer_probe).toBeNull();
  });

  it('tells nothing of a metric that runs none of the scope', async () => {
    const apart = await createTempRepo({
      'metric.mjs': 'console.log(\'{"score": 5}\');\n',
      'src/work.js': WORK,
    });
    const created = await forgePack(apart, loopArgs('node metric.mjs'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created;
    expect(result.answer_probe).toEqual({ files: [], stubbed: 1, score: 5, loaded: false, unchecked: false });
    expect(result.warnings.join('\n')).not.toMatch(/check the answers|answer probe/);
  });
});

/**
 * A benchmark that times the scope's `src/solve.js` as a program of its own, one process a run; with
 * `checks`, it scores 0 unless the program printed the right sum.
 */
function programBench(checks: boolean): string {
  return `const { execFileSync } = require('node:child_process');
const t0 = performance.now();
let right = true;
for (let i = 0; i < 3; i++) {
  const out = execFileSync(process.execPath, ['src/solve.js', '6000000'], { encoding: 'utf8' });
  right = out.trim() === '17999997000000' && right;
}
const score = Math.round(100000 / (performance.now() - t0));
console.log(JSON.stringify({ score: ${checks ? 'right ? score : 0' : 'score'} }));
`;
}

const SOLVE =
  'const n = BigInt(process.argv[2]);\nlet s = 0n;\nfor (let i = 0n; i < n; i++) s += i;\nconsole.log(String(s));\n';

describe('forge-pack loop: the answer probe, for code the metric runs as a program', () => {
  it('says so when the metric times a program of the scope and never reads what it printed', async () => {
    const repo = await createTempRepo({ 'scripts/bench.js': programBench(false), 'src/solve.js': SOLVE });
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created;
    expect(result.answer_probe).toMatchObject({ files: ['src/solve.js'], loaded: true, unchecked: true });
    expect(result.warnings.join('\n')).toMatch(/with src\/solve\.js answering nothing/);
  });

  it('leaves alone a metric that checks what the program printed', async () => {
    const repo = await createTempRepo({ 'scripts/bench.js': programBench(true), 'src/solve.js': SOLVE });
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    expect((JSON.parse(created.stdout) as Created).answer_probe).toMatchObject({
      files: ['src/solve.js'],
      score: 0,
      unchecked: false,
    });
  });

  it('runs a Python program by its path as the metric does, its first line and mode kept', async () => {
    const repo = await createTempRepo({
      'bench.py': `import json, subprocess, time
t0 = time.perf_counter()
for _ in range(3):
    subprocess.run(['./src/solve.py', '20000000'], check=True, capture_output=True)
print(json.dumps({'score': round(100 / (time.perf_counter() - t0))}))
`,
      'src/solve.py': '#!/usr/bin/env python3\nimport sys\nprint(sum(range(int(sys.argv[1]))))\n',
    });
    await chmod(`${repo.dir}/src/solve.py`, 0o755);
    repo.commitAll('the program runs by its path');
    const created = await forgePack(repo, loopArgs('python3 -B bench.py'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created;
    expect(result.answer_probe).toMatchObject({ files: ['src/solve.py'], loaded: true, unchecked: true });
    expect(result.answer_probe?.score ?? 0).toBeGreaterThan(0);
  });
});

describe('a module that answers nothing', () => {
  it('exports the names the ES module did, each answering undefined, and passes its re-exports on', () => {
    const stub = answerlessModule(
      'src/a.ts',
      [
        'export async function load() {}',
        'export const LIMIT = 5;',
        'export class Parser {}',
        'export { helper as assist, other };',
        "export * from './more.js';",
        'export default parse;',
        'export type Shape = { a: number };',
      ].join('\n'),
    );
    expect(stub).toContain('export const load = forgeAnswerless("load");');
    expect(stub).toContain('export const LIMIT = forgeAnswerless("LIMIT");');
    expect(stub).toContain('export const Parser = forgeAnswerless("Parser");');
    expect(stub).toContain('export const assist = forgeAnswerless("assist");');
    expect(stub).toContain('export const other = forgeAnswerless("other");');
    expect(stub).toContain("export * from './more.js';");
    expect(stub).toContain("export default forgeAnswerless('default');");
    expect(stub).not.toContain('Shape');
  });

  it('names the CommonJS exports for an ES import of them, and answers any other', () => {
    const stub = answerlessModule('src/a.cjs', 'exports.parse = parse;\nmodule.exports.load = load;\n') ?? '';
    expect(stub).toContain('exports.parse = undefined;');
    expect(stub).toContain('exports.load = undefined;');
    const fromObject = answerlessModule('src/b.js', 'module.exports = { work, other: 2 };\n') ?? '';
    expect(fromObject).toContain('exports.work = undefined;');
    expect(fromObject).toContain('exports.other = undefined;');
    expect(answerlessModule('src/w.py', 'def work(n):\n    return n\n')).toContain('def __getattr__(name):');
    expect(answerlessModule('src/data.json', '{}')).toBeUndefined();
    // A program keeps its first line when that says what runs it.
    expect(answerlessModule('bin/cli.js', '#!/usr/bin/env node\nrequire("./x");\n')).toMatch(
      /^#!\/usr\/bin\/env node\n/,
    );
  });
});

/** A benchmark that checks `work` on a small case, then times large calls; `checks`: their answers too. */
function smallCaseBench(checks: boolean): string {
  return `const work = require('../src/work.js');
if (work(10) !== 45) {
  console.error('work(10) is wrong');
  process.exit(1);
}
const t0 = performance.now();
let right = true;
for (let i = 0; i < 20; i++) right = work(2000000) === 1999999000000 && right;
const score = Math.round(100000 / (performance.now() - t0));
console.log(JSON.stringify({ score: ${checks ? 'right ? score : 0' : 'score'} }));
`;
}

describe('forge-pack loop: the answer probe, for a metric that checks small cases and times large ones', () => {
  it('says so when the large calls it times answering nothing score as well as their answers', async () => {
    const repo = await createTempRepo({ 'scripts/bench.js': smallCaseBench(false), 'src/work.js': WORK });
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created & {
      answer_probe: { larger_calls?: { files: string[]; unchecked: boolean } };
    };
    // The small case failed when everything answered nothing: that round found the answers looked at.
    expect(result.answer_probe).toMatchObject({ files: ['src/work.js'], score: null, unchecked: false });
    expect(result.answer_probe.larger_calls).toMatchObject({ files: ['src/work.js'], unchecked: true });
    // Each round said as it starts, on stderr (the JSON alone on stdout).
    expect(created.stderr).toMatch(
      /Answer probe: the metric once more, with the scope's code answering nothing \(1 file; --no-answer-probe skips this\)…\nAnswer probe: once more, with the code it loads answering only calls no larger than the smallest so far…/,
    );
    expect(result.warnings.join('\n')).toMatch(
      /with src\/work\.js answering only calls no larger than the smallest before them \(its baseline: \d+\): it checks the answers of small calls and times large ones it does not check/,
    );
    expect(await repo.read('src/work.js')).toBe(WORK);
    expect(
      execFileSync('git', ['worktree', 'list'], { cwd: repo.dir, encoding: 'utf8' }).trim().split('\n'),
    ).toHaveLength(1);
  });

  it('leaves alone a metric that checks the answers of the calls it times', async () => {
    const repo = await createTempRepo({ 'scripts/bench.js': smallCaseBench(true), 'src/work.js': WORK });
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created & {
      answer_probe: { larger_calls?: { files: string[]; score: number; unchecked: boolean } };
    };
    expect(result.answer_probe.larger_calls).toEqual({ files: ['src/work.js'], score: 0, unchecked: false });
    expect(result.warnings.join('\n')).not.toMatch(/answering only calls/);
  });

  it('finds one that times its large case first and checks a small one after', async () => {
    const repo = await createTempRepo({
      'scripts/bench.js': `const work = require('../src/work.js');
const t0 = performance.now();
for (let i = 0; i < 20; i++) work(2000000);
const score = Math.round(100000 / (performance.now() - t0));
if (work(10) !== 45) process.exit(1);
console.log(JSON.stringify({ score }));
`,
      'src/work.js': WORK,
    });
    const created = await forgePack(repo, loopArgs('node scripts/bench.js'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created & {
      answer_probe: { larger_calls?: { files: string[]; unchecked: boolean } };
    };
    expect(result.answer_probe).toMatchObject({ score: null, unchecked: false });
    expect(result.answer_probe.larger_calls).toMatchObject({ files: ['src/work.js'], unchecked: true });
  });

  it('finds it in Python too', async () => {
    const repo = await createTempRepo({
      'scripts/bench.py': `import json, sys, time
sys.path.insert(0, 'src')
from work import work
assert work(10) == 45
t0 = time.perf_counter()
for _ in range(5):
    work(200000)
print(json.dumps({'score': round(1 / (time.perf_counter() - t0))}))
`,
      'src/work.py': 'def work(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n',
    });
    const created = await forgePack(repo, loopArgs('python3 -B scripts/bench.py'));
    expect(created.code, created.stderr).toBe(0);
    const result = JSON.parse(created.stdout) as Created & {
      answer_probe: { larger_calls?: { files: string[]; unchecked: boolean } };
    };
    expect(result.answer_probe.larger_calls).toMatchObject({ files: ['src/work.py'], unchecked: true });
  });
});
