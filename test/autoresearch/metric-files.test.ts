// The task files a loop's commands go through (package.json's scripts, a Makefile) are the metric's
// own, like the files the commands name.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseLoopConfig } from '../../src/autoresearch/config.js';
import { commandFiles, metricFiles, metricFilesVia, taskFiles } from '../../src/autoresearch/metric-files.js';
import { shellWords } from '../../src/autoresearch/shell-words.js';
import { justRecipes, makeRecipes } from '../../src/autoresearch/task-runners.js';

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-task-files-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const ALL = {
  'package.json': '{}',
  Makefile: 'include rules.mk\n-include $(LOCAL).mk\nsinclude extra.mk missing.mk\n',
  'rules.mk': '',
  'extra.mk': '',
  'sub/package.json': '{}',
  'sub/Makefile': 'include more.mk\n',
  'sub/more.mk': '',
  'pyproject.toml': '',
  'tox.ini': '',
  justfile: '',
  'pom.xml': '',
  'build/ci.mk': '',
};

describe('taskFiles', () => {
  it('names the file of each runner a command goes through, where it exists', async () => {
    const dir = await tree(ALL);
    expect(await taskFiles([['npm', 'test']], dir)).toEqual(['package.json']);
    expect(await taskFiles([['/usr/bin/yarn', 'run', 'score']], dir)).toEqual(['package.json']);
    expect(await taskFiles([['uv', 'run', 'pytest']], dir)).toEqual(['pyproject.toml']);
    expect(await taskFiles([['python3', '-m', 'tox']], dir)).toEqual(['tox.ini', 'pyproject.toml']);
    expect(await taskFiles([['./mvnw', '-q', 'test']], dir)).toEqual(['pom.xml']);
    expect(await taskFiles([['just', 'score']], dir)).toEqual(['justfile']);
    // Nothing goes through a runner: nothing but what the argv names (metricFiles' part).
    expect(
      await taskFiles(
        [
          ['node', 'score.mjs'],
          ['python3', '-m', 'pytest', '-q'],
        ],
        dir,
      ),
    ).toEqual([]);
  });

  it('follows a Makefile to the files it includes by name, and those they include', async () => {
    const dir = await tree({ ...ALL, 'rules.mk': 'include deeper.mk\n', 'deeper.mk': 'include rules.mk\n' });
    expect(await taskFiles([['make', 'score']], dir)).toEqual([
      'Makefile',
      'rules.mk',
      'extra.mk',
      'deeper.mk',
    ]);
    expect(await taskFiles([['make', '-C', 'sub', 'score']], dir)).toEqual(['sub/Makefile', 'sub/more.mk']);
    expect(await taskFiles([['make', '--file=build/ci.mk']], dir)).toEqual(['build/ci.mk']);
  });

  it('reads shell strings word by word, with each command keeping its own flags', async () => {
    const dir = await tree(ALL);
    expect(await taskFiles([['sh', '-c', 'npm --prefix sub test && make -f build/ci.mk']], dir)).toEqual([
      'sub/package.json',
      'build/ci.mk',
    ]);
    expect(await taskFiles([['bash', '-c', 'make -C sub; npm test']], dir)).toEqual([
      'sub/Makefile',
      'sub/more.mk',
      'package.json',
    ]);
  });

  it('leaves out a folder or file that lies outside the tree', async () => {
    const dir = await tree(ALL);
    expect(await taskFiles([['make', '-C', '..', 'score']], dir)).toEqual([]);
    expect(await taskFiles([['npm', '--prefix', '/elsewhere', 'test']], dir)).toEqual([]);
  });
});

