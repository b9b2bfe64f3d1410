// What a loop's agents leave in the files git ignores: the installed dependencies (node_modules, a
// virtualenv, vendor/, and what interpreters load from outside the tree), tools' caches, and the rest
// (ignored-guard.ts). Neither the scope check nor a revert sees or undoes a change there, yet the
// metric loads them: a doer that patches a package the metric imports would raise its own score, and
// every later one's. The runner fingerprints them around each agent run. A cache an agent wrote is
// removed; a change to the dependencies it did not allow is the agent's tamper, and since Forge keeps
// no copy to put back, the loop stops until a person reinstalls them (or accepts them as they are).
import { tmpdir } from 'node:os';
import { basename, delimiter, isAbsolute, join, relative, sep } from 'node:path';
import { readFileIfExists, writeJsonAtomic } from '../infra/atomic-file.js';
import {
  changedCaches,
  changedFiles,
  fingerprintFiles,
  fingerprintPrograms,
  identityAt,
  watchedEntries,
  type IgnoredFiles,
} from '../infra/ignored-files.js';
import type { ContentHashes } from '../infra/content-hashes.js';
import { FORGE_STATE_DIRS } from '../infra/forge-state.js';
import { listDirIfExists, realPath, removePath } from '../infra/fs-ops.js';
import {
  packageStores,
  storeOf,
  tamperedStoreFiles,
  type PackageStore,
  type PackageStoreOptions,
} from '../infra/package-stores.js';
import { accountHome } from '../infra/tool-config.js';
import { projectArtifacts } from '../infra/project-artifacts.js';
import { pythonSitePackages } from '../infra/python-sites.js';
import type { Git } from '../infra/git.js';
import { isPathInScope } from './keep-revert.js';

export interface DependencyGuardContext {
  /** The working tree the agents work in and the metric measures. */
  cwd: string;
  git: Pick<Git, 'ignoredPaths'>;
  /** Where the runner keeps its own records, outside anything an agent is meant to write. */
  vaultDir: string;
  /** The environment the loop runs in: an active virtualenv or conda environment is watched too. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** The loop's workspace, guarded apart like the runner's other state directories. */
  workspace?: string;
  /** Whether the environments outside the tree are watched too (default: yes). */
  outside?: boolean;
}

/**
 * What the metric's interpreters load from outside the tree, the caller's environment says where: the
 * virtualenv or conda environment the runner was started in (poetry's, pyenv's); Python's user
 * site-packages, whose `.pth` lines every Python process runs as it starts; Node's global folders
 * (`~/.node_modules`, `~/.node_libraries`), which `require` falls back on; the packages `npx` runs
 * when none is installed in the tree (`~/.npm/_npx`); and each directory of PYTHONPATH and NODE_PATH.
 * Absent ones are named too, and the user sites are listed anew for each snapshot: one an agent makes
 * is seen.
 */
async function outsideEnvironments(ctx: DependencyGuardContext): Promise<string[]> {
  const env = ctx.env ?? {};
  const home = env.HOME === undefined || env.HOME === '' ? undefined : env.HOME;
  const userBase = env.PYTHONUSERBASE || (home === undefined ? undefined : join(home, '.local'));
  const userSites =
    userBase === undefined
      ? []
      : ((await listDirIfExists(join(userBase, 'lib'))) ?? [])
          .filter((name) => /^python\d/.test(name))
          .map((name) => join(userBase, 'lib', name, 'site-packages'));
  const npmCache =
    env.npm_config_cache || env.NPM_CONFIG_CACHE || (home === undefined ? undefined : join(home, '.npm'));
  const searchPaths = [env.PYTHONPATH, env.NODE_PATH].flatMap((list) => (list ?? '').split(delimiter));
  const dirs = [
    env.VIRTUAL_ENV,
    env.CONDA_PREFIX,
    ...userSites,
    ...(home === undefined
      ? []
      : [join(home, 'Library', 'Python'), join(home, '.node_modules'), join(home, '.node_libraries')]),
    ...(npmCache === undefined ? [] : [join(npmCache, '_npx')]),
    ...searchPaths,
  ];
  return [
    ...new Set(
      dirs.filter(
        (dir): dir is string =>
          dir !== undefined && isAbsolute(dir) && relative(ctx.cwd, dir).startsWith('..'),
      ),
    ),
  ];
}

