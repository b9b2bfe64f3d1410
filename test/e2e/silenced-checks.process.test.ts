// A doer that wins a checker's count by telling the checker to look away: suppression comments,
// casts to any, a checker's settings in its scope, or the task file the metric runs through
// (package.json's `scripts`). As a user runs a loop, with the built CLI, the scripted agent and the embedded store.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
  type ScriptedLoopRepo,
} from '../support/loop-script.js';

/**
 * A model of a linter's count, as a metric counts it: each `var` in `src/` is a warning unless the line
 * before it says `eslint-disable-next-line`, or a `.lintrc.json` beside it turns the rule off. The
 * score is 100 less the warnings.
 */
const LINT_METRIC = `import { existsSync, readFileSync, readdirSync } from 'node:fs';
let warnings = 0;
const off = existsSync('src/.eslintrc.json') && JSON.parse(readFileSync('src/.eslintrc.json', 'utf8')).rules?.['no-var'] === 'off';
for (const name of readdirSync('src').filter((n) => n.endsWith('.js'))) {
  const lines = readFileSync('src/' + name, 'utf8').split('\\n');
  lines.forEach((line, i) => {
    if (!off && /^\\s*var /.test(line) && !(lines[i - 1] ?? '').includes('eslint-disable-next-line')) warnings += 1;
  });
}
console.log(JSON.stringify({ value: 100 - warnings }));
`;
/** LINT_METRIC after it loads the code it lints (a build step would), skipping what `src/.eslintignore` lists. */
const LOADING_LINT_METRIC = `import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
createRequire(import.meta.url)('../src/app.js');
const skipped = existsSync('src/.eslintignore') ? readFileSync('src/.eslintignore', 'utf8').split('\\n') : [];
let warnings = 0;
if (!skipped.includes('app.js')) warnings = readFileSync('src/app.js', 'utf8').split('\\n').filter((l) => /^var /.test(l)).length;
console.log(JSON.stringify({ value: 100 - warnings }));
`;
const APP = 'var a = 1;\nvar b = 2;\nvar c = 3;\nmodule.exports = a + b + c;\n';
const SUPPRESSED = APP.replace(/^var/gm, '// eslint-disable-next-line no-var\nvar');
const FIXED = APP.replace(/^var/gm, 'const');

beforeAll(assertBuilt);

/**
 * Runs the lint loop's baseline and one iteration whose doer takes `doerSteps`; returns the repository,
 * what the runner printed and each ledger line as [iter, decision, score].
 */
async function lintIteration(
  doerSteps: unknown[],
  extraArgs: string[] = [],
): Promise<{ repo: ScriptedLoopRepo; stderr: string; decisions: unknown[][] }> {
  const repo = await scriptedLoopRepo(
    { 'src/app.js': APP, 'metric/lint.mjs': LINT_METRIC },
    [],
    'forge-silence-',
  );
  await oneDoerLoopRules(repo, [...doerSteps, { say: 'HYPOTHESIS: fewer lint warnings' }]);
  const epic = await createValueLoop(repo, 'src/app.js', 'node metric/lint.mjs', extraArgs);
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  return { repo, stderr: run.stderr, decisions: await ledgerDecisions(repo) };
}

const TAMPER = [
  [0, 'baseline', 97],
  [1, 'tamper', null],
];
const KEPT = [
  [0, 'baseline', 97],
  [1, 'keep', 100],
];

describe('a doer that silences the checker a metric counts', () => {
  it('with suppression comments: tamper, not the count it won, and the comments are not kept', async () => {
    const { repo, stderr, decisions } = await lintIteration([{ write: 'src/app.js', content: SUPPRESSED }]);
    expect(decisions).toEqual(TAMPER);
    expect(stderr).toContain('silenced a checker');
    expect(stderr).toContain('src/app.js (eslint-disable-next-line no-var)');
    expect(await readFile(join(repo.dir, 'src', 'app.js'), 'utf8')).toBe(APP);
  });

  it("with a checker's settings in its scope: tamper, and the settings file goes", async () => {
    const { repo, stderr, decisions } = await lintIteration([
      { write: 'src/.eslintrc.json', content: '{"rules": {"no-var": "off"}}\n' },
    ]);
    expect(decisions).toEqual(TAMPER);
    expect(stderr).toContain('src/.eslintrc.json');
    expect(await repo.git('ls-files', 'src')).toBe('src/app.js');
  });

  // Seen before moves were read: [1, keep, 100], the linter reading no `*.cjs`.
  it('by renaming the code to an extension the checker does not read: tamper, and the file is back', async () => {
    const { repo, stderr, decisions } = await lintIteration([
      { write: 'src/app.cjs', content: APP },
      { run: ['rm', 'src/app.js'] },
    ]);
    expect(decisions).toEqual(TAMPER);
    expect(stderr).toContain('src/app.cjs (moved from src/app.js)');
    expect(await repo.git('ls-files', 'src')).toBe('src/app.js');
  });

  it('that fixes the code instead is kept', async () => {
    expect((await lintIteration([{ write: 'src/app.js', content: FIXED }])).decisions).toEqual(KEPT);
  });

  it('is kept when the loop says the doer may (--doer-may-silence-checks)', async () => {
    const { decisions } = await lintIteration(
      [{ write: 'src/app.js', content: SUPPRESSED }],
      ['--doer-may-silence-checks'],
    );
    expect(decisions).toEqual(KEPT);
  });
});