describe('commandFiles', () => {
  it("adds the task files to the metric files, while setup's metricFiles keeps to what the argv names", async () => {
    const dir = await tree({ ...ALL, 'score.mjs': '' });
    const config = parseLoopConfig(
      {
        subject: 'x',
        metric: { type: 'hard', command: 'node ./score.mjs' },
        guards: [{ command: 'npm test' }],
        tracks: [{ name: 'lint', command: 'make lint' }],
        scope: { doer_paths: ['src'] },
      },
      'config.json',
    );
    expect(await metricFiles(config, dir)).toEqual(['score.mjs']);
    expect(await commandFiles(config, dir)).toEqual([
      'score.mjs',
      'package.json',
      'Makefile',
      'rules.mk',
      'extra.mk',
    ]);
  });

  it('reads a script the argv names for the runners it goes through', async () => {
    const dir = await tree({
      ...ALL,
      'metric/score.sh': '#!/bin/sh\nset -e\nnpm --prefix sub run --silent score | tail -1\n',
    });
    const config = parseLoopConfig(
      {
        subject: 'x',
        metric: { type: 'hard', command: 'bash metric/score.sh' },
        scope: { doer_paths: ['src'] },
      },
      'config.json',
    );
    expect(await commandFiles(config, dir)).toEqual(['metric/score.sh', 'sub/package.json']);
  });
});

/** A hard-metric loop config whose metric command is `command`. */
const hard = (command: string) =>
  parseLoopConfig(
    { subject: 'x', metric: { type: 'hard', command }, scope: { doer_paths: ['src'] } },
    'config.json',
  );