/**
 * The agent CLIs Forge runs, which may update themselves as they run (Claude Code's native install
 * moves `~/.local/bin/claude` to each new version): not a program a metric runs.
 */
const AGENT_CLIS = new Set(['claude', 'codex', 'gemini', 'opencode']);

/**
 * The prototypes a version manager's rehash writes in its shims folder while it runs (pyenv's
 * `.pyenv-shim`, which is also its lock, and `.pyenv-source-shim`; rbenv's `.rbenv-shim`, nodenv's,
 * goenv's …), there for a moment whenever anything on the machine rehashes: a new shell's
 * `pyenv init`, a `pip install` through a shim. No command is called by such a name, so none can
 * stand in for one a metric runs; watched, they made a doer's tamper of someone else's rehash.
 */
const REHASH_LOCK = /^\.[a-z0-9]+(?:-[a-z0-9]+)*-shim$/;

/** Whether a program found on the PATH is one a metric could run in place of another. */
function watchedProgram(path: string): boolean {
  const name = basename(path);
  return !AGENT_CLIS.has(name) && name !== '__pycache__' && !REHASH_LOCK.test(name);
}

/**
 * The PATH directories outside the tree, each once: a program an agent puts there, or changes, runs in
 * place of the one the metric command names (a `python3` in `~/.local/bin`, ahead of `/usr/bin`).
 */
async function programDirs(ctx: DependencyGuardContext): Promise<string[]> {
  const seen = new Set<string>();
  for (const dir of (ctx.env?.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir) || !relative(ctx.cwd, dir).startsWith('..')) continue;
    const real = await realPath(dir).catch(() => undefined);
    if (real !== undefined) seen.add(real);
  }
  return [...seen];
}

/** Jest's cache directories (`jest_<uid>`) in the temp directory the runner and the metric use. */
async function jestCaches(ctx: DependencyGuardContext): Promise<string[]> {
  const temp = ctx.env?.TMPDIR || tmpdir();
  const names = (await listDirIfExists(temp)) ?? [];
  return names.filter((name) => name === 'jest' || name.startsWith('jest_')).map((name) => join(temp, name));
}

/**
 * The build caches outside the tree that tools load in place of building again, each where its tool
 * looks for it: the variable that names it when set to an absolute path, else its default under the
 * home. Go's (compiled packages, and the results `go test` prints as `(cached)`), ccache's and
 * sccache's compiled objects, Deno's (fetched modules and their compiled output) and Zig's; and
 * those only a variable turns on: Python's bytecode prefix, Node's compile cache, Bun's transpiler
 * cache. Each file in one is filed under a hash of what it was built from, so a file an agent writes
 * under the hash of an unchanged source is loaded in its place, by the metric too. Those inside the
 * tree are among its ignored files already.
 */
export function buildCacheDirs(cwd: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const absolute = (value: string | undefined) =>
    value !== undefined && isAbsolute(value) ? value : undefined;
  const home = absolute(env.HOME);
  const under = (base: string | undefined, name: string) =>
    base === undefined ? undefined : join(base, name);
  const xdg = absolute(env.XDG_CACHE_HOME) ?? under(home, '.cache');
  const macos = under(home, join('Library', 'Caches'));
  const named = (variable: string, ...defaults: (string | undefined)[]) => {
    const set = absolute(env[variable]);
    return set === undefined ? defaults : [set];
  };
  const dirs = [
    ...named('GOCACHE', under(xdg, 'go-build'), under(macos, 'go-build')),
    ...named('CCACHE_DIR', under(xdg, 'ccache'), under(home, '.ccache')),
    ...named('SCCACHE_DIR', under(xdg, 'sccache')),
    ...named('DENO_DIR', under(xdg, 'deno'), under(macos, 'deno')),
    ...named('ZIG_GLOBAL_CACHE_DIR', under(xdg, 'zig')),
    ...named('PYTHONPYCACHEPREFIX'),
    ...named('NODE_COMPILE_CACHE'),
    ...named('BUN_RUNTIME_TRANSPILER_CACHE_PATH'),
  ];
  return [
    ...new Set(dirs.filter((dir): dir is string => dir !== undefined && relative(cwd, dir).startsWith('..'))),
  ];
}

