// install.sh and uninstall.sh end to end: the package as npm packs it, a temp HOME, real commands.
import { existsSync } from 'node:fs';
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, ROOT } from '../support/cli.js';
import { commandPath } from '../support/command-path.js';
import { networkEnv } from '../support/machine-env.js';

const BASH = commandPath('bash');
const NODE_DIR = dirname(process.execPath);
const SKILLS = (await readdir(join(ROOT, 'skills'), { withFileTypes: true }))
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const VERSION = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

let machineEnv: Promise<Record<string, string>> | undefined;
/**
 * What npm needs from this machine to reach its registry from a sandbox with its own HOME and
 * `--prefix`: the npm cache `npm ci` filled (so an install works offline when it can), and the
 * machine's TLS trust and proxy. A `--prefix` moves npm's global config (where this machine names its
 * CA file) and a new HOME hides the user's, so both are passed on as environment.
 */
function npmMachineEnv(): Promise<Record<string, string>> {
  machineEnv ??= readNpmMachineEnv();
  return machineEnv;
}

/** Two `npm config get` processes: asked once per file, not per test. */
async function readNpmMachineEnv(): Promise<Record<string, string>> {
  const get = async (key: string) =>
    (await execa('npm', ['config', 'get', key], { cwd: ROOT })).stdout.trim();
  const env: Record<string, string> = {
    npm_config_cache: await get('cache'),
    npm_config_update_notifier: 'false',
  };
  const cafile = await get('cafile');
  if (cafile !== '' && cafile !== 'null' && cafile !== 'undefined') env.npm_config_cafile = cafile;
  return { ...env, ...networkEnv() };
}

let packDir = '';
let tarball = '';

beforeAll(async () => {
  await assertBuilt();
  packDir = await mkdtemp(join(tmpdir(), 'forge-pack-'));
  // What `npm i -g` and `npx` would get: the `files` of package.json, as npm packs them. (No scripts:
  // `prepare` must not rebuild the dist/ other test files are running.)
  const packed = await execa('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], {
    cwd: ROOT,
    env: { npm_config_loglevel: 'error', npm_config_update_notifier: 'false' },
  });
  const [info] = JSON.parse(packed.stdout) as { filename: string }[];
  tarball = join(packDir, info?.filename ?? '');
}, 60_000);

afterAll(async () => {
  if (packDir !== '') await rm(packDir, { recursive: true, force: true });
});

let globalInstall: Promise<string> | undefined;

/**
 * The tarball installed with `npm install -g` into a prefix of its own (under packDir), once per file:
 * what is checked against it only reads the installed package and runs its commands with a HOME of its
 * own, and each install is ~4 s of CPU. Resolves to the prefix; an install that fails fails each test
 * that needs it.
 */
function installedGlobally(): Promise<string> {
  globalInstall ??= (async () => {
    const base = await mkdtemp(join(packDir, 'global-'));
    const prefix = join(base, 'global');
    const install = await execa(
      'npm',
      ['install', '--global', tarball, '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund'],
      {
        cwd: base,
        env: { HOME: base, PATH: `${NODE_DIR}:/usr/bin:/bin`, NO_COLOR: '1', ...(await npmMachineEnv()) },
        extendEnv: false,
        reject: false,
        timeout: 120_000,
      },
    );
    expect(install.exitCode, install.stderr).toBe(0);
    return prefix;
  })();
  return globalInstall;
}

