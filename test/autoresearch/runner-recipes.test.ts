// tox's environments and a Taskfile's tasks are read for the commands they run, as a Makefile's
// recipes are; the script they run is the metric's.
import { describe, expect, it } from 'vitest';
import { parseLoopConfig } from '../../src/autoresearch/config.js';
import { metricFilesVia } from '../../src/autoresearch/metric-files.js';
import {
  invokeRecipes,
  noxRecipes,
  noxSessions,
  taskfileRecipes,
  toxEnvironments,
  toxRecipes,
} from '../../src/autoresearch/runner-recipes.js';
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

const NOXFILE = `import nox

@nox.session(python=["3.12"])
def tests(session):
    session.install("pytest")
    session.run("pytest", "-q")


@nox.session(name="score")
def bench_score(session):
    session.run(
        "python",
        "bench/score.py",
        "--label",
        "two words",
    )

def helper(session):
    session.run("python", "bench/not-a-session.py")
`;

const TASKS_PY = `from invoke import task

@task
def build(c):
    c.run("python bench/build.py")

@task(pre=[build])
def run_bench(c, fast=False):
    c.run('python bench/score.py --json', pty=True)
`;

describe('noxRecipes and invokeRecipes', () => {
  it("runs a nox session's session.run(…) calls, by its name or the decorator's", () => {
    expect(noxSessions(['-s', 'score', 'tests', '--no-venv'])).toEqual(['score', 'tests']);
    expect(noxSessions(['--session=score'])).toEqual(['score']);
    expect(commands(noxRecipes(NOXFILE, ['score']))).toEqual(["python bench/score.py --label 'two words'"]);
    expect(commands(noxRecipes(NOXFILE, []))).toEqual([
      'pytest -q',
      "python bench/score.py --label 'two words'",
    ]);
  });

  it("runs an invoke task's c.run(…) lines, named as invoke names them, with its pre tasks", () => {
    expect(commands(invokeRecipes(TASKS_PY, ['run-bench']))).toEqual([
      'python bench/score.py --json',
      'python bench/build.py',
    ]);
    expect(commands(invokeRecipes(TASKS_PY, ['run_bench']))).toHaveLength(2);
    expect(invokeRecipes(TASKS_PY, ['missing'])).toEqual([]);
  });
});

describe('metricFiles through tox, Task, nox and invoke', () => {
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
      'noxfile.py': NOXFILE,
      'tasks.py': TASKS_PY,
      'bench/build.py': '',
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
    expect(await metricFilesVia(config('nox -s score'), dir)).toEqual([
      { path: 'bench/score.py', via: `noxfile.py's "score" session` },
    ]);
    expect(await metricFilesVia(config('inv run-bench'), dir)).toEqual([
      { path: 'bench/score.py', via: `tasks.py's "run-bench" task` },
      { path: 'bench/build.py', via: `tasks.py's "build" task` },
    ]);
  });
});
