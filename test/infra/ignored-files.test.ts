// The files git ignores as the runner fingerprints them: which are installed dependencies, caches or
// the rest, and a change found however it was made.
import { execFileSync } from 'node:child_process';
import { mkdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  changedCaches,
  changedFiles,
  watchedEntries,
  fingerprintFiles,
} from '../../src/infra/ignored-files.js';
import { tempTree } from '../support/temp-tree.js';

/** The installed dependencies' files alone. */
const deps = (dir: string, entries: string[]) => fingerprintFiles(dir, entries).dependencies;

const tree = (files: Record<string, string | Buffer>) => tempTree(files, 'forge-deps-');

describe('installed dependencies', () => {
  it('are watched with every other ignored path, but the runner’s own state', () => {
    expect(
      watchedEntries(
        [
          'node_modules/',
          '.forge/',
          '.beads/',
          '.autoresearch/',
          '.autoresearch-old/',
          'data/',
          '.env',
          'loop/ws/',
        ],
        ['.forge', '.beads', '.autoresearch', 'loop/ws'],
      ),
    ).toEqual(['node_modules/', '.autoresearch-old/', 'data/', '.env']);
  });

  it('are sorted by kind: in a package manager’s directory at any depth, in a cache, or the rest', async () => {
    const dir = await tree({
      'node_modules/a/index.js': 'a',
      'packages/web/node_modules/b/index.js': 'b',
      'packages/web/dist/app.js': 'app',
      '.venv/lib/site.py': 'site',
      'vendor/lib/y.rb': 'y',
      'data/weights.json': '{}',
      '.env': 'KEY=1',
      'metric/__pycache__/h.cpython-311.pyc': 'code',
      'node_modules/.cache/babel/z.json': '{}',
      'work/.forge/state.json': '{}',
      'work/notes.txt': 'n',
    });
    const entries = [
      'node_modules/',
      'packages/',
      '.venv/',
      'vendor/',
      'data/',
      '.env',
      'metric/__pycache__/',
      'work/',
    ];
    const files = fingerprintFiles(dir, entries, ['work/.forge']);
    expect([...files.dependencies.keys()].sort()).toEqual([
      '.venv/lib/site.py',
      'node_modules/a/index.js',
      'packages/web/node_modules/b/index.js',
      'vendor/lib/y.rb',
    ]);
    expect([...files.caches.keys()].sort()).toEqual([
      'metric/__pycache__/h.cpython-311.pyc',
      'node_modules/.cache/babel/z.json',
    ]);
    expect([...files.others.keys()].sort()).toEqual([
      '.env',
      'data/weights.json',
      'packages/web/dist/app.js',
      'work/notes.txt',
    ]);
  });

  it('a file changed in place keeps its name, size and mtime yet is found: its ctime moved', async () => {
    const dir = await tree({ 'node_modules/lib/index.js': 'export const x = 1;\n' });
    const path = join(dir, 'node_modules/lib/index.js');
    const before = deps(dir, ['node_modules/']);
    expect([...before.keys()]).toEqual(['node_modules/lib/index.js']);
    // Its times kept to the nanosecond (touch -r), as a careful forger would.
    const times = join(dir, 'times');
    await writeFile(times, '');
    execFileSync('touch', ['-r', path, times]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await writeFile(path, 'export const x = 9;\n');
    execFileSync('touch', ['-r', times, path]);
    expect((await stat(path, { bigint: true })).mtimeNs).toBe((await stat(times, { bigint: true })).mtimeNs);
    const after = deps(dir, ['node_modules/']);
    expect(changedFiles(before, after)).toEqual(['node_modules/lib/index.js']);
  });

  it('finds files added and removed; keeps the caches tools write as they run apart', async () => {
    const dir = await tree({
      'node_modules/a/index.js': 'a\n',
      'node_modules/b/index.js': 'b\n',
      'node_modules/.cache/babel/x.json': '{}\n',
    });
    const before = deps(dir, ['node_modules/']);
    expect([...before.keys()].sort()).toEqual(['node_modules/a/index.js', 'node_modules/b/index.js']);
    await rm(join(dir, 'node_modules/b'), { recursive: true });
    await writeFile(join(dir, 'node_modules/a/extra.js'), 'extra\n');
    await writeFile(join(dir, 'node_modules/.cache/babel/x.json'), '{"changed":true}\n');
    await mkdir(join(dir, 'node_modules/.vite/vitest'), { recursive: true });
    await writeFile(join(dir, 'node_modules/.vite/vitest/results.json'), '{}\n');
    expect(changedFiles(before, deps(dir, ['node_modules/']))).toEqual([
      'node_modules/a/extra.js',
      'node_modules/b/index.js',
    ]);
  });

  it('names each cache an agent wrote to as the one directory (or file) a tool rebuilds', async () => {
    const dir = await tree({
      'node_modules/a/index.js': 'a\n',
      'node_modules/.cache/babel/x.json': '{}\n',
      'node_modules/.cache/eslint/y.json': '{}\n',
      'metric/__pycache__/helpers.cpython-311.pyc': 'code',
      '.venv/lib/site-packages/pkg/__pycache__/m.cpython-311.pyc': 'code',
      'tsconfig.tsbuildinfo': '{}',
    });
    const entries = ['node_modules/', 'metric/__pycache__/', '.venv/', 'tsconfig.tsbuildinfo', '.cache/'];
    const before = fingerprintFiles(dir, entries);
    expect([...before.dependencies.keys()]).toEqual(['node_modules/a/index.js']);
    expect(before.caches.size).toBe(5);
    expect(changedCaches(before, fingerprintFiles(dir, entries))).toEqual([]);
    await writeFile(join(dir, 'node_modules/.cache/babel/x.json'), '{"changed":true}\n');
    await rm(join(dir, '.venv/lib/site-packages/pkg/__pycache__/m.cpython-311.pyc'));
    await writeFile(join(dir, 'metric/__pycache__/other.cpython-311.pyc'), 'code');
    await writeFile(join(dir, 'tsconfig.tsbuildinfo'), '{"changed":true}');
    // A cache made where there was none, at the top of the tree: listed by git only now.
    await mkdir(join(dir, '.cache/tool'), { recursive: true });
    await writeFile(join(dir, '.cache/tool/entry'), 'x');
    const after = fingerprintFiles(dir, entries);
    expect(changedCaches(before, after)).toEqual([
      '.cache/tool',
      '.venv/lib/site-packages/pkg/__pycache__',
      'metric/__pycache__',
      'node_modules/.cache/babel',
      'tsconfig.tsbuildinfo',
    ]);
    expect(changedFiles(before.dependencies, after.dependencies)).toEqual([]);
  });

  it('counts a cache in an environment outside the tree from the environment down, not from /', async () => {
    const home = await tree({
      '.cache/pypoetry/venv/lib/site-packages/pkg/m.py': 'x = 1\n',
      '.cache/pypoetry/venv/lib/site-packages/pkg/__pycache__/m.cpython-311.pyc': 'code',
    });
    const venv = join(home, '.cache/pypoetry/venv');
    const files = fingerprintFiles('/nowhere', [venv]);
    expect([...files.dependencies.keys()]).toEqual([join(venv, 'lib/site-packages/pkg/m.py')]);
    expect([...files.cacheOf.values()]).toEqual([join(venv, 'lib/site-packages/pkg/__pycache__')]);
  });

  it('follows a dependency directory that is a link to an install elsewhere', async () => {
    const shared = await tree({ 'lib/index.js': 'one\n' });
    const dir = await tree({});
    await symlink(shared, join(dir, 'node_modules'));
    const before = deps(dir, ['node_modules']);
    expect([...before.keys()]).toEqual(['node_modules ->', 'node_modules/lib/index.js']);
    await writeFile(join(shared, 'lib/index.js'), 'two\n');
    expect(changedFiles(before, deps(dir, ['node_modules']))).toEqual(['node_modules/lib/index.js']);
  });
});
