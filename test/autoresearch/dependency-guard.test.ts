// What the loop does with an agent's change to the installed dependencies: which changes count, and
// the record that holds the loop until they change again.
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  buildCacheDirs,
  changedDependencies,
  changedFilesLeft,
  changedStoreFiles,
  forbiddenChanges,
  nameSome,
  noteChangedFiles,
  removeWrittenCaches,
  snapshotIgnored,
  type DependencyGuardContext,
} from '../../src/autoresearch/dependency-guard.js';
import { ContentHashes } from '../../src/infra/content-hashes.js';
import { changedFiles, fingerprintFiles } from '../../src/infra/ignored-files.js';
import { accountHome } from '../../src/infra/tool-config.js';
import type { Git } from '../../src/infra/git.js';

async function context(ignored: string[] | undefined): Promise<DependencyGuardContext> {
  const cwd = await mkdtemp(join(tmpdir(), 'forge-depguard-'));
  onTestFinished(() => rm(cwd, { recursive: true, force: true }));
  await mkdir(join(cwd, 'node_modules', 'lib'), { recursive: true });
  await writeFile(join(cwd, 'node_modules', 'lib', 'index.js'), 'one\n');
  const git = {
    cwd,
    ...(ignored === undefined ? {} : { ignoredPaths: async () => ignored }),
  } as unknown as Git;
  return { cwd, git, vaultDir: join(cwd, '.git', 'forge', 'bd-e') };
}