/**
 * Every file under `dirs` (absolute) as a cache of its own directory's, into `files`; `fileByFile`, as a
 * cache of its own. What an agent wrote in a cache is removed with the cache, or, file by file, alone,
 * and the rest stays warm: a build cache in the home holds every project's builds (gigabytes), and a
 * doer that runs the tests writes to it on every iteration.
 */
function addCaches(files: IgnoredFiles, dirs: readonly string[], fileByFile = false): void {
  for (const dir of dirs) {
    const found = fingerprintFiles('/', [dir]);
    for (const kind of [found.dependencies, found.caches, found.others]) {
      for (const [path, id] of kind) {
        if (path.endsWith(' ->')) continue;
        files.caches.set(path, id);
        files.cacheOf.set(path, fileByFile ? path : dir);
      }
    }
  }
}

/**
 * The ignored files (Forge's own state apart) and the environments outside the tree, by kind, with
 * their identities (none when there are none); undefined when git cannot say which files it ignores.
 */
export async function snapshotIgnored(ctx: DependencyGuardContext): Promise<IgnoredFiles | undefined> {
  const ignored = await ctx.git.ignoredPaths?.().catch(() => undefined);
  if (ignored === undefined) return undefined;
  const workspace = ctx.workspace === undefined ? '..' : relative(ctx.cwd, ctx.workspace);
  const own = [...FORGE_STATE_DIRS, ...(workspace.startsWith('..') ? [] : [workspace.split(sep).join('/')])];
  const outside = ctx.outside === false ? [] : await outsideEnvironments(ctx);
  const files = fingerprintFiles(ctx.cwd, [...watchedEntries(ignored, own), ...outside], own);
  if (ctx.outside !== false) {
    // The system Python's site-packages, but one already watched whole (an active virtualenv's): its
    // entries, and the bytecode cache at its top, which is a cache like any other.
    const startup = (await pythonSitePackages(ctx.env ?? {})).filter(
      (dir) => !outside.some((root) => !relative(root, dir).startsWith('..')),
    );
    // Jest's transform cache in the temp directory too: it runs what it finds there for a source whose
    // hash it was filed under.
    addCaches(files, [...startup.map((dir) => join(dir, '__pycache__')), ...(await jestCaches(ctx))]);
    // Not one inside an environment watched whole (a NODE_COMPILE_CACHE in a virtualenv).
    const builds = buildCacheDirs(ctx.cwd, ctx.env ?? {}).filter(
      (dir) => !outside.some((root) => !relative(root, dir).startsWith('..')),
    );
    addCaches(files, builds, true);
    // The folders the project installs its own artifacts in change with every `mvn install`.
    const own = await projectArtifacts(ctx.cwd);
    for (const store of homeStores(ctx, { watched: outside, own })) {
      const found = fingerprintFiles('/', [store.root], store.skip);
      for (const kind of [found.dependencies, found.caches, found.others])
        for (const [path, id] of kind) files.stores.set(path, id);
    }
    const programs = fingerprintPrograms([...(await programDirs(ctx)), ...startup]);
    files.programs = new Map([...programs].filter(([path]) => watchedProgram(path)));
  }
  return files;
}

/**
 * Removes the caches an agent wrote to (or removed from) between `before` and `after`, for their tools
 * to rebuild from the sources: what a cache holds is loaded in their place. Returns the caches removed.
 */
export async function removeWrittenCaches(
  ctx: DependencyGuardContext,
  before: IgnoredFiles,
  after: IgnoredFiles,
): Promise<string[]> {
  const caches = changedCaches(before, after);
  for (const cache of caches)
    await removePath(isAbsolute(cache) ? cache : join(ctx.cwd, cache), { recursive: true });
  return caches;
}

/**
 * The dependencies' files that changed from `before` to `after`: added, removed, or holding other
 * bytes or another mode. A file written anew with the same bytes (a reinstall) did not change.
 */
export async function changedDependencies(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  contents: ContentHashes,
): Promise<string[]> {
  return contents.contentChanged(before, after, changedFiles(before, after));
}

/**
 * The files in the package stores of the home (package-stores.ts) changed from `before` to `after` that
 * no download explains.
 */