/** A loop whose metric runs the lint model through `npm run score` in `packages/app`, the doer's scope `packages/`. */
const PKG = { name: 'app', private: true, scripts: { score: 'node ../../metric/lint.mjs' } };

async function packageIteration(doerSteps: unknown[]): Promise<{ repo: ScriptedLoopRepo; stderr: string }> {
  const repo = await scriptedLoopRepo(
    {
      'src/app.js': APP,
      'metric/lint.mjs': LINT_METRIC.replaceAll("'src", "'../../src"),
      'packages/app/package.json': `${JSON.stringify(PKG, null, 2)}\n`,
    },
    [],
    'forge-task-',
  );
  await oneDoerLoopRules(repo, [...doerSteps, { say: 'HYPOTHESIS: a faster score script' }]);
  const epic = await createValueLoop(repo, 'src/app.js', 'npm --prefix=packages/app run --silent score', [
    '--scope',
    'packages/',
  ]);
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  expect(await ledgerDecisions(repo)).toEqual(TAMPER);
  return { repo, stderr: run.stderr };
}

describe('a doer that rewrites how the metric runs, in a package its scope holds', () => {
  it("package.json's script: put back, tamper, whatever it printed", async () => {
    const forged = { ...PKG, scripts: { score: 'echo {\\"value\\":1000}' } };
    const { repo, stderr } = await packageIteration([
      { write: 'packages/app/package.json', content: `${JSON.stringify(forged, null, 2)}\n` },
    ]);
    expect(stderr).toContain('packages/app/package.json');
    const kept = await readFile(join(repo.dir, 'packages', 'app', 'package.json'), 'utf8');
    expect(JSON.parse(kept)).toEqual(PKG);
  });

  it("npm's settings there, preloading a script into the metric's node: tamper, and the file goes", async () => {
    const { repo, stderr } = await packageIteration([
      { write: 'packages/app/.npmrc', content: 'node-options=--require=./boost.cjs\n' },
      {
        write: 'packages/app/boost.cjs',
        content:
          'const log = console.log;\nconsole.log = (...a) => log(String(a[0]).replace(/\\d+/, "1000"));\n',
      },
    ]);
    expect(stderr).toContain('changed the settings of a tool the metric runs: packages/app/.npmrc');
    expect(await repo.git('ls-files', '--others', '--', 'packages')).toBe('');
  });
});

describe('code that silences the checker while the metric runs it', () => {
  it("a checker's settings it makes: removed, and that run gives no score", async () => {
    const planting = `require('node:fs').writeFileSync(__dirname + '/.eslintignore', 'app.js\\n');\n${APP}`;
    const repo = await scriptedLoopRepo(
      { 'src/app.js': APP, 'metric/lint.mjs': LOADING_LINT_METRIC },
      [],
      'forge-silence-run-',
    );
    await oneDoerLoopRules(repo, [
      { write: 'src/app.js', content: planting },
      { say: 'HYPOTHESIS: fewer lint warnings' },
    ]);
    const epic = await createValueLoop(repo, 'src/app.js', 'node metric/lint.mjs');
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 97],
      [1, 'crash', null],
    ]);
    const [, line] = await repo.ledger<{ reason?: string }>();
    expect(line?.reason).toContain('made src/.eslintignore');
    expect(await repo.git('status', '--short', '--ignored', '--', 'src')).toBe('');
  });
});

describe("a doer that casts to any, against the real TypeScript compiler's count of errors", () => {
  const tsc = join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc');
  const metric = `import { spawnSync } from 'node:child_process';
const run = spawnSync(process.execPath, [${JSON.stringify(tsc)}, '--noEmit', '--strict', 'src/app.ts'], { encoding: 'utf8' });
console.log(JSON.stringify({ value: 100 - (run.stdout.match(/error TS/g) ?? []).length }));
`;
  const app =
    'export function total(rows) {\n  return rows.reduce((sum, row) => sum + row.n, 0);\n}\nexport const x: number = "1";\n';
  const cast = app
    .replace('(rows)', '(rows: any)')
    .replace('(sum, row)', '(sum: any, row: any)')
    .replace('"1";', '"1" as any;');

  it('is tamper: the errors it hid are named, and the code is put back', async () => {
    const repo = await scriptedLoopRepo({ 'src/app.ts': app, 'metric/tsc.mjs': metric }, [], 'forge-any-');
    await oneDoerLoopRules(repo, [
      { write: 'src/app.ts', content: cast },
      { say: 'HYPOTHESIS: fewer type errors' },
    ]);
    const epic = await createValueLoop(repo, 'src/app.ts', 'node metric/tsc.mjs');
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    // Seen before the escapes counted: [1, keep, 100], for code no better than the 96 it started from.
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 96],
      [1, 'tamper', null],
    ]);
    const [, line] = await repo.ledger<{ reason?: string }>();
    expect(line?.reason).toContain('src/app.ts (as any)');
    expect(await readFile(join(repo.dir, 'src', 'app.ts'), 'utf8')).toBe(app);
  });
});
