// What the metric loads into its own process is followed by its imports, as Node and Python find
// them; what it runs as a program apart, or only names, is not loaded.
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLoopConfig } from '../../src/autoresearch/config.js';
import { jsImports, loadedInProcess, pythonImports } from '../../src/autoresearch/loaded-code.js';
import { tempTree } from '../support/temp-tree.js';

const hard = (command: string, guards: string[] = []) =>
  parseLoopConfig(
    {
      subject: 'x',
      metric: { type: 'hard', command },
      guards: guards.map((guard) => ({ command: guard })),
      scope: { doer_paths: ['src'] },
    },
    'config.json',
  );

const sorted = (files: Set<string>) => [...files].sort();

describe('jsImports and pythonImports', () => {
  it('read the names imported by a literal, wherever the import stands, and not in comments', () => {
    const js = [
      "import { a } from './a.js';",
      "import * as b from '../b';",
      "export { c } from './c.mjs';",
      "import './side-effect.js';",
      "const d = require('./d.cjs');",
      "const e = await import('./e.mjs');",
      'import type {',
      '  F,',
      "} from './f';",
      "// import { g } from './g.js';",
      'const h = require(name);',
    ].join('\n');
    expect(jsImports(js).sort()).toEqual(
      ['../b', './a.js', './c.mjs', './d.cjs', './e.mjs', './f', './side-effect.js'].sort(),
    );
    const py = [
      'import os, lib.core as core',
      'from . import helpers',
      'from ..pkg.mod import (one,',
      '    two as second)',
      'from fast import *',
      '# import hidden',
    ].join('\n');
    expect(pythonImports(py)).toEqual([
      { module: 'os', names: [] },
      { module: 'lib.core', names: [] },
      { module: '.', names: ['helpers'] },
      { module: '..pkg.mod', names: ['one', 'two'] },
      { module: 'fast', names: [] },
    ]);
  });
});

describe('loadedInProcess', () => {
  it("follows a script's imports through the tree, a .js name to its TypeScript, and a folder to its index", async () => {
    const dir = await tempTree({
      'metric/bench.mjs':
        "import { work } from '../src/lib.mjs';\nimport { spawnSync } from 'node:child_process';\nspawnSync('node', ['src/cli.mjs']);\n",
      'src/lib.mjs': "export * from './core.js';\nimport util from './util';\n",
      'src/core.ts': "export const core = 1;\nimport '../node_modules/dep/index.js';\n",
      'src/util/index.js': 'module.exports = 1;\n',
      'src/cli.mjs': "import { work } from './lib.mjs';\nconsole.log(work());\n",
      'src/unused.mjs': 'export const x = 1;\n',
      'node_modules/dep/index.js': '',
    });
    expect(sorted(await loadedInProcess(hard('node metric/bench.mjs'), dir, ['metric/bench.mjs']))).toEqual([
      'metric/bench.mjs',
      'src/core.ts',
      'src/lib.mjs',
      'src/util/index.js',
    ]);
  });

  it("follows a package of the tree's own: a workspace linked into node_modules, and the package by its name", async () => {
    const dir = await tempTree({
      'package.json': JSON.stringify({ name: 'root-pkg', exports: { '.': { import: './src/main.mjs' } } }),
      'bench.mjs': "import 'root-pkg';\nimport { fast } from '@me/fast';\nimport 'left-pad';\n",
      'src/main.mjs': '',
      'packages/fast/package.json': JSON.stringify({ name: '@me/fast', main: 'lib/index.js' }),
      'packages/fast/lib/index.js': "require('./deep');\n",
      'packages/fast/lib/deep.js': '',
      'node_modules/left-pad/index.js': '',
    });
    await mkdir(join(dir, 'node_modules', '@me'), { recursive: true });
    await symlink(join(dir, 'packages', 'fast'), join(dir, 'node_modules', '@me', 'fast'));
    expect(sorted(await loadedInProcess(hard('node bench.mjs'), dir, ['bench.mjs']))).toEqual([
      'bench.mjs',
      'packages/fast/lib/deep.js',
      'packages/fast/lib/index.js',
      'src/main.mjs',
    ]);
  });

  it('follows Python imports: from the folders a script adds to sys.path, packages with their __init__, relative ones', async () => {
    const dir = await tempTree({
      'metric/bench.py':
        "import os, sys, time\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'src'))\nfrom solver import solve\nimport subprocess\nsubprocess.run(['python3', 'src/tool.py'])\n",
      'src/solver/__init__.py': 'from .core import fast\n',
      'src/solver/core.py': 'from . import helpers\n',
      'src/solver/helpers.py': '',
      'src/tool.py': '',
    });
    expect(sorted(await loadedInProcess(hard('python3 metric/bench.py'), dir, ['metric/bench.py']))).toEqual([
      'metric/bench.py',
      'src/solver/__init__.py',
      'src/solver/core.py',
      'src/solver/helpers.py',
    ]);
  });

  it('starts from code given in the argv (node -e, python3 -c, python3 -m) and from a guard, not from a runner', async () => {
    const dir = await tempTree({
      'src/a.mjs': '',
      'src/b.py': '',
      'src/c.cjs': '',
      'fastlib.py': 'import src.b\n',
      'bench/__init__.py': '',
      'bench/__main__.py': 'from bench import run\n',
      'bench/run.py': '',
    });
    expect(sorted(await loadedInProcess(hard(`node -e "import('./src/a.mjs')"`), dir, []))).toEqual([
      'src/a.mjs',
    ]);
    expect(sorted(await loadedInProcess(hard("python3 -c 'import fastlib'"), dir, []))).toEqual([
      'fastlib.py',
      'src/b.py',
    ]);
    expect(sorted(await loadedInProcess(hard('python3 -m bench'), dir, []))).toEqual([
      'bench/__init__.py',
      'bench/__main__.py',
      'bench/run.py',
    ]);
    const guarded = hard('npm test', [`node -e "require('./src/c.cjs').check()"`]);
    expect(sorted(await loadedInProcess(guarded, dir, []))).toEqual(['src/c.cjs']);
    expect(sorted(await loadedInProcess(hard('npm test'), dir, []))).toEqual([]);
  });
});
