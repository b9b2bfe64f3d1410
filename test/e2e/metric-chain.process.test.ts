// The metric's command reaches its scoring code through other files: a task runner's script
// (package.json's `scripts`, a Makefile's recipe, tox's environment, a Taskfile's task) or a shell script that changes folder first. What
// those run is the metric's own, as if the argv named it. As a user runs a loop, with the built CLI,
// the scripted agent and the embedded store.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
  valueLoopArgs,
} from '../support/loop-script.js';

const SCORE = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync(new URL('../src/value.txt', import.meta.url), 'utf8').trim()) }));
`;

beforeAll(assertBuilt);

describe("a scoring script the metric reaches through a task runner's script", () => {
  it.each([
    [
      'package.json',
      { 'package.json': JSON.stringify({ scripts: { score: 'node src/bench/score.mjs' } }) },
      'npm run --silent score',
      `package.json's "score" script`,
    ],
    [
      'a Makefile',
      { Makefile: 'all:\n\t@echo no\nscore: data\n\t@node src/bench/score.mjs\ndata:\n\t@true\n' },
      'make -s score',
      `Makefile's "score" recipe`,
    ],
    [
      "tox's environment",
      { 'tox.ini': '[testenv:score]\ncommands =\n    node src/bench/score.mjs {posargs}\n' },
      'tox -q -e score',
      `tox.ini's "score" environment`,
    ],
    [
      "a Taskfile's task",
      {
        'Taskfile.yml':
          "version: '3'\ntasks:\n  score:\n    dir: src\n    cmds:\n      - node bench/score.mjs\n",
      },
      'task score',
      `Taskfile.yml's "score" task`,
    ],
  ])(
    'in the scope, through %s: the loop is refused at setup, naming it',
    async (_how, files, metric, via) => {
      const repo = await scriptedLoopRepo(
        { 'src/value.txt': '10\n', 'src/bench/score.mjs': SCORE.replace('../src/', '../'), ...files },
        [],
        'forge-chain-',
      );
      const result = await repo.forge(valueLoopArgs('src/value.txt', metric));
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain(`holds src/bench/score.mjs, a metric file (run through ${via})`);
    },
  );
});

describe('a shell script that changes folder before it runs the task', () => {
  it('the package it changes to has its package.json guarded: put back, tamper', async () => {
    const pkg = { name: 'app', private: true, scripts: { score: 'node ../../metric/score.mjs' } };
    const repo = await scriptedLoopRepo(
      {
        'src/value.txt': '10\n',
        'metric/score.mjs': SCORE,
        'metric/score.sh':
          '#!/bin/sh\nset -e\ncd "$(dirname "$0")/../packages/app"\nnpm run --silent score\n',
        'packages/app/package.json': `${JSON.stringify(pkg, null, 2)}\n`,
      },
      [],
      'forge-chain-cd-',
    );
    const forged = { ...pkg, scripts: { score: 'echo {\\"value\\":1000}' } };
    await oneDoerLoopRules(repo, [
      { write: 'src/value.txt', content: '5\n' },
      { write: 'packages/app/package.json', content: `${JSON.stringify(forged, null, 2)}\n` },
      { say: 'HYPOTHESIS: a faster score' },
    ]);
    const epic = await createValueLoop(repo, 'src/value.txt', 'sh metric/score.sh', ['--scope', 'packages/']);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await ledgerDecisions(repo)).toEqual([
      [0, 'baseline', 10],
      [1, 'tamper', null],
    ]);
    expect(JSON.parse(await readFile(join(repo.dir, 'packages', 'app', 'package.json'), 'utf8'))).toEqual(
      pkg,
    );
  });
});
