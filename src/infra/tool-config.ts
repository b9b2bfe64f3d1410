// Files the commands a loop runs (its metric, guards and tracks) read besides the tree they measure,
// usually untracked, ignored or outside the repository, so no `git status` shows a change to them:
// npm's and yarn's settings (`node-options` preloads a script into every `npm run`, `yarnPath` swaps
// yarn itself), bun's `preload`, the `.env` files dotenv loads, Python's `sitecustomize.py`, the
// version files that pick the interpreter a version manager's shim runs, and each build tool's own
// settings (cargo's `runner` runs every binary `cargo run` and `cargo test` start, Go's `GOFLAGS`
// can name a `-toolexec` or an `-overlay` that swaps sources, a Gradle init script runs in every
// build). Several tools look for theirs in every folder above the one they run in: a `pytest.ini`
// and `conftest.py` in the folder above a repository with no pytest settings of its own made its
// failing tests pass (seen). An agent with a shell can write any of them.
import { userInfo } from 'node:os';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { pathExists } from './atomic-file.js';

/** Read from the project directory. */
const PROJECT_FILES = [
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pnpmfile.cjs',
  'bunfig.toml',
  '.env',
  '.env.local',
  'sitecustomize.py',
  'usercustomize.py',
  '.nvmrc',
  '.node-version',
  '.python-version',
  '.ruby-version',
  '.tool-versions',
  'mise.toml',
  '.mise.toml',
  '.cargo/config.toml',
  '.cargo/config',
  'go.work',
  '.mvn/jvm.config',
  '.mvn/maven.config',
  '.mvn/extensions.xml',
  '.Rprofile',
  '.Renviron',
];

/**
 * Looked for in the folder a tool runs in and in every folder above it (the first found wins, or all
 * are merged): cargo's config, Go's workspace, pytest's settings and the conftest.py beside them,
 * uv's, yarn's, Maven's project folder, the version managers' files, and the settings of the linters,
 * formatters and compilers a metric may count the complaints of.
 */
const WALKED_UP = [
  '.cargo/config.toml',
  '.cargo/config',
  'go.work',
  'pytest.ini',
  '.pytest.ini',
  'pytest.toml',
  '.pytest.toml',
  'pyproject.toml',
  'tox.ini',
  'setup.cfg',
  'conftest.py',
  'uv.toml',
  '.yarnrc.yml',
  '.mvn/jvm.config',
  '.mvn/maven.config',
  '.mvn/extensions.xml',
  'package.json',
  'tsconfig.json',
  'jsconfig.json',
  'deno.json',
  'deno.jsonc',
  '.tool-versions',
  'mise.toml',
  '.mise.toml',
  '.python-version',
  '.nvmrc',
  '.node-version',
  '.ruby-version',
  '.eslintrc',
  '.eslintrc.js',
  '.eslintrc.cjs',
  '.eslintrc.json',
  '.eslintrc.yaml',
  '.eslintrc.yml',
  'eslint.config.js',
  'eslint.config.mjs',
  'eslint.config.cjs',
  'eslint.config.ts',
  '.prettierrc',
  '.prettierrc.json',
  'prettier.config.js',
  '.babelrc',
  'babel.config.js',
  'babel.config.json',
  '.ruff.toml',
  'ruff.toml',
  'mypy.ini',
  '.mypy.ini',
  '.pylintrc',
  'pylintrc',
];

/** Read from the user's home, and each tool's settings where its variable (or its default) puts them. */
const HOME_FILES = [
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.bunfig.toml',
  '.tool-versions',
  '.mavenrc',
  '.pip/pip.conf',
  '.condarc',
  '.gemrc',
  '.bundle/config',
  '.Rprofile',
  '.Renviron',
];

/** Under the user's config folder (`XDG_CONFIG_HOME`, else `~/.config`). */
const XDG_FILES = ['pip/pip.conf', 'uv/uv.toml', 'pnpm/rc', 'go/env', 'mise/config.toml', 'ruff/ruff.toml'];

/** The machine's, read whoever runs, and writable by an agent that runs as root (a container). */
const SYSTEM_FILES = ['pip.conf', 'xdg/pip/pip.conf', 'uv/uv.toml', 'gemrc', 'ld.so.preload'];

export type Env = Readonly<Record<string, string | undefined>>;