interface Sandbox {
  base: string;
  home: string;
  /** The unpacked package (install.sh and uninstall.sh live here). */
  pkg: string;
  env: Record<string, string>;
  run(script: 'install.sh' | 'uninstall.sh', env?: Record<string, string>, timeoutMs?: number): Promise<Run>;
}

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A temp HOME and the package unpacked from the tarball, with this repo's node_modules. */
async function sandbox(options: { withNodeModules?: boolean } = {}): Promise<Sandbox> {
  const base = await mkdtemp(join(tmpdir(), 'forge-install-'));
  onTestFinished(() => rm(base, { recursive: true, force: true }));
  const home = join(base, 'home');
  await mkdir(home);
  await execa('tar', ['-xzf', tarball, '-C', base]);
  const pkg = join(base, 'package');
  if (options.withNodeModules !== false) await symlink(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  const env = { HOME: home, PATH: `${NODE_DIR}:/usr/bin:/bin`, NO_COLOR: '1' };
  return {
    base,
    home,
    pkg,
    env,
    async run(script, extra = {}, timeoutMs = 60_000) {
      const result = await execa(BASH, [join(pkg, script)], {
        cwd: base,
        env: { ...env, ...extra },
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
        timeout: timeoutMs,
      });
      return {
        exitCode: result.exitCode ?? -1,
        stdout: String(result.stdout),
        stderr: String(result.stderr),
      };
    },
  };
}

/** Every path under `dir`, relative, sorted: to compare a HOME before and after. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map((entry) => relative(dir, join(dir, entry))).sort();
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function manifestEntries(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.split('\t'));
}

describe('install.sh', () => {
  it('puts working commands and the skills in a temp HOME; twice is harmless; uninstall.sh removes exactly them', async () => {
    const box = await sandbox();
    const bin = join(box.home, '.local', 'bin');
    // The user's own things, which must survive both scripts.
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'my-tool'), '#!/bin/sh\necho mine\n');
    await mkdir(join(box.home, '.claude', 'skills', 'my-skill'), { recursive: true });
    await writeFile(join(box.home, '.claude', 'skills', 'my-skill', 'SKILL.md'), 'mine\n');
    const before = await tree(box.home);

    const first = await box.run('install.sh');
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      `Installed ${SKILLS.length} skills into ${join(box.home, '.claude', 'skills')}`,
    );
    expect(first.stdout).toContain(`${bin} is not on your PATH`);

    for (const command of ['forge-pack', 'ralph-loop']) {
      const version = await execa(join(bin, command), ['--version'], { env: box.env, extendEnv: false });
      expect(version.stdout.trim()).toBe(VERSION);
    }
    // The linked command works from anywhere on PATH, as a user runs it.
    const help = await execa('forge-pack', ['beads', '--help'], {
      cwd: box.base,
      env: { ...box.env, PATH: `${bin}:${box.env.PATH}` },
      extendEnv: false,
    });
    expect(help.stdout).toContain('create');
    for (const skill of SKILLS) {
      expect(await readFile(join(box.home, '.claude', 'skills', skill, 'SKILL.md'), 'utf8')).toBe(
        await readFile(join(ROOT, 'skills', skill, 'SKILL.md'), 'utf8'),
      );
    }
    expect(await exists(join(box.home, '.codex'))).toBe(false);

    const manifestPath = join(box.home, '.local', 'share', 'forge', 'install-manifest.txt');
    const manifest = await readFile(manifestPath, 'utf8');
    const placed = manifestEntries(manifest).map(([, path]) => path);
    expect(placed).toEqual(
      expect.arrayContaining([
        join(bin, 'forge-pack'),
        join(bin, 'ralph-loop'),
        ...SKILLS.map((skill) => join(box.home, '.claude', 'skills', skill)),
      ]),
    );
    expect(placed).not.toContain(join(bin, 'my-tool'));
    expect(placed).not.toContain(join(box.home, '.claude', 'skills', 'my-skill'));

    const second = await box.run('install.sh');
    expect(second.exitCode, second.stderr).toBe(0);
    expect(await readFile(manifestPath, 'utf8')).toBe(manifest);
    expect(new Set(placed).size).toBe(placed.length);
    expect(await readlink(join(bin, 'forge-pack'))).toBe(join(box.pkg, 'bin', 'forge-pack.js'));

    const removal = await box.run('uninstall.sh');
    expect(removal.exitCode, removal.stderr).toBe(0);
    expect(removal.stdout).toContain(`${2 + SKILLS.length} path(s) removed`);
    expect(await tree(box.home)).toEqual(before);
    expect(await readFile(join(bin, 'my-tool'), 'utf8')).toBe('#!/bin/sh\necho mine\n');

    const again = await box.run('uninstall.sh');
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('Nothing to uninstall');
  });

  it('leaves a skill you changed since it was installed: neither install again nor uninstall touches it', async () => {
    // Seen: uninstall.sh removed a skill folder with a file of the user's in it, and install replaced an
    // edited SKILL.md, on the strength of Forge's marker alone.
    const box = await sandbox();
    const skills = join(box.home, '.claude', 'skills');
    await mkdir(join(box.home, '.claude'));
    expect((await box.run('install.sh')).exitCode).toBe(0);
    const [edited = '', added = ''] = SKILLS;
    const shipped = await readFile(join(ROOT, 'skills', edited, 'SKILL.md'), 'utf8');
    await writeFile(join(skills, edited, 'SKILL.md'), `${shipped}\n# my own note\n`);
    await writeFile(join(skills, added, 'mine.md'), 'mine\n');
    const changed = [join(skills, edited), join(skills, added)];
    const mine = async () => [
      await readFile(join(skills, edited, 'SKILL.md'), 'utf8'),
      await readFile(join(skills, added, 'mine.md'), 'utf8'),
    ];
    const kept = [`${shipped}\n# my own note\n`, 'mine\n'];

    const again = await box.run('install.sh');
    expect(again.exitCode, again.stderr).toBe(0);
    for (const path of changed)
      expect(again.stdout).toContain(
        `Left in place (changed since it was installed; move it away to install this version): ${path}`,
      );
    expect(again.stdout).toContain(`Installed ${SKILLS.length - 2} skills into ${skills}`);
    expect(await mine()).toEqual(kept);

    const forgePack = (args: string[]) =>
      execa(process.execPath, [join(box.pkg, 'bin', 'forge-pack.js'), ...args], {
        cwd: box.base,
        env: box.env,
        extendEnv: false,
        reject: false,
      });
    const actions = (stdout: string) =>
      Object.fromEntries(
        (JSON.parse(stdout) as { targets: { skills: { name: string; action: string }[] }[] }).targets
          .flatMap((target) => target.skills)
          .map((skill) => [skill.name, skill.action]),
      );
    const update = await forgePack(['skills', 'install', '--claude', '--json']);
    expect(update.exitCode, update.stderr).toBe(0);
    expect(actions(update.stdout)).toMatchObject({ [edited]: 'changed', [added]: 'changed' });
    expect(Object.values(actions(update.stdout)).filter((a) => a === 'unchanged')).toHaveLength(
      SKILLS.length - 2,
    );
    expect(await mine()).toEqual(kept);

    const removal = await box.run('uninstall.sh');
    expect(removal.exitCode, removal.stderr).toBe(0);
    for (const path of changed)
      expect(removal.stdout).toContain(`Left in place (changed since install.sh placed it): ${path}`);
    expect(await readdir(skills)).toEqual([edited, added].sort());
    expect(await mine()).toEqual(kept);

    // The command agrees: what it placed goes, a copy changed since stays.
    expect((await forgePack(['skills', 'install', '--claude'])).exitCode).toBe(0);
    const uninstall = await forgePack(['skills', 'uninstall', '--claude', '--json']);
    expect(uninstall.exitCode, uninstall.stderr).toBe(0);
    expect(actions(uninstall.stdout)).toMatchObject({ [edited]: 'changed', [added]: 'changed' });
    expect(await readdir(skills)).toEqual([edited, added].sort());
    expect(await mine()).toEqual(kept);
  });

  it('honours FORGE_BIN_DIR, FORGE_SKILLS_DIR and FORGE_STATE_DIR, and removes the directories it created', async () => {
    const box = await sandbox();
    await mkdir(join(box.home, '.claude'));
    const env = {
      FORGE_BIN_DIR: join(box.base, 'tools', 'bin'),
      FORGE_SKILLS_DIR: join(box.base, 'agent-skills'),
      FORGE_STATE_DIR: join(box.base, 'state'),
    };
    const before = await tree(box.home);

    const install = await box.run('install.sh', env);
    expect(install.exitCode, install.stderr).toBe(0);
    expect(
      (await execa(join(env.FORGE_BIN_DIR, 'ralph-loop'), ['--version'], { env: box.env })).stdout,
    ).toContain(VERSION);
    expect(await readdir(env.FORGE_SKILLS_DIR)).toEqual(SKILLS);
    // FORGE_SKILLS_DIR replaces the defaults: nothing went into ~/.claude.
    expect(await readdir(join(box.home, '.claude'))).toEqual([]);
    const manifest = manifestEntries(
      await readFile(join(env.FORGE_STATE_DIR, 'install-manifest.txt'), 'utf8'),
    );
    expect(manifest.filter(([kind]) => kind === 'dir').map(([, path]) => path)).toEqual(
      expect.arrayContaining([
        join(box.base, 'tools'),
        env.FORGE_BIN_DIR,
        env.FORGE_SKILLS_DIR,
        env.FORGE_STATE_DIR,
      ]),
    );

    const removal = await box.run('uninstall.sh', env);
    expect(removal.exitCode, removal.stderr).toBe(0);
    expect(await tree(box.home)).toEqual(before);
    for (const dir of ['tools', 'agent-skills', 'state'])
      expect(await exists(join(box.base, dir)), dir).toBe(false);
  });

  it('installs the skills for Codex too when ~/.codex exists', async () => {
    const box = await sandbox();
    await mkdir(join(box.home, '.claude'));
    await mkdir(join(box.home, '.codex'));
    const install = await box.run('install.sh');
    expect(install.exitCode, install.stderr).toBe(0);
    expect(await readdir(join(box.home, '.claude', 'skills'))).toEqual(SKILLS);
    expect(await readdir(join(box.home, '.codex', 'skills'))).toEqual(SKILLS);
    expect((await box.run('uninstall.sh')).exitCode).toBe(0);
    expect(await tree(box.home)).toEqual(['.claude', '.codex']);
  });

  it('says where skills could go when neither ~/.claude nor ~/.codex exists', async () => {
    const box = await sandbox();
    const install = await box.run('install.sh');
    expect(install.exitCode, install.stderr).toBe(0);
    expect(install.stdout).toContain('Skills not installed');
    expect(install.stdout).toContain('FORGE_SKILLS_DIR');
    expect(await exists(join(box.home, '.claude'))).toBe(false);
  });

  it('refuses to overwrite a file it did not place, and changes nothing', async () => {
    const box = await sandbox();
    const bin = join(box.home, '.local', 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'forge-pack'), '#!/bin/sh\necho my own forge-pack\n');
    await mkdir(join(box.home, '.claude', 'skills', 'forge-init'), { recursive: true });
    await writeFile(join(box.home, '.claude', 'skills', 'forge-init', 'SKILL.md'), 'my notes\n');
    const before = await tree(box.home);

    const install = await box.run('install.sh');
    expect(install.exitCode).toBe(1);
    expect(install.stderr).toContain(join(bin, 'forge-pack'));
    expect(install.stderr).toContain(join(box.home, '.claude', 'skills', 'forge-init'));
    expect(install.stderr).toContain('nothing was changed');
    expect(await tree(box.home)).toEqual(before);
    expect(await readFile(join(bin, 'forge-pack'), 'utf8')).toContain('my own forge-pack');
  });

  it('leaves a listed path alone when it is no longer what it placed', async () => {
    const box = await sandbox();
    await mkdir(join(box.home, '.claude'));
    expect((await box.run('install.sh')).exitCode).toBe(0);
    const link = join(box.home, '.local', 'bin', 'ralph-loop');
    await rm(link);
    await writeFile(link, 'replaced by the user\n');

    const removal = await box.run('uninstall.sh');
    expect(removal.exitCode, removal.stderr).toBe(0);
    expect(removal.stdout).toContain(`Left in place (no longer the link install.sh made): ${link}`);
    expect(await readFile(link, 'utf8')).toBe('replaced by the user\n');
    expect(await exists(join(box.home, '.local', 'bin', 'forge-pack'))).toBe(false);
  });

  it('stops with exit 3 and a fix when Node is too old or git is missing', async () => {
    const box = await sandbox();
    const fake = join(box.base, 'fake-bin');
    await mkdir(fake);
    // install.sh needs only dirname before its checks: everything else is a bash builtin.
    await symlink(commandPath('dirname'), join(fake, 'dirname'));
    await writeFile(join(fake, 'node'), '#!/bin/sh\necho 18.19.0\n');
    await chmod(join(fake, 'node'), 0o755);

    const oldNode = await box.run('install.sh', { PATH: fake });
    expect(oldNode.exitCode).toBe(3);
    expect(oldNode.stderr).toContain('Node.js 18.19.0 is too old: Forge needs 20.11 or newer.');
    expect(oldNode.stderr).toContain('hint:');

    await rm(join(fake, 'node'));
    await symlink(process.execPath, join(fake, 'node'));
    const noGit = await box.run('install.sh', { PATH: fake });
    expect(noGit.exitCode).toBe(3);
    expect(noGit.stderr).toContain('git is not installed.');
    expect(await tree(box.home)).toEqual([]);
  });

  it('builds first when dist/ is missing or older than src/, and not otherwise', async () => {
    const box = await sandbox({ withNodeModules: false });
    await rm(join(box.pkg, 'dist'), { recursive: true });
    await mkdir(join(box.pkg, 'src'));
    await writeFile(join(box.pkg, 'src', 'main.ts'), 'export {};\n');
    // A fake npm that records its calls: `ci` brings node_modules, `run build` brings dist/.
    const fake = join(box.base, 'fake-bin');
    const log = join(box.base, 'npm-calls.log');
    await mkdir(fake);
    await writeFile(
      join(fake, 'npm'),
      [
        '#!/bin/sh',
        `echo "$*" >> '${log}'`,
        `if [ "$1" = ci ]; then ln -s '${join(ROOT, 'node_modules')}' node_modules; fi`,
        `if [ "$1 $2" = "run build" ]; then cp -R '${join(ROOT, 'dist')}' dist; fi`,
        '',
      ].join('\n'),
    );
    await chmod(join(fake, 'npm'), 0o755);
    const env = { PATH: `${fake}:${box.env.PATH}`, FORGE_BIN_DIR: join(box.base, 'bin') };
    const calls = async (): Promise<string[]> =>
      (await readFile(log, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');

    const first = await box.run('install.sh', env);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(await calls()).toEqual(['ci --no-audit --no-fund', 'run build']);

    const second = await box.run('install.sh', env);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(await calls()).toHaveLength(2);

    const later = new Date(Date.now() + 60_000);
    await utimes(join(box.pkg, 'src', 'main.ts'), later, later);
    const third = await box.run('install.sh', env);
    expect(third.exitCode, third.stderr).toBe(0);
    expect((await calls()).slice(2)).toEqual(['run build']);

    // No source is newer, but the code cache is another Node's (this one would refuse it): built again.
    const earlier = new Date(Date.now() - 3600_000);
    await utimes(join(box.pkg, 'src', 'main.ts'), earlier, earlier);
    const manifest = join(box.pkg, 'dist', 'bundle', 'program.json');
    const made = JSON.parse(await readFile(manifest, 'utf8')) as { node?: string };
    expect(made.node).toBe(process.version);
    await writeFile(manifest, JSON.stringify({ ...made, node: 'v0.0.0' }));
    const fourth = await box.run('install.sh', env);
    expect(fourth.exitCode, fourth.stderr).toBe(0);
    expect((await calls()).slice(3)).toEqual(['run build']);
  });

  it('installs from the unpacked package with no node_modules: npm brings the dependencies, and no build runs', async () => {
    // Seen: `npm install` in the package ran its `prepare` (node scripts/build.mjs), which the package
    // does not ship, and install.sh failed with "Cannot find module …/scripts/build.mjs".
    const box = await sandbox({ withNodeModules: false });
    const bin = join(box.base, 'bin');
    // npm fetches 62 packages here: a minute under a loaded 2-core machine (seen), so the guard against
    // a hang is the test's own, not the 60 s the other scripts get.
    const result = await box.run(
      'install.sh',
      { ...(await npmMachineEnv()), npm_config_prefer_offline: 'true', FORGE_BIN_DIR: bin },
      170_000,
    );
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('Installing runtime dependencies');
    expect(existsSync(join(box.pkg, 'node_modules', 'zod'))).toBe(true);
    const version = await execa(join(bin, 'ralph-loop'), ['--version'], { env: box.env, extendEnv: false });
    expect(version.stdout.trim()).toBe(VERSION);
  }, 180_000);

  it('is not needed with npm: `npm install -g` of the package puts both commands on PATH', async () => {
    const box = await sandbox({ withNodeModules: false });
    const prefix = await installedGlobally();
    for (const command of ['forge-pack', 'ralph-loop']) {
      const version = await execa(join(prefix, 'bin', command), ['--version'], {
        env: box.env,
        extendEnv: false,
      });
      expect(version.stdout.trim()).toBe(VERSION);
    }
  });

  it('is shipped in the npm package with uninstall.sh, the skills, templates and the built CLI', async () => {
    const box = await sandbox({ withNodeModules: false });
    for (const path of [
      'install.sh',
      'uninstall.sh',
      'bin/forge-pack.js',
      'bin/ralph-loop.js',
      'bin/run-built.js',
      // The executables are CommonJS by it: no ES module loader before a status.
      'bin/package.json',
      'dist/cli/main.js',
      'dist/bundle/ralph-loop.js',
      'dist/bundle/forge-pack.js',
    ]) {
      expect(await exists(join(box.pkg, path)), path).toBe(true);
    }
    expect((await lstat(join(box.pkg, 'install.sh'))).mode & 0o111).not.toBe(0);
    expect(await readdir(join(box.pkg, 'skills'))).toEqual(SKILLS);
    expect((await readdir(join(box.pkg, 'templates'))).length).toBeGreaterThan(0);
    const help = await execa(BASH, [join(box.pkg, 'install.sh'), '--help'], {
      env: box.env,
      extendEnv: false,
    });
    expect(help.stdout).toContain('FORGE_BIN_DIR');
    const wrong = await execa(BASH, [join(box.pkg, 'install.sh'), '--bogus'], {
      env: box.env,
      extendEnv: false,
      reject: false,
    });
    expect(wrong.exitCode).toBe(2);
  });
});

describe('forge-pack skills (after an npm install: no checkout, no install.sh run)', () => {
  const skillsIn = async (dir: string): Promise<string[]> =>
    (await readdir(dir).catch(() => [] as string[])).filter((name) => !name.startsWith('.')).sort();

  it('installs the skills for Claude Code and Codex, idempotently, and uninstall.sh agrees', async () => {
    const box = await sandbox({ withNodeModules: false });
    const prefix = await installedGlobally();
    await mkdir(join(box.home, '.claude'));
    await mkdir(join(box.home, '.codex'));
    const forgePack = (args: string[]) =>
      execa(join(prefix, 'bin', 'forge-pack'), args, {
        cwd: box.base,
        env: box.env,
        extendEnv: false,
        reject: false,
      });

    const first = await forgePack(['skills', 'install', '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout) as {
      targets: { agent: string; dir: string; skills: { name: string; action: string }[] }[];
    };
    const dirs = [
      join(box.home, '.claude', 'skills'),
      join(box.home, '.codex', 'skills'),
      join(box.home, '.agents', 'skills'),
    ];
    expect(report.targets.map((t) => t.dir)).toEqual(dirs);
    for (const dir of dirs) {
      expect(await skillsIn(dir)).toEqual(SKILLS);
      expect(await exists(join(dir, SKILLS[0] ?? '', '.forge-skill'))).toBe(true);
    }
    expect(report.targets.flatMap((t) => t.skills.map((s) => s.action))).toEqual(
      Array(3 * SKILLS.length).fill('installed'),
    );
    for (const skill of SKILLS) {
      expect(await readFile(join(dirs[0] ?? '', skill, 'SKILL.md'), 'utf8')).toBe(
        await readFile(join(ROOT, 'skills', skill, 'SKILL.md'), 'utf8'),
      );
    }

    const again = await forgePack(['skills', 'install']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain(`Skills for claude in ${dirs[0]}: ${SKILLS.length} unchanged.`);
    const listed = await forgePack(['skills', 'list', '--claude']);
    expect(listed.stdout.split('\n').filter((line) => line.endsWith('\tcurrent'))).toHaveLength(
      SKILLS.length,
    );

    // The manifest is install.sh's: its uninstall.sh removes exactly what the command placed.
    const removal = await execa(BASH, [join(prefix, 'lib', 'node_modules', 'forge-loop', 'uninstall.sh')], {
      env: box.env,
      extendEnv: false,
      reject: false,
    });
    expect(removal.exitCode, removal.stderr).toBe(0);
    expect(await tree(box.home)).toEqual(['.claude', '.codex']);
  }, 180_000);

  it('--project installs into the repository; a skill it did not place stops it; skills uninstall removes its own', async () => {
    const box = await sandbox();
    const forgePack = (args: string[], cwd = box.base) =>
      execa(process.execPath, [join(box.pkg, 'bin', 'forge-pack.js'), ...args], {
        cwd,
        env: box.env,
        extendEnv: false,
        reject: false,
      });
    const repo = join(box.base, 'repo');
    await mkdir(join(repo, 'src'), { recursive: true });
    await execa('git', ['init', '-q'], { cwd: repo, env: box.env, extendEnv: false });

    const project = await forgePack(['skills', 'install', '--project', '--claude'], join(repo, 'src'));
    expect(project.exitCode, project.stderr).toBe(0);
    expect(await skillsIn(join(repo, '.claude', 'skills'))).toEqual(SKILLS);
    expect(await exists(join(box.home, '.claude'))).toBe(false);

    const none = await forgePack(['skills', 'install']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('--claude');

    const mine = join(box.home, '.claude', 'skills', SKILLS[0] ?? '');
    await mkdir(mine, { recursive: true });
    await writeFile(join(mine, 'SKILL.md'), 'my own\n');
    const refused = await forgePack(['skills', 'install', '--claude']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(mine);
    expect(await skillsIn(join(box.home, '.claude', 'skills'))).toEqual([SKILLS[0]]);

    const removed = await forgePack(['skills', 'uninstall', '--project', '--json'], repo);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(await exists(join(repo, '.claude'))).toBe(false);
    const user = await forgePack(['skills', 'uninstall', '--claude']);
    expect(user.exitCode, user.stderr).toBe(0);
    expect(await readFile(join(mine, 'SKILL.md'), 'utf8')).toBe('my own\n');
  });
});

describe('a fresh clone', () => {
  /** The repository's files as a clone of it has them (tracked, and new files not ignored): no dist/. */
  async function freshClone(): Promise<{ base: string; clone: string; env: Record<string, string> }> {
    const base = await mkdtemp(join(tmpdir(), 'forge-clone-'));
    onTestFinished(() => rm(base, { recursive: true, force: true }));
    const clone = join(base, 'forge');
    const listed = await execa('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
    });
    for (const file of listed.stdout.split('\0')) {
      if (file === '' || !existsSync(join(ROOT, file))) continue;
      await mkdir(dirname(join(clone, file)), { recursive: true });
      await copyFile(join(ROOT, file), join(clone, file));
    }
    const home = join(base, 'home');
    await mkdir(home);
    const env = {
      HOME: home,
      PATH: `${NODE_DIR}:/usr/bin:/bin`,
      NO_COLOR: '1',
      ...(await npmMachineEnv()),
      npm_config_loglevel: 'error',
    };
    return { base, clone, env };
  }

  const npm = (args: string[], cwd: string, env: Record<string, string>) =>
    execa('npm', args, { cwd, env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 120_000 });

  it('`npm pack` builds dist/ first; the package has a LICENSE and no source maps, and its commands run', async () => {
    const { base, clone, env } = await freshClone();
    expect(await exists(join(clone, 'dist'))).toBe(false);
    // What `npm ci` leaves (its own `prepare` build is what `npm pack` is checked for here).
    await symlink(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    const packed = await npm(['pack', '--json', '--pack-destination', base], clone, env);
    expect(packed.exitCode, packed.stderr).toBe(0);
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = (info?.files ?? []).map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/cli/main.js',
        'dist/bundle/forge-pack.js',
        'dist/bundle/meta.json',
        'dist/bundle/program.json',
        'bin/forge-pack.js',
        'bin/run-built.js',
        'bin/package.json',
        'dist/bundle/status-fast.cjs',
        'dist/bundle/status-fast.cjs.cache',
        'LICENSE',
      ]),
    );
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    // The program and its code cache (src/cli/program.ts), one of each from the one build.
    expect(
      files.filter((file) => /^dist\/bundle\/program-[0-9a-f]{16}\.cjs(\.cache)?$/.test(file)),
    ).toHaveLength(2);

    // A checkout that has built before keeps earlier builds' files a while, for the runners still
    // using them: a package made there holds the current build alone.
    const earlier = ['chunk-EARLIER1.js', 'chunk-EARLIER1.js.map', 'program-0123456789abcdef.cjs'];
    for (const name of earlier) await writeFile(join(clone, 'dist', 'bundle', name), '// an earlier build\n');
    const again = await npm(['pack', '--dry-run', '--json'], clone, env);
    expect(again.exitCode, again.stderr).toBe(0);
    const [repacked] = JSON.parse(again.stdout.slice(again.stdout.indexOf('['))) as {
      files: { path: string }[];
    }[];
    const shipped = (repacked?.files ?? []).map((file) => file.path);
    expect(shipped.filter((file) => earlier.some((name) => file.endsWith(name)))).toEqual([]);
    expect(shipped.filter((file) => file.startsWith('dist/bundle/')).sort()).toEqual(
      files.filter((file) => file.startsWith('dist/bundle/')).sort(),
    );

    // The commands it packed run. (`npm install -g` of a package and its dependencies is checked above,
    // on the tarball packed from this checkout: the same manifest, ~6 s of CPU an install.)
    const unpacked = join(base, 'unpacked');
    await mkdir(unpacked);
    await execa('tar', ['-xzf', join(base, info?.filename ?? ''), '-C', unpacked]);
    const pkg = join(unpacked, 'package');
    await symlink(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
    for (const command of ['forge-pack', 'ralph-loop']) {
      const version = await execa(process.execPath, [join(pkg, 'bin', `${command}.js`), '--version'], {
        env,
        extendEnv: false,
      });
      expect(version.stdout.trim()).toBe(VERSION);
    }
  }, 240_000);

  it('`npm install -g .` says to run `npm ci` first, and works after it', async () => {
    const { base, clone, env } = await freshClone();
    const prefix = join(base, 'global');
    const bare = await npm(['install', '--global', '.', '--prefix', prefix], clone, env);
    expect(bare.exitCode).not.toBe(0);
    expect(bare.stderr).toContain('Run `npm ci` there first');

    await symlink(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    const linked = await npm(['install', '--global', '.', '--prefix', prefix], clone, env);
    expect(linked.exitCode, linked.stderr).toBe(0);
    for (const command of ['forge-pack', 'ralph-loop']) {
      const version = await execa(join(prefix, 'bin', command), ['--version'], { env, extendEnv: false });
      expect(version.stdout.trim()).toBe(VERSION);
    }
  }, 240_000);
});