export function changedStoreFiles(
  ctx: DependencyGuardContext,
  before: IgnoredFiles,
  after: IgnoredFiles,
): string[] {
  return tamperedStoreFiles(homeStores(ctx), before.stores, after.stores);
}

/** The package stores the loop's environment points at, in Java's home from the account too. */
function homeStores(ctx: DependencyGuardContext, options: PackageStoreOptions = {}): PackageStore[] {
  return packageStores(ctx.cwd, ctx.env ?? {}, { userHome: accountHome(), ...options });
}

/** Of the files an agent changed in the dependencies, those it may not: all, but under a doer's scope. */
export function forbiddenChanges(changed: readonly string[], allowed: readonly string[]): string[] {
  return changed.filter((path) => !isPathInScope(path, allowed));
}

/** What the runner records when an agent changed files it cannot put back: the state it left them in. */
interface Changed {
  role: string;
  /** What was changed, as the message names it. */
  what: ChangedKind;
  paths: string[];
  /** Each path's identity as the agent left it; null where it removed the file. */
  left: Record<string, string | null>;
}

export type ChangedKind =
  'installed dependencies' | 'ignored files' | 'installed dependencies and ignored files';

const recordPath = (ctx: DependencyGuardContext) => join(ctx.vaultDir, 'dependencies-changed.json');

/** The identity of a recorded path as the fingerprint takes it; null when there is none. */
function identityOf(ctx: DependencyGuardContext, path: string): Promise<string | null> {
  const file = path.endsWith(' ->') ? path.slice(0, -3) : path;
  return identityAt(isAbsolute(file) ? file : join(ctx.cwd, file));
}

/** Remembers that `role` left `paths` as they are now, so no later bead runs on them unchecked. */
export async function noteChangedFiles(
  ctx: DependencyGuardContext,
  role: string,
  what: ChangedKind,
  paths: readonly string[],
): Promise<void> {
  const left: Record<string, string | null> = {};
  for (const path of paths) left[path] = await identityOf(ctx, path);
  const record: Changed = { role, what, paths: [...paths], left };
  await writeJsonAtomic(recordPath(ctx), record);
}

/**
 * Why the loop may not go on, when an agent changed files Forge cannot put back and they are still as
 * it left them; undefined when nothing was changed, or every one of them changed since (reinstalled,
 * put back), which clears the record.
 */
export async function changedFilesLeft(ctx: DependencyGuardContext): Promise<string | undefined> {
  const text = await readFileIfExists(recordPath(ctx));
  if (text === undefined) return undefined;
  let record: Partial<Changed> = {};
  try {
    record = JSON.parse(text) as Partial<Changed>;
  } catch {
    // Unreadable (not Forge's writing): held, as a record of a change.
  }
  const left = typeof record.left === 'object' && record.left !== null ? Object.entries(record.left) : [];
  let changedSince = left.length > 0;
  for (const [path, was] of left) if ((await identityOf(ctx, path)) === was) changedSince = false;
  if (changedSince) {
    await removePath(recordPath(ctx));
    return undefined;
  }
  const paths = Array.isArray(record.paths) ? record.paths.map(String) : [];
  const what: ChangedKind = record.what ?? 'installed dependencies';
  const stores = homeStores(ctx);
  const stored = paths.some((path) => isAbsolute(path) && storeOf(stores, path) !== undefined);
  const fix =
    what === 'ignored files'
      ? 'Put them back as they were (a path the metric command writes again itself can be named in the loop’s scope.rebuilt_paths)'
      : what === 'installed dependencies'
        ? stored
          ? 'Delete the packages they belong to from the store, for their tool to download them again'
          : 'Reinstall them (npm ci, pip install …)'
        : 'Reinstall the dependencies and put the files back as they were';
  return (
    `The ${typeof record.role === 'string' ? record.role : 'agent'} changed ${what} (${nameSome(paths)}), ` +
    `which the metric may load and Forge cannot put back. ${fix}, then run again; ` +
    `or, having checked them, delete ${recordPath(ctx)} to go on with them as they are.`
  );
}

/** A few paths, then how many more. */
export function nameSome(paths: readonly string[], shown = 3): string {
  if (paths.length === 0) return 'files';
  const more = paths.length - shown;
  return more > 0 ? `${paths.slice(0, shown).join(', ')} and ${more} more` : paths.join(', ');
}