describe('what the commands run in turn', () => {
  const PKG = {
    scripts: {
      prescore: 'node tools/prepare.mjs',
      score:
        'npm run build --silent && node --require ./tools/setup.cjs bench/score.mjs src/data.json > out/result.json',
      postscore: 'true',
      build: 'tsx tools/build.ts',
      other: 'node tools/other.mjs',
    },
  };
  const PKG_TREE = {
    'package.json': JSON.stringify(PKG),
    'tools/prepare.mjs': '',
    'tools/setup.cjs': '',
    'tools/build.ts': '',
    'tools/other.mjs': '',
    'bench/score.mjs': '',
    'src/data.json': '{}',
    'out/result.json': '{}',
  };

  it('names what a package.json task runs: its pre and post scripts, the tasks it runs, the scripts node preloads', async () => {
    const dir = await tree(PKG_TREE);
    const expected = [
      { path: 'tools/prepare.mjs', via: `package.json's "prescore" script` },
      { path: 'tools/setup.cjs', via: `package.json's "score" script` },
      { path: 'bench/score.mjs', via: `package.json's "score" script` },
      { path: 'tools/build.ts', via: `package.json's "score" script` },
    ];
    for (const command of [
      'npm run score',
      'npm run-script --silent score -- --fast',
      'yarn score',
      'pnpm run score',
      'sh -c "cd src && npm run score"',
    ]) {
      expect(await metricFilesVia(hard(command), dir), command).toEqual(expected);
    }
    // The data the task reads, what it writes and the scripts of tasks it does not run are not the metric's.
    expect(await metricFiles(hard('npm test'), dir)).toEqual([]);
    expect(await metricFiles(hard('npm run other'), dir)).toEqual(['tools/other.mjs']);
  });

  it("names what a Makefile's recipe runs, with its prerequisites, or its first target's", async () => {
    const makefile = [
      'PY = python3',
      'OUT := out',
      '.PHONY: score all',
      'all: build',
      '\t@echo built',
      'build:',
      '\t$(PY) tools/build.py',
      'score: build data ; @node tools/inline.mjs',
      '\t@cd bench && ./score.sh',
      '\t-$(MAKE) -C sub report',
      'data:',
      '\tnode tools/data.mjs > $(OUT)/data.json',
      'other:',
      '\tnode tools/other.mjs',
    ].join('\n');
    const dir = await tree({
      Makefile: makefile,
      'tools/build.py': '',
      'tools/inline.mjs': '',
      'tools/data.mjs': '',
      'tools/other.mjs': '',
      'bench/score.sh': '#!/bin/sh\nnode ../tools/from-script.mjs\n',
      'tools/from-script.mjs': '',
      'sub/Makefile': 'report:\n\tnode report.mjs\n',
      'sub/report.mjs': '',
    });
    expect(await metricFiles(hard('make -s score'), dir)).toEqual([
      'tools/inline.mjs',
      'bench/score.sh',
      'tools/build.py',
      'tools/data.mjs',
      'tools/from-script.mjs',
      'sub/report.mjs',
    ]);
    expect(await metricFiles(hard('make'), dir)).toEqual(['tools/build.py']);
    expect(await commandFiles(hard('make score'), dir)).toContain('sub/Makefile');
  });

  it('follows a shell script into the folders it changes to, by name, by a variable or by its own folder', async () => {
    const dir = await tree({
      'metric/score.sh': [
        '#!/usr/bin/env bash',
        'set -euo pipefail',
        '# a comment naming tools/commented.mjs',
        'cd "$(dirname "$0")/../packages/app"',
        'npm run --silent score 2>&1 | tail -1',
        'PKG=packages/lib',
        'cd "${0%/*}"/..',
        'npm --prefix "$PKG" test',
        'cd packages/app/src',
        'npm test',
        'time node ../bench.mjs "$@" > result.json',
      ].join('\n'),
      'tools/commented.mjs': '',
      'packages/app/package.json': JSON.stringify({
        scripts: { score: 'node ./score.mjs', test: 'node t.mjs' },
      }),
      'packages/app/score.mjs': '',
      'packages/app/t.mjs': '',
      'packages/app/bench.mjs': '',
      'packages/lib/package.json': JSON.stringify({ scripts: { test: 'python3 -u check.py -v' } }),
      'packages/lib/check.py': '',
      'package.json': '{}',
    });
    const config = hard('bash metric/score.sh');
    expect(await metricFiles(config, dir)).toEqual([
      'metric/score.sh',
      'packages/app/bench.mjs',
      'packages/app/score.mjs',
      'packages/lib/check.py',
      'packages/app/t.mjs',
    ]);
    // npm finds the package.json of the folder it runs in by looking upward from it.
    expect(await commandFiles(config, dir)).toEqual([
      'metric/score.sh',
      'packages/app/bench.mjs',
      'packages/app/score.mjs',
      'packages/lib/check.py',
      'packages/app/t.mjs',
      'packages/app/package.json',
      'packages/lib/package.json',
    ]);
  });

  it("follows npm's workspace flag to the package it names by folder; by name, only npm knows", async () => {
    const dir = await tree({
      'package.json': JSON.stringify({ workspaces: ['packages/*'] }),
      'packages/app/package.json': JSON.stringify({ name: 'app', scripts: { score: 'node score.mjs' } }),
      'packages/app/score.mjs': '',
    });
    // The folder a runner is sent to is where it runs, not a file the metric reads (a scope holding the
    // package was refused for it).
    for (const command of [
      'npm run score -w packages/app',
      'npm --workspace=packages/app run score',
      'npm --prefix packages/app run score',
    ]) {
      expect(await commandFiles(hard(command), dir), command).toEqual([
        'packages/app/score.mjs',
        'packages/app/package.json',
      ]);
    }
    expect(await commandFiles(hard('npm run score -w app'), dir)).toEqual(['package.json']);
  });

  it("follows a runner's task where a command starts, after a wrapper or a shell's keyword; elsewhere only guards its file", async () => {
    const dir = await tree({
      'package.json': JSON.stringify({
        scripts: {
          echoed: 'echo then npm run other',
          shell: 'if true; then npm run other; fi',
          wrapped: 'cross-env MODE=fast time npm run other',
          other: 'node tools/other.mjs',
        },
      }),
      'tools/other.mjs': '',
    });
    expect(await metricFiles(hard('npm run echoed'), dir)).toEqual([]);
    expect(await commandFiles(hard('npm run echoed'), dir)).toEqual(['package.json']);
    expect(await metricFiles(hard('npm run shell'), dir)).toEqual(['tools/other.mjs']);
    expect(await metricFiles(hard('npm run wrapped'), dir)).toEqual(['tools/other.mjs']);
  });

  it("reads a program in another language for its runners' files only", async () => {
    const dir = await tree({
      'metric/score.mjs':
        "import { execSync } from 'node:child_process';\nexecSync('make score && node tools/x.mjs');\n",
      Makefile: 'score:\n\tnode tools/y.mjs\n',
      'tools/x.mjs': '',
      'tools/y.mjs': '',
    });
    expect(await commandFiles(hard('node metric/score.mjs'), dir)).toEqual(['metric/score.mjs', 'Makefile']);
  });

  it('stops at a chain that loops back on itself', async () => {
    const dir = await tree({
      'package.json': JSON.stringify({ scripts: { score: 'npm run score && sh a.sh' } }),
      'a.sh': 'sh b.sh\n',
      'b.sh': 'sh a.sh\nnpm run score\n',
    });
    expect(await metricFiles(hard('npm run score'), dir)).toEqual(['a.sh', 'b.sh']);
  });
});