const given = (value: string | undefined): string[] => (value === undefined || value === '' ? [] : [value]);
const homeOf = (env: Env): string | undefined => given(env.HOME)[0];

/** The home the password database gives the user running Forge, which Java takes for `user.home`. */
export function accountHome(): string | undefined {
  try {
    return userInfo().homedir;
  } catch {
    return undefined; // no entry for this uid (a container's arbitrary user)
  }
}

/** The value of `-D<name>=` in the JVM's and the build tools' option variables, when absolute. */
export function javaProperty(env: Env, name: string): string | undefined {
  const pattern = new RegExp(`(?:^|\\s)-D${name.replace(/\./g, '\\.')}=(\\S+)`);
  const options = [env.MAVEN_ARGS, env.MAVEN_OPTS, env.GRADLE_OPTS, env.JAVA_TOOL_OPTIONS, env._JAVA_OPTIONS];
  for (const value of options) {
    const found = pattern.exec(value ?? '')?.[1];
    if (found !== undefined && isAbsolute(found)) return found;
  }
  return undefined;
}

/**
 * The homes where Java's build tools (Maven, Gradle, Ivy) keep their settings and stores: HOME, and
 * `user.home`, which Java takes from the password database (`userHome`) unless `-Duser.home` says.
 */
export function javaHomes(env: Env, userHome: string | undefined): string[] {
  const homes = [homeOf(env), javaProperty(env, 'user.home') ?? userHome];
  return [...new Set(homes.filter((home): home is string => home !== undefined && isAbsolute(home)))];
}

/** A tool's folder: where its variable puts it (`value`), else `name` in the home; none without either. */
export function toolDir(env: Env, value: string | undefined, ...name: string[]): string | undefined {
  const home = homeOf(env);
  return given(value)[0] ?? (home === undefined ? undefined : join(home, ...name));
}

/** Whether `path` (relative to a tree, `/`-separated) is one of the tool files above, at any depth. */
export function isToolConfigPath(path: string): boolean {
  return [...PROJECT_FILES, ...WALKED_UP].some((name) => path === name || path.endsWith(`/${name}`));
}

/**
 * Whether `path` (relative, `/`-separated) bears the name of a file a tool reads from the folder it runs
 * in (`.npmrc`, `.env`, `.python-version`, …), at any depth: a metric can run its tool in any folder
 * (`npm --prefix=packages/app`, a script that changes folder first).
 */
export function isProjectToolPath(path: string): boolean {
  return PROJECT_FILES.some((name) => path === name || path.endsWith(`/${name}`));
}

/** The files read from a project directory `dir` (the repository, a worktree an agent works in). */
export function projectToolFiles(dir: string): string[] {
  return PROJECT_FILES.map((name) => join(dir, name));
}

/**
 * The walked-up files in every folder above each of `trees`, up to the root, by where the folder is:
 * `above` every tree, or `within` one (above a worktree that lies inside the repository,
 * `.forge/worktrees/<epic>` or a candidate's under `.git/`). A tool run in such a worktree finds the
 * repository root's file when the worktree has none, so one made there counts; but one already there is
 * the user's, tracked in the checkout they may be working in while the loop runs, and the worktree
 * holds its own copy of whatever is tracked.
 */
export function ancestorToolFiles(trees: readonly string[]): { above: string[]; within: string[] } {
  const inTree = (dir: string) => trees.some((tree) => dir === tree || dir.startsWith(`${tree}${sep}`));
  const folders = new Set<string>();
  for (const tree of trees) {
    if (dirname(tree) === tree) continue;
    for (let dir = dirname(tree); !folders.has(dir); dir = dirname(dir)) {
      folders.add(dir);
      if (dirname(dir) === dir) break;
    }
  }
  const files = (dirs: string[]) => dirs.flatMap((dir) => WALKED_UP.map((name) => join(dir, name)));
  return {
    above: files([...folders].filter((dir) => !inTree(dir))),
    within: files([...folders].filter(inTree)),
  };
}

export interface ToolConfigOptions {
  /** The machine's config folder. */
  etc?: string;
  /** The platform whose defaults apply (`darwin` keeps Go's and pip's under ~/Library). */
  platform?: NodeJS.Platform;
  /** The node whose npm's global config counts (its prefix's `etc/npmrc`). */
  execPath?: string;
  /** The account's home (javaHomes): toolConfigPaths takes it from the password database unless given. */
  userHome?: string | undefined;
}

