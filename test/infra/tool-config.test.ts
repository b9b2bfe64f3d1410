// The files a loop's metric tools read besides the tree: in a project directory, in every folder above
// it, in the home and in the machine's config.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ancestorToolFiles,
  homeToolDirs,
  homeToolFiles,
  isToolConfigPath,
  projectToolFiles,
  toolConfigPaths,
} from '../../src/infra/tool-config.js';

const noSystem = {
  etc: '/etc-of-test',
  execPath: '/opt/node/bin/node',
  platform: 'linux' as const,
  userHome: undefined,
};

describe('tool config files', () => {
  it('in a project directory: npm, yarn, bun, dotenv, Python, version-manager and build-tool files', () => {
    expect(projectToolFiles('/repo')).toEqual(
      expect.arrayContaining([
        '/repo/.npmrc',
        '/repo/.yarnrc.yml',
        '/repo/bunfig.toml',
        '/repo/.env',
        '/repo/sitecustomize.py',
        '/repo/.nvmrc',
        '/repo/.cargo/config.toml',
        '/repo/go.work',
        '/repo/.mvn/jvm.config',
      ]),
    );
  });

  it('in every folder above each tree, up to the root; those inside another tree apart', () => {
    const { above, within } = ancestorToolFiles(['/home/u/src/repo', '/home/u/src/repo/.forge/worktrees/w1']);
    expect(above).toEqual(
      expect.arrayContaining([
        '/home/u/src/pytest.ini',
        '/home/u/src/conftest.py',
        '/home/u/.cargo/config.toml',
        '/home/go.work',
        '/pyproject.toml',
        '/package.json',
      ]),
    );
    // Above the worktree, inside the repository: pytest run there finds the repository's when the
    // worktree has none.
    expect(within).toEqual(
      expect.arrayContaining(['/home/u/src/repo/pytest.ini', '/home/u/src/repo/.forge/conftest.py']),
    );
    expect(above.filter((path) => path.startsWith('/home/u/src/repo/'))).toEqual([]);
    // A tree's own files are git's to see.
    expect(
      [...above, ...within].filter((path) => path.startsWith('/home/u/src/repo/.forge/worktrees/w1/')),
    ).toEqual([]);
    // Each folder once, whatever number of trees lie below it.
    expect(new Set(above).size).toBe(above.length);
    expect(ancestorToolFiles(['/'])).toEqual({ above: [], within: [] });
  });

  it('in the home, each tool’s where its variable or its default puts it, and npm’s global config', () => {
    const files = homeToolFiles({ HOME: '/home/u', npm_config_userconfig: '/etc/npmrc-of-u' }, noSystem);
    expect(files).toEqual(
      expect.arrayContaining([
        '/home/u/.npmrc',
        '/home/u/.yarnrc.yml',
        '/etc/npmrc-of-u',
        '/home/u/.cargo/config.toml',
        '/home/u/.config/go/env',
        '/home/u/.gradle/init.gradle',
        '/home/u/.m2/settings.xml',
        '/home/u/.config/pip/pip.conf',
        '/home/u/.Rprofile',
        '/home/u/.julia/config/startup.jl',
        '/etc-of-test/ld.so.preload',
        '/etc-of-test/pip.conf',
        '/opt/node/etc/npmrc',
      ]),
    );
    expect(files).not.toContain('/home/u/Library/Application Support/go/env');
    const moved = homeToolFiles(
      {
        HOME: '/home/u',
        CARGO_HOME: '/opt/cargo',
        XDG_CONFIG_HOME: '/cfg',
        GRADLE_USER_HOME: '/g',
        GOENV: '/go.env',
        JULIA_DEPOT_PATH: '/depot:/other',
        npm_config_prefix: '/npm',
      },
      { ...noSystem, platform: 'darwin' },
    );
    expect(moved).toEqual(
      expect.arrayContaining([
        '/opt/cargo/config.toml',
        '/cfg/go/env',
        '/cfg/pip/pip.conf',
        '/g/gradle.properties',
        '/go.env',
        '/depot/config/startup.jl',
        '/npm/etc/npmrc',
        '/home/u/Library/Application Support/go/env',
      ]),
    );
    expect(
      moved.filter((path) => path.startsWith('/home/u/.cargo') || path.startsWith('/home/u/.config')),
    ).toEqual([]);
    expect(homeToolFiles({ GOENV: 'off' }, noSystem)).not.toContain('off');
    expect(homeToolDirs({ HOME: '/home/u' })).toEqual(['/home/u/.gradle/init.d']);
    expect(homeToolDirs({})).toEqual([]);
  });

  it('Maven’s and Gradle’s in Java’s home too, which it takes from the account, or -Duser.home', () => {
    const both = homeToolFiles({ HOME: '/home/u' }, { ...noSystem, userHome: '/root' });
    expect(both).toEqual(
      expect.arrayContaining([
        '/home/u/.m2/settings.xml',
        '/root/.m2/settings.xml',
        '/home/u/.gradle/init.gradle',
        '/root/.gradle/init.gradle.kts',
        '/home/u/.mavenrc',
      ]),
    );
    // `.mavenrc` is sourced by mvn's shell script, from HOME.
    expect(both).not.toContain('/root/.mavenrc');
    expect(homeToolDirs({ HOME: '/home/u' }, '/root')).toEqual([
      '/home/u/.gradle/init.d',
      '/root/.gradle/init.d',
    ]);
    expect(homeToolDirs({ HOME: '/home/u', GRADLE_USER_HOME: '/g' }, '/root')).toEqual(['/g/init.d']);
    const told = homeToolFiles(
      { HOME: '/home/u', MAVEN_OPTS: '-Duser.home=/data/j' },
      { ...noSystem, userHome: '/root' },
    );
    expect(told).toContain('/data/j/.m2/settings.xml');
    expect(told).not.toContain('/root/.m2/settings.xml');
  });

  it('all of them for a run, less those the doer’s scope leaves to it', async () => {
    const paths = await toolConfigPaths(
      ['/r'],
      { HOME: '/home/u' },
      (path) => path === '.cargo/config.toml',
      noSystem,
    );
    expect(paths.files).toEqual(
      expect.arrayContaining(['/r/.npmrc', '/pytest.ini', '/home/u/.cargo/config.toml']),
    );
    expect(paths.files).not.toContain('/r/.cargo/config.toml');
    expect(paths.dirs).toEqual(['/home/u/.gradle/init.d']);
  });

  it('tells a tool file by its path in a tree, at any depth', () => {
    for (const path of [
      'conftest.py',
      'sub/conftest.py',
      '.cargo/config.toml',
      'crates/a/.cargo/config.toml',
      '.npmrc',
    ])
      expect(isToolConfigPath(path), path).toBe(true);
    for (const path of ['src/main.rs', 'xconftest.py', 'config.toml', 'docs/npmrc.md'])
      expect(isToolConfigPath(path), path).toBe(false);
  });

  it('inside another tree, only those not there yet: one there is the user’s, in the checkout they work in', async () => {
    const repo = await mkdtemp(join(tmpdir(), 'forge-toolconfig-'));
    onTestFinished(() => rm(repo, { recursive: true, force: true }));
    await writeFile(join(repo, 'package.json'), '{}\n');
    const worktree = join(repo, '.forge', 'worktrees', 'w1');
    const { files } = await toolConfigPaths([worktree, repo], {}, () => false, noSystem);
    expect(files).toContain(join(repo, 'conftest.py'));
    expect(files).not.toContain(join(repo, 'package.json'));
  });
});