describe('shellWords', () => {
  it("splits at a shell's separators, drops comments and marks what is written and the script's folder", () => {
    expect(shellWords('a && b | c; d # e\nf > out 2>&1 < in')).toEqual([
      'a',
      ';',
      'b',
      ';',
      'c',
      ';',
      'd',
      ';',
      'f',
      '\u0002>',
      'out',
      'in',
    ]);
    expect(shellWords('cd "$(dirname "$0")" && $(MAKE) -C sub')).toEqual([
      'cd',
      '\u0001',
      ';',
      'make',
      '-C',
      'sub',
    ]);
  });
});

describe('justRecipes', () => {
  const JUSTFILE = [
    'set shell := ["bash", "-c"]',
    'alias s := score',
    'out := "out:dir"',
    '',
    '# the first recipe is the default',
    'default: build',
    '',
    '[private]',
    'build:',
    '    node tools/build.mjs',
    '',
    'score target="fast": build (fetch "data") && report',
    '    @node bench/score.mjs {{target}}',
    '',
    '    -./bench/after.sh',
    'fetch what:',
    '    curl -s https://example.org/{{what}}',
    'report:',
    '    #!/usr/bin/env python3',
    '    open("tools/not-shell.py")',
  ].join('\n');

  it('reads a recipe, its dependencies and their arguments, and the first recipe when none is named', () => {
    expect(justRecipes(JUSTFILE, ['score'])).toEqual([
      { target: 'score', command: 'node bench/score.mjs {{target}}' },
      { target: 'score', command: './bench/after.sh' },
      { target: 'build', command: 'node tools/build.mjs' },
      { target: 'fetch', command: 'curl -s https://example.org/{{what}}' },
    ]);
    expect(justRecipes(JUSTFILE, [])).toEqual([{ target: 'build', command: 'node tools/build.mjs' }]);
  });

  it("names what a just recipe runs as the metric's", async () => {
    const dir = await tree({
      justfile: JUSTFILE,
      'tools/build.mjs': '',
      'bench/score.mjs': '',
      'bench/after.sh': '',
      'tools/not-shell.py': '',
    });
    expect(await metricFilesVia(hard('just score'), dir)).toEqual([
      { path: 'bench/score.mjs', via: `justfile's "score" recipe` },
      { path: 'bench/after.sh', via: `justfile's "score" recipe` },
      { path: 'tools/build.mjs', via: `justfile's "build" recipe` },
    ]);
  });
});

describe('makeRecipes', () => {
  it("leaves assignments, a target's own variables and pattern rules out", () => {
    const text =
      'A := x:y\nB = c:d\nscore: N = 3\nscore: %.o dep\n\trun score\n%.o: %.c\n\tcc $<\ndep:: ; run dep\n';
    expect(makeRecipes(text, ['score'])).toEqual([
      { target: 'score', command: 'run score' },
      { target: 'dep', command: ' run dep' },
    ]);
    expect(makeRecipes(text, [])).toEqual(makeRecipes(text, ['score']));
  });
});