/** Where Gradle keeps its settings and caches: GRADLE_USER_HOME, else `.gradle` in Java's homes. */
function gradleHomes(env: Env, userHome: string | undefined): string[] {
  const set = given(env.GRADLE_USER_HOME)[0];
  return set !== undefined ? [set] : javaHomes(env, userHome).map((home) => join(home, '.gradle'));
}

/** The files read from the user's home and the machine's config, wherever `env` puts them. */
export function homeToolFiles(env: Env, options: ToolConfigOptions = {}): string[] {
  const { etc = '/etc', platform = process.platform, execPath = process.execPath } = options;
  const home = homeOf(env);
  const under = (dir: string | undefined, names: readonly string[]) =>
    dir === undefined ? [] : names.map((name) => join(dir, name));
  const xdg = toolDir(env, env.XDG_CONFIG_HOME, '.config');
  const library = toolDir(env, undefined, 'Library', 'Application Support');
  const cargo = toolDir(env, env.CARGO_HOME, '.cargo');
  const julia = toolDir(env, env.JULIA_DEPOT_PATH?.split(':')[0], '.julia');
  const pyenv = toolDir(env, env.PYENV_ROOT, '.pyenv');
  // npm's global config: `<prefix>/etc/npmrc`, the prefix being node's own folder unless set.
  const npmPrefix = given(env.npm_config_prefix ?? env.NPM_CONFIG_PREFIX)[0] ?? dirname(dirname(execPath));
  const paths = [
    ...under(home, HOME_FILES),
    ...under(xdg, XDG_FILES),
    ...(platform === 'darwin' ? under(library, ['go/env', 'pip/pip.conf']) : []),
    ...under(cargo, ['config.toml', 'config']),
    ...gradleHomes(env, options.userHome).flatMap((gradle) =>
      under(gradle, ['gradle.properties', 'init.gradle', 'init.gradle.kts']),
    ),
    // Maven reads its user settings from Java's home; `.mavenrc` is read by its shell script, from HOME.
    ...javaHomes(env, options.userHome).flatMap((home) =>
      under(join(home, '.m2'), ['settings.xml', 'settings-security.xml']),
    ),
    ...under(julia, ['config/startup.jl']),
    ...under(pyenv, ['version']),
    ...under(etc, SYSTEM_FILES),
    join(npmPrefix, 'etc', 'npmrc'),
    ...given(env.npm_config_userconfig ?? env.NPM_CONFIG_USERCONFIG),
    ...given(env.npm_config_globalconfig ?? env.NPM_CONFIG_GLOBALCONFIG),
    ...(env.GOENV === 'off' ? [] : given(env.GOENV)),
    ...given(env.PIP_CONFIG_FILE),
    ...given(env.UV_CONFIG_FILE),
    ...given(env.R_PROFILE_USER),
    ...given(env.R_ENVIRON_USER),
    ...given(env.CONDARC),
    ...given(env.GEMRC),
    ...given(env.BUNDLE_USER_CONFIG),
  ];
  return [...new Set(paths)];
}

/** Folders every file of which a tool runs: Gradle's init scripts. */
export function homeToolDirs(env: Env, userHome?: string): string[] {
  return gradleHomes(env, userHome).map((gradle) => join(gradle, 'init.d'));
}

/**
 * Every tool file a run in `trees` reads, in the trees and above them, in the home and the machine's
 * config: the files, and the folders guarded whole. A path `open(tree, path)` leaves to the agent
 * (the doer's scope) is left out, and so is a walked-up file that is already there in a folder inside
 * another tree (ancestorToolFiles).
 */
export async function toolConfigPaths(
  trees: readonly string[],
  env: Env,
  open: (relativePath: string) => boolean = () => false,
  options: ToolConfigOptions = {},
): Promise<{ files: string[]; dirs: string[] }> {
  const project = trees.flatMap((tree) =>
    projectToolFiles(tree).filter((path) => !open(relative(tree, path).split(sep).join('/'))),
  );
  const withAccount = { userHome: accountHome(), ...options };
  const { above, within } = ancestorToolFiles(trees);
  const absent = [];
  for (const path of within) if (!(await pathExists(path))) absent.push(path);
  return {
    files: [...new Set([...project, ...above, ...absent, ...homeToolFiles(env, withAccount)])],
    dirs: homeToolDirs(env, withAccount.userHome),
  };
}
