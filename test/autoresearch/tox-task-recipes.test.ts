// tox's environments and a Taskfile's tasks are read for the commands they run, as a Makefile's
// recipes are; the script they run is the metric's.
import { describe, expect, it } from 'vitest';
import { parseLoopConfig } from '../../src/autoresearch/config.js';
import { metricFilesVia } from '../../src/autoresearch/metric-files.js';
import { taskfileRecipes, toxEnvironments, toxRecipes } from '../../src/autoresearch/tox-task-recipes.js';
import { tempTree } from '../support/temp-tree.js';

const commands = (found: { command: string }[]) => found.map((each) => each.command);

const TOX = `[tox]
envlist = py311, score

[testenv]
deps = pytest
commands =
    pytest {posargs:-q}

[testenv:score]
commands_pre =
    - python bench/prepare.py
commands =
    py311: {envpython} bench/score.py --json
    python bench/extra.py \\
        --fast
; a comment
`;

const TASKFILE = `version: '3'

tasks:
  default:
    cmds:
      - task: score

  score:
    dir: bench
    deps: [build]
    cmds:
      - node score.mjs   # the score
      - cmd: node report.mjs
        silent: true
      - |
        node summary.mjs
        node publish.mjs
  build: go build ./...
  lint:
    cmds:
    - eslint src
`;

describe('toxRecipes', () => {
  it("runs an environment's own commands (with its pre and post), else [testenv]'s", () => {
    expect(toxEnvironments(['-e', 'score,lint'])).toEqual(['score', 'lint']);
    expect(toxEnvironments(['-escore'])).toEqual(['score']);
    expect(toxEnvironments(['run', '--env=score', '&&', '-e', 'x'])).toEqual(['score']);
    expect(commands(toxRecipes(TOX, ['score']))).toEqual([
      'python bench/prepare.py',
      'python bench/score.py --json',
      'python bench/extra.py --fast',
    ]);
    expect(commands(toxRecipes(TOX, ['py311']))).toEqual(['pytest -q']);
    // None asked for: every environment's.
    expect(commands(toxRecipes(TOX, []))).toEqual([
      'pytest -q',
      'python bench/prepare.py',
      'python bench/score.py --json',
      'python bench/extra.py --fast',
    ]);
  });
});

describe('taskfileRecipes', () => {
  it("runs a task's cmds in its dir, with its deps and the tasks it calls; `default` when none is named", () => {
    expect(commands(taskfileRecipes(TASKFILE, []))).toEqual([
      'cd bench && node score.mjs',
      'cd bench && node report.mjs',
      'cd bench && node summary.mjs',
      'cd bench && node publish.mjs',
      'go build ./...',
    ]);
    expect(commands(taskfileRecipes(TASKFILE, ['lint']))).toEqual(['eslint src']);
    expect(taskfileRecipes('version: 3\n', ['score'])).toEqual([]);
  });
});

describe('metricFiles through tox and Task', () => {
  it('names the script an environment or a task runs, with the way there', async () => {
    const dir = await tempTree({
      'tox.ini': TOX,
      'Taskfile.yml': TASKFILE,
      'bench/score.py': '',
      'bench/prepare.py': '',
      'bench/extra.py': '',
      'bench/score.mjs': '',
      'bench/report.mjs': '',
      'bench/summary.mjs': '',
      'bench/publish.mjs': '',
    });
    const config = (command: string) =>
      parseLoopConfig(
        { subject: 'x', metric: { type: 'hard', command }, scope: { doer_paths: ['src'] } },
        'config.json',
      );
    expect(await metricFilesVia(config('tox -e score'), dir)).toEqual([
      { path: 'bench/prepare.py', via: `tox.ini's "score" environment` },
      { path: 'bench/score.py', via: `tox.ini's "score" environment` },
      { path: 'bench/extra.py', via: `tox.ini's "score" environment` },
    ]);
    expect((await metricFilesVia(config('task score'), dir)).map((file) => file.path)).toEqual([
      'bench/score.mjs',
      'bench/report.mjs',
      'bench/summary.mjs',
      'bench/publish.mjs',
    ]);
  });
});