describe('the dependency guard', () => {
  it('counts every change but those under the scope it is given', () => {
    const changed = ['node_modules/a/index.js', 'node_modules/b/index.js', 'node_modules/c/index.js'];
    expect(forbiddenChanges(changed, [])).toEqual(changed);
    expect(forbiddenChanges(changed, ['node_modules/a/'])).toEqual([
      'node_modules/b/index.js',
      'node_modules/c/index.js',
    ]);
    expect(forbiddenChanges(changed, ['src/', 'node_modules/'])).toEqual([]);
  });

  it('tells a reinstall of the same bytes from a patch, a new file or a mode', async () => {
    const ctx = await context(['node_modules/']);
    const lib = join(ctx.cwd, 'node_modules', 'lib');
    await writeFile(join(lib, 'other.js'), 'two\n');
    const contents = new ContentHashes(ctx.cwd);
    const before = (await snapshotIgnored(ctx))!.dependencies;
    await contents.prime(before);
    // Removed and installed again, every file new: the same bytes.
    await rm(join(ctx.cwd, 'node_modules'), { recursive: true });
    await mkdir(lib, { recursive: true });
    await writeFile(join(lib, 'index.js'), 'one\n');
    await writeFile(join(lib, 'other.js'), 'two\n');
    const reinstalled = (await snapshotIgnored(ctx))!.dependencies;
    expect(changedFiles(before, reinstalled)).toEqual([
      'node_modules/lib/index.js',
      'node_modules/lib/other.js',
    ]);
    expect(await changedDependencies(before, reinstalled, contents)).toEqual([]);
    // Then one patched, one made executable and one added.
    await writeFile(join(lib, 'index.js'), 'ten\n');
    await chmod(join(lib, 'other.js'), 0o755);
    await writeFile(join(lib, 'added.js'), 'three\n');
    const patched = (await snapshotIgnored(ctx))!.dependencies;
    expect(await changedDependencies(reinstalled, patched, contents)).toEqual([
      'node_modules/lib/added.js',
      'node_modules/lib/index.js',
      'node_modules/lib/other.js',
    ]);
  });

  it('counts a file it never hashed as changed, even with the same bytes', async () => {
    const ctx = await context(['node_modules/']);
    const before = (await snapshotIgnored(ctx))!.dependencies;
    await writeFile(join(ctx.cwd, 'node_modules', 'lib', 'index.js'), 'one\n');
    const after = (await snapshotIgnored(ctx))!.dependencies;
    expect(await changedDependencies(before, after, new ContentHashes(ctx.cwd))).toEqual([
      'node_modules/lib/index.js',
    ]);
  });

  it('watches nothing where git names no dependency directory, and cannot watch when git cannot list', async () => {
    const none = await snapshotIgnored(await context(['dist/', '.env']));
    expect([none?.dependencies.size, none?.caches.size]).toEqual([0, 0]);
    expect(await snapshotIgnored(await context(undefined))).toBeUndefined();
    const some = await snapshotIgnored(await context(['node_modules/']));
    expect([...(some?.dependencies.keys() ?? [])]).toEqual(['node_modules/lib/index.js']);
  });

  it('removes a cache an agent made or wrote to, and only that, even where there was none before', async () => {
    const ignored: string[] = ['node_modules/'];
    const ctx = await context(ignored);
    await mkdir(join(ctx.cwd, 'node_modules', '.cache', 'kept'), { recursive: true });
    await writeFile(join(ctx.cwd, 'node_modules', '.cache', 'kept', 'entry'), 'the user’s');
    const before = (await snapshotIgnored(ctx))!;
    await mkdir(join(ctx.cwd, 'metric', '__pycache__'), { recursive: true });
    await writeFile(join(ctx.cwd, 'metric', '__pycache__', 'helpers.cpython-311.pyc'), 'forged');
    ignored.push('metric/__pycache__/');
    const after = (await snapshotIgnored(ctx))!;
    expect(await removeWrittenCaches(ctx, before, after)).toEqual(['metric/__pycache__']);
    await expect(readFile(join(ctx.cwd, 'metric', '__pycache__', 'helpers.cpython-311.pyc'))).rejects.toThrow(
      /ENOENT/,
    );
    expect(await readFile(join(ctx.cwd, 'node_modules', '.cache', 'kept', 'entry'), 'utf8')).toBe(
      'the user’s',
    );
    expect(await readFile(join(ctx.cwd, 'node_modules', 'lib', 'index.js'), 'utf8')).toBe('one\n');
  });

  it('watches the virtualenv the loop runs in when it lies outside the tree, even under a cache', async () => {
    const ctx = await context([]);
    const home = await mkdtemp(join(tmpdir(), 'forge-venv-'));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    const venv = join(home, '.cache', 'pypoetry', 'virtualenvs', 'proj-py3.11');
    const site = join(venv, 'lib', 'python3.11', 'site-packages', 'scorer');
    await mkdir(join(site, '__pycache__'), { recursive: true });
    await writeFile(join(site, '__init__.py'), 'def adjust(v): return v\n');
    await writeFile(join(site, '__pycache__', '__init__.cpython-311.pyc'), 'bytecode');
    const watched = { ...ctx, env: { VIRTUAL_ENV: venv } };
    const before = (await snapshotIgnored(watched))!.dependencies;
    expect([...before.keys()]).toEqual([join(site, '__init__.py')]);
    await writeFile(join(site, '__init__.py'), 'def adjust(v): return v * 10\n');
    const after = (await snapshotIgnored(watched))!.dependencies;
    expect(changedFiles(before, after)).toEqual([join(site, '__init__.py')]);
    // One inside the tree is found through git like the rest; none at all, nothing to watch.
    const inside = await snapshotIgnored({ ...ctx, env: { VIRTUAL_ENV: join(ctx.cwd, '.venv') } });
    expect(inside?.dependencies.size).toBe(0);
  });

  it('watches what interpreters load from the home and the search paths, made by an agent or not', async () => {
    const ctx = await context([]);
    const home = await mkdtemp(join(tmpdir(), 'forge-home-'));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    const env = { HOME: home, PYTHONPATH: join(home, 'py'), NODE_PATH: `${join(home, 'js')}:${ctx.cwd}/lib` };
    const watched = { ...ctx, env };
    expect((await snapshotIgnored(watched))!.dependencies.size).toBe(0);
    const files = [
      '.local/lib/python3.11/site-packages/boost.pth',
      '.local/lib/python3.12/site-packages/pkg/__init__.py',
      '.node_modules/scorer/index.js',
      '.node_libraries/scorer.js',
      '.npm/_npx/0a1b/node_modules/tool/cli.js',
      'py/json.py',
      'js/scorer/index.js',
    ];
    for (const file of [...files, '.local/share/notes.txt', '.npm/_cacache/index']) {
      await mkdir(join(home, file, '..'), { recursive: true });
      await writeFile(join(home, file), 'x');
    }
    await mkdir(join(ctx.cwd, 'lib'), { recursive: true });
    await writeFile(join(ctx.cwd, 'lib', 'tracked.js'), 'x');
    const after = (await snapshotIgnored(watched))!;
    expect([...after.dependencies.keys()].sort()).toEqual(files.map((file) => join(home, file)).sort());
    // A user base set apart: its site-packages, not the home's.
    const apart = await snapshotIgnored({ ...ctx, env: { PYTHONUSERBASE: join(home, '.local') } });
    expect([...apart!.dependencies.keys()].sort()).toEqual(
      files.filter((file) => file.startsWith('.local/')).map((file) => join(home, file)),
    );
  });

  it('watches the programs on the PATH outside the tree, but the agent CLIs that update themselves and a rehash lock', async () => {
    const ctx = await context([]);
    const home = await mkdtemp(join(tmpdir(), 'forge-path-'));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    await mkdir(join(home, 'bin', 'sub'), { recursive: true });
    // `.pyenv-shim`: what pyenv's rehash holds while it runs, whoever started it. `.hidden`: a
    // program all the same.
    const rehash = ['.pyenv-shim', '.pyenv-source-shim', '.rbenv-shim'];
    for (const name of ['python3', 'claude', 'sub/deeper', ...rehash, '.hidden', '.shim'])
      await writeFile(join(home, 'bin', name), '#!/bin/sh\n');
    await mkdir(join(ctx.cwd, 'node_modules', '.bin'), { recursive: true });
    await writeFile(join(ctx.cwd, 'node_modules', '.bin', 'tool'), '#!/bin/sh\n');
    const PATH = [
      join(home, 'bin'),
      join(ctx.cwd, 'node_modules', '.bin'),
      join(home, 'bin'),
      'relative/bin',
    ].join(':');
    const files = (await snapshotIgnored({ ...ctx, env: { PATH } }))!;
    expect([...files.programs.keys()].sort()).toEqual([
      join(home, 'bin', '.hidden'),
      join(home, 'bin', '.shim'),
      join(home, 'bin', 'python3'),
      join(home, 'bin', 'sub'),
    ]);
    // Not from a candidate's tree: its loop's tree watches them.
    expect((await snapshotIgnored({ ...ctx, env: { PATH }, outside: false }))!.programs.size).toBe(0);
  });

  it('watches the top of the site-packages the Python on PATH names, its bytecode cache as a cache', async () => {
    const ctx = await context([]);
    const root = await mkdtemp(join(tmpdir(), 'forge-site-'));
    onTestFinished(() => rm(root, { recursive: true, force: true }));
    const site = join(root, 'lib', 'site-packages');
    await mkdir(join(site, 'pkg'), { recursive: true });
    await mkdir(join(site, '__pycache__'), { recursive: true });
    await writeFile(join(site, 'pkg', 'deep.py'), 'x = 1\n');
    await writeFile(join(site, '__pycache__', 'six.cpython-311.pyc'), 'code');
    // A python3 of the test's own, which names that directory as its site-packages.
    await mkdir(join(root, 'bin'));
    await writeFile(join(root, 'bin', 'python3'), `#!/bin/sh\necho '["${site}"]'\n`, { mode: 0o755 });
    const PATH = `${join(root, 'bin')}:/usr/bin:/bin`;
    const before = (await snapshotIgnored({ ...ctx, env: { PATH } }))!;
    expect([...before.programs.keys()].filter((path) => path.startsWith(site)).sort()).toEqual([
      join(site, 'pkg'),
    ]);
    expect([...before.cacheOf.values()]).toEqual([join(site, '__pycache__')]);
    // A startup hook dropped at its top is seen; a virtualenv's own site-packages is watched whole instead.
    await writeFile(join(site, 'boost.pth'), 'import os\n');
    const after = (await snapshotIgnored({ ...ctx, env: { PATH } }))!;
    expect(changedFiles(before.programs, after.programs)).toEqual([join(site, 'boost.pth')]);
    const inVenv = (await snapshotIgnored({
      ...ctx,
      env: { PATH: `${PATH}:`, VIRTUAL_ENV: join(root, 'lib') },
    }))!;
    expect([...inVenv.programs.keys()].some((path) => path.startsWith(site))).toBe(false);
    expect(inVenv.dependencies.has(join(site, 'pkg', 'deep.py'))).toBe(true);
  });

  it('takes jest’s cache in the temp directory for a cache: what an agent wrote there is removed', async () => {
    const ctx = await context([]);
    const temp = await mkdtemp(join(tmpdir(), 'forge-jest-'));
    onTestFinished(() => rm(temp, { recursive: true, force: true }));
    await mkdir(join(temp, 'jest_0', 'haste'), { recursive: true });
    await writeFile(join(temp, 'jest_0', 'haste', 'map'), 'the user’s');
    await mkdir(join(temp, 'other'));
    const watched = { ...ctx, env: { TMPDIR: temp } };
    const before = (await snapshotIgnored(watched))!;
    expect([...before.cacheOf.values()]).toEqual([join(temp, 'jest_0')]);
    await mkdir(join(temp, 'jest_0', 'transform'));
    await writeFile(join(temp, 'jest_0', 'transform', 'ab12'), 'module.exports = () => 1000;');
    await writeFile(join(temp, 'other', 'file'), 'not a cache');
    const after = (await snapshotIgnored(watched))!;
    expect(await removeWrittenCaches(watched, before, after)).toEqual([join(temp, 'jest_0')]);
    await expect(readFile(join(temp, 'jest_0', 'transform', 'ab12'))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(temp, 'other', 'file'), 'utf8')).toBe('not a cache');
  });

  it('finds the build caches in the home where their tools look, and none inside the tree', () => {
    const env = { HOME: '/home/u' };
    expect(buildCacheDirs('/work/repo', env)).toEqual([
      '/home/u/.cache/go-build',
      '/home/u/Library/Caches/go-build',
      '/home/u/.cache/ccache',
      '/home/u/.ccache',
      '/home/u/.cache/sccache',
      '/home/u/.cache/deno',
      '/home/u/Library/Caches/deno',
      '/home/u/.cache/zig',
    ]);
    const named = buildCacheDirs('/work/repo', {
      ...env,
      XDG_CACHE_HOME: '/var/cache/u',
      GOCACHE: '/opt/go-cache',
      CCACHE_DIR: 'relative/ccache',
      DENO_DIR: '/work/repo/.deno',
      PYTHONPYCACHEPREFIX: '/tmp/pycache',
      NODE_COMPILE_CACHE: '/tmp/node-cache',
      BUN_RUNTIME_TRANSPILER_CACHE_PATH: '/tmp/bun-cache',
    });
    expect(named).toEqual([
      '/opt/go-cache',
      '/var/cache/u/ccache',
      '/home/u/.ccache',
      '/var/cache/u/sccache',
      '/var/cache/u/zig',
      '/tmp/pycache',
      '/tmp/node-cache',
      '/tmp/bun-cache',
    ]);
    expect(buildCacheDirs('/work/repo', {})).toEqual([]);
  });

  it('removes what an agent wrote in a build cache in the home, file by file, and keeps the rest', async () => {
    const ctx = await context([]);
    const home = await mkdtemp(join(tmpdir(), 'forge-home-'));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    const cache = join(home, '.cache', 'go-build');
    await mkdir(join(cache, 'ab'), { recursive: true });
    await writeFile(join(cache, 'ab', 'ab01-d'), 'the user’s build');
    await writeFile(join(cache, 'ab', 'ab02-d'), 'the metric’s build');
    const watched = { ...ctx, env: { HOME: home } };
    const before = (await snapshotIgnored(watched))!;
    expect(before.cacheOf.get(join(cache, 'ab', 'ab01-d'))).toBe(join(cache, 'ab', 'ab01-d'));
    await writeFile(join(cache, 'ab', 'ab02-d'), 'forged');
    await mkdir(join(cache, 'cd'));
    await writeFile(join(cache, 'cd', 'cd01-d'), 'forged too');
    const after = (await snapshotIgnored(watched))!;
    expect(await removeWrittenCaches(watched, before, after)).toEqual([
      join(cache, 'ab', 'ab02-d'),
      join(cache, 'cd', 'cd01-d'),
    ]);
    expect(await readFile(join(cache, 'ab', 'ab01-d'), 'utf8')).toBe('the user’s build');
    await expect(readFile(join(cache, 'ab', 'ab02-d'))).rejects.toThrow(/ENOENT/);
    await expect(readFile(join(cache, 'cd', 'cd01-d'))).rejects.toThrow(/ENOENT/);
    // Not watched when the loop is told to leave what is outside the tree alone.
    const inside = (await snapshotIgnored({ ...watched, outside: false }))!;
    expect([...inside.cacheOf.keys()].some((path) => path.startsWith(cache))).toBe(false);
  });

  it('watches the package stores in the home but the project’s own artifacts, and names a changed jar', async () => {
    const ctx = await context([]);
    const home = await mkdtemp(join(tmpdir(), 'forge-home-'));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    const repository = join(home, '.m2', 'repository');
    const junit = join(repository, 'junit', 'junit', '4.13.2', 'junit-4.13.2.jar');
    const own = join(repository, 'com', 'acme', 'app', '1.0', 'app-1.0.jar');
    for (const jar of [junit, own]) {
      await mkdir(join(jar, '..'), { recursive: true });
      await writeFile(jar, 'classes');
    }
    await writeFile(
      join(ctx.cwd, 'pom.xml'),
      '<project><groupId>com.acme</groupId><artifactId>app</artifactId></project>',
    );
    // Java's home is HOME's here: the account's is not looked at.
    const watched = { ...ctx, env: { HOME: home, JAVA_TOOL_OPTIONS: `-Duser.home=${home}` } };
    const before = (await snapshotIgnored(watched))!;
    expect([...before.stores.keys()]).toEqual([junit]);
    // `mvn install` writes the project's own jar again; a doer rewrites the test framework's.
    await writeFile(own, 'built again');
    await writeFile(junit, 'forged');
    const after = (await snapshotIgnored(watched))!;
    expect(changedStoreFiles(watched, before, after)).toEqual([junit]);
    await noteChangedFiles(watched, 'doer', 'installed dependencies', [junit]);
    expect(await changedFilesLeft(watched)).toMatch(
      /^The doer changed installed dependencies \(.*junit-4\.13\.2\.jar\).*Delete the packages they belong to from the store/,
    );
    expect((await snapshotIgnored({ ...watched, outside: false }))!.stores.size).toBe(0);
  });

  it('tells a download from a change in the stores of the account’s home, which Java uses whatever HOME says', async () => {
    const ctx = { ...(await context([])), env: { HOME: '/nonexistent/home' } };
    const version = join(accountHome()!, '.m2', 'repository', 'org', 'example', 'w', '1.0');
    const stores = (paths: string[], id = '1') => new Map(paths.map((path) => [path, id]));
    const files = (found: Map<string, string>) => ({ ...fingerprintFiles(ctx.cwd, []), stores: found });
    const jar = join(version, 'w-1.0.jar');
    const before = files(stores([jar]));
    // A new version, and Maven's bookkeeping beside the old: a download.
    const download = files(
      stores([jar, join(version, '..', '1.1', 'w-1.1.jar'), join(version, '_remote.repositories')]),
    );
    expect(changedStoreFiles(ctx, before, download)).toEqual([]);
    expect(changedStoreFiles(ctx, before, files(stores([jar], '2')))).toEqual([jar]);
  });

  it('holds the loop while the files are as the agent left them, and lets go once every one changed', async () => {
    const ctx = await context(['node_modules/']);
    await writeFile(join(ctx.cwd, 'node_modules', 'lib', 'other.js'), 'two\n');
    expect(await changedFilesLeft(ctx)).toBeUndefined();
    const changed = ['node_modules/lib/index.js', 'node_modules/lib/other.js', 'node_modules/lib/gone.js'];
    await noteChangedFiles(ctx, 'doer', 'installed dependencies', changed);
    const held = await changedFilesLeft(ctx);
    expect(held).toMatch(/^The doer changed installed dependencies \(node_modules\/lib\/index\.js, .*\)/);
    expect(held).toMatch(/Reinstall them \(npm ci, pip install …\), then run again/);
    expect(held).toContain(join(ctx.vaultDir, 'dependencies-changed.json'));
    expect(await changedFilesLeft(ctx)).toBe(held);
    // Anything else written meanwhile, by the metric or a person, does not let go.
    await writeFile(join(ctx.cwd, 'node_modules', 'lib', 'unrelated.js'), 'x\n');
    expect(await changedFilesLeft(ctx)).toBe(held);
    // Reinstalled: each written anew, the removed one back; one left as the agent left it still holds.
    await writeFile(join(ctx.cwd, 'node_modules', 'lib', 'index.js'), 'one\n');
    await writeFile(join(ctx.cwd, 'node_modules', 'lib', 'gone.js'), 'three\n');
    expect(await changedFilesLeft(ctx)).toBe(held);
    await writeFile(join(ctx.cwd, 'node_modules', 'lib', 'other.js'), 'two\n');
    expect(await changedFilesLeft(ctx)).toBeUndefined();
    await expect(readFile(join(ctx.vaultDir, 'dependencies-changed.json'))).rejects.toThrow();
  });

  it('says how to put back ignored files that are not dependencies', async () => {
    const ctx = await context([]);
    await noteChangedFiles(ctx, 'judge', 'ignored files', ['data/big.bin']);
    expect(await changedFilesLeft(ctx)).toMatch(
      /^The judge changed ignored files \(data\/big\.bin\), .* Put them back as they were \(.*scope\.rebuilt_paths\), then run again/,
    );
  });

  it('a record it cannot read still holds the loop', async () => {
    const ctx = await context(['node_modules/']);
    await mkdir(ctx.vaultDir, { recursive: true });
    await writeFile(join(ctx.vaultDir, 'dependencies-changed.json'), '{"role": "doer", "pa');
    expect(await changedFilesLeft(ctx)).toMatch(/The agent changed installed dependencies \(files\)/);
  });

  it('names a few paths, then how many more', () => {
    expect(nameSome(['a', 'b'])).toBe('a, b');
    expect(nameSome(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, c and 2 more');
  });
});
