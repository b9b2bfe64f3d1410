// The package stores in the home: where Maven, Gradle, Cargo, Go, NuGet, RubyGems, Yarn, Ivy and
// Coursier keep the packages they downloaded, outside any repository, and where a build loads them
// from without checking them again (a jar in `~/.m2/repository`, a crate's sources under
// `~/.cargo/registry/src`). A doer that rewrites the test framework's jar there passes every test,
// for every later run and every other project on the machine.
//
// A store is written as packages are downloaded: a new package is a new folder (or file), and what is
// in one never changes again. So a file changed is a tamper, and so is a file added to a package that
// was there before (a `.go` file in a module's folder is compiled with it); a new package is a
// download. A removal forges nothing where each file is a download of its own (the tool fetches it
// again), nor where a package's folder goes whole (Gradle prunes what no build used for 30 days); a
// file removed from a package still there changes what is compiled. Maven fetches a SNAPSHOT anew when
// it changes upstream, and records it in the version's metadata. Each store's own bookkeeping
// (Maven's metadata, Cargo's `.cargo-ok`) is not watched.
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { javaHomes, javaProperty, toolDir, type Env } from './tool-config.js';

export interface PackageStore {
  /** The store's folder (absolute). */
  root: string;
  /**
   * Folders under `root` (absolute) not looked at: downloads the tool verifies before it uses them
   * (Go's zips), and the project's own artifacts, which its build installs anew each time.
   */
  skip: readonly string[];
  /**
   * The package a file belongs to (its path relative to `root`, `/`-separated): the folder it was
   * unpacked in, for stores whose tools load every file of a package's folder; undefined where each
   * file is a download of its own.
   */
  packageOf: (rel: string) => string | undefined;
  /** Whether the file at `rel` (as for `packageOf`) is the tool's bookkeeping, which it rewrites itself. */
  bookkeeping: (rel: string) => boolean;
  /**
   * Whether the file at `rel` lies in a folder the tool downloads anew when it changes upstream (a
   * Maven SNAPSHOT), recording so in the folder's bookkeeping.
   */
  refreshed?: (rel: string) => boolean;
}

const none = () => undefined;

/** The first `depth` segments of `rel`, when it has more (a file inside such a folder). */
const folderAt =
  (depth: number) =>
  (rel: string): string | undefined => {
    const segments = rel.split('/');
    return segments.length > depth ? segments.slice(0, depth).join('/') : undefined;
  };

/** Go's module folders are named `<path>@<version>`: the segments up to the first holding an `@`. */
function goModule(rel: string): string | undefined {
  const segments = rel.split('/');
  const at = segments.findIndex((segment) => segment.includes('@'));
  return at < 0 || at === segments.length - 1 ? undefined : segments.slice(0, at + 1).join('/');
}

/** A gem is unpacked in `…/gems/<name>-<version>/`. */
function gemFolder(rel: string): string | undefined {
  const segments = rel.split('/');
  const at = segments.indexOf('gems');
  return at < 0 || segments.length <= at + 2 ? undefined : segments.slice(0, at + 2).join('/');
}

/**
 * Maven's: what it knows of each repository's versions, where each file came from, failed lookups,
 * and its own folders (`.meta/`, `.locks/`).
 */
const MAVEN_BOOKKEEPING =
  /(?:^|\/)(?:maven-metadata[^/]*\.xml(?:\.(?:sha1|sha256|sha512|md5))?|_remote\.repositories|resolver-status\.properties|[^/]*\.lastUpdated)$|(?:^|\/)\./;

/** Cargo's mark of a package unpacked whole. */
const cargoOk = (rel: string) => basename(rel) === '.cargo-ok';

/** A file in a SNAPSHOT version's folder (`…/1.0-SNAPSHOT/x-1.0-20261130.101500-3.jar`). */
const snapshot = (rel: string) => /(?:^|\/)[^/]+-SNAPSHOT\/[^/]+$/.test(rel);

export interface PackageStoreOptions {
  /** Folders watched whole already (an active virtualenv): a store inside one is left to it. */
  watched?: readonly string[];
  /** The folders, in Maven's repository, the project installs its own artifacts in. */
  own?: readonly string[];
  /**
   * The user's home as the password database has it (`os.userInfo().homedir`): Java takes its
   * `user.home` from there, not from HOME, so Maven, Gradle and Ivy keep their stores under it.
   */
  userHome?: string | undefined;
}

/**
 * The package stores the environment `env` points at, each where its tool looks: its variable when
 * set, else its default in the home (for the Java tools, in the home Java sees too). Not one inside
 * `cwd` (among its ignored files already), nor one inside a folder watched whole. Maven's repository
 * without the project's own artifacts (project-artifacts.ts), which `mvn install` writes on every build.
 */
export function packageStores(cwd: string, env: Env, options: PackageStoreOptions = {}): PackageStore[] {
  const store = (
    root: string | undefined,
    packageOf: PackageStore['packageOf'] = none,
    bookkeeping: PackageStore['bookkeeping'] = () => false,
    skip: readonly string[] = [],
    refreshed?: PackageStore['refreshed'],
  ): PackageStore[] =>
    root === undefined || !isAbsolute(root)
      ? []
      : [{ root, packageOf, bookkeeping, skip, ...(refreshed === undefined ? {} : { refreshed }) }];
  const homes = javaHomes(env, options.userHome);
  const inJavaHomes = (...name: string[]) => homes.map((home) => join(home, ...name));
  const maven = (root: string) =>
    store(
      root,
      none,
      (rel) => MAVEN_BOOKKEEPING.test(rel),
      (options.own ?? []).map((rel) => join(root, rel)),
      snapshot,
    );
  const cargo = toolDir(env, env.CARGO_HOME, '.cargo');
  const gopath = env.GOPATH?.split(':').find((dir) => isAbsolute(dir));
  const goModules = toolDir(
    env,
    env.GOMODCACHE || (gopath && join(gopath, 'pkg', 'mod')),
    'go',
    'pkg',
    'mod',
  );
  const gradleHomes = env.GRADLE_USER_HOME ? [env.GRADLE_USER_HOME] : inJavaHomes('.gradle');
  const xdgData = toolDir(env, env.XDG_DATA_HOME, '.local', 'share');
  const xdgCache = env.XDG_CACHE_HOME || undefined;
  const repoLocal = javaProperty(env, 'maven.repo.local');
  const stores = [
    ...(repoLocal === undefined ? inJavaHomes('.m2', 'repository') : [repoLocal]).flatMap(maven),
    ...gradleHomes.flatMap((gradle) => store(join(gradle, 'caches', 'modules-2', 'files-2.1'))),
    ...store(cargo && join(cargo, 'registry', 'src'), folderAt(2), cargoOk),
    ...store(cargo && join(cargo, 'git', 'checkouts'), folderAt(2), cargoOk),
    // Its `cache/download` holds the zips, checked against go.sum before they are unpacked.
    ...store(goModules, goModule, () => false, goModules === undefined ? [] : [join(goModules, 'cache')]),
    ...store(toolDir(env, env.NUGET_PACKAGES, '.nuget', 'packages'), folderAt(2)),
    ...store(env.GEM_HOME, gemFolder),
    // The user installs (`gem install --user-install`), not RubyGems' index beside them (`specs/`).
    ...store(toolDir(env, undefined, '.gem', 'ruby'), gemFolder),
    ...store(xdgData && join(xdgData, 'gem', 'ruby'), gemFolder),
    ...store(toolDir(env, env.YARN_CACHE_FOLDER, '.yarn', 'berry', 'cache')),
    ...inJavaHomes('.ivy2').flatMap((root) => store(root)),
    ...(env.COURSIER_CACHE
      ? [env.COURSIER_CACHE]
      : xdgCache
        ? [join(xdgCache, 'coursier')]
        : inJavaHomes('.cache', 'coursier')
    ).flatMap((root) => store(root)),
    ...inJavaHomes('Library', 'Caches', 'Coursier').flatMap((root) => store(root)),
  ];
  const outside = (dir: string) => relative(cwd, dir).startsWith('..');
  const seen = new Set<string>();
  return stores.filter((found) => {
    if (seen.has(found.root) || !outside(found.root)) return false;
    seen.add(found.root);
    return (options.watched ?? []).every((dir) => relative(dir, found.root).startsWith('..'));
  });
}

/**
 * Whether `path` (in a SNAPSHOT folder) is new, or is the version's own name rewritten beside the
 * timestamped file Maven fetched it as, new and of the same size (seen, Maven 3.8.7: a refresh writes
 * `lib-1.0-20261130.090000-2.jar` and copies it over `lib-1.0-SNAPSHOT.jar`). A forger must fake both.
 */
function freshTwin(
  path: string,
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): boolean {
  if (!before.has(path)) return true;
  const named = /^(.+)-SNAPSHOT((?:-[^.]+)?\..+)$/.exec(basename(path));
  if (named === null) return false;
  const [, stem = '', ext = ''] = named;
  const size = (id: string | undefined) => id?.split(':')[1];
  const twin = new RegExp(`^${literal(stem)}-\\d{8}\\.\\d{6}-\\d+${literal(ext)}$`);
  const folder = dirname(path);
  return [...after].some(
    ([other, id]) =>
      dirname(other) === folder &&
      !before.has(other) &&
      twin.test(basename(other)) &&
      size(id) === size(after.get(path)),
  );
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The store holding the absolute `path`, if one of `stores` does. */
export function storeOf(stores: readonly PackageStore[], path: string): PackageStore | undefined {
  return stores.find((found) => path.startsWith(`${found.root}${sep}`));
}

/** The absolute `path` in `store` as its functions take it: relative to its root, `/`-separated. */
const within = (store: PackageStore, path: string) =>
  path
    .slice(store.root.length + 1)
    .split(sep)
    .join('/');

/** The package folder (absolute) the absolute `path` in `store` belongs to; undefined where none. */
function packageFolder(store: PackageStore, path: string): string | undefined {
  const pkg = store.packageOf(within(store, path));
  return pkg === undefined ? undefined : join(store.root, pkg);
}

/**
 * Of the files in `stores` that changed from `before` to `after` (absolute paths with their
 * identities), those a download does not explain: a file changed, a file added to a package that was
 * there before, and a file removed from a package still there. Each store's bookkeeping apart, and a
 * SNAPSHOT whose folder's bookkeeping changed with it. Sorted.
 */
export function tamperedStoreFiles(
  stores: readonly PackageStore[],
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  const changed = [...after].filter(([path, id]) => before.get(path) !== id).map(([path]) => path);
  for (const path of before.keys()) if (!after.has(path)) changed.push(path);
  let packagesBefore: Set<string> | undefined;
  const existed = (pkg: string) => {
    if (packagesBefore === undefined) {
      packagesBefore = new Set();
      for (const path of before.keys()) {
        const found = storeOf(stores, path);
        const folder = found && packageFolder(found, path);
        if (folder !== undefined) packagesBefore.add(folder);
      }
    }
    return packagesBefore.has(pkg);
  };
  // The folders whose bookkeeping the tool rewrote (a SNAPSHOT it fetched anew), and the packages with
  // a file left.
  const rewrote = new Set<string>();
  const left = new Set<string>();
  for (const path of changed) {
    const found = storeOf(stores, path);
    if (found?.bookkeeping(within(found, path)) === true) rewrote.add(dirname(path));
  }
  for (const path of after.keys()) {
    const found = storeOf(stores, path);
    const folder = found && packageFolder(found, path);
    if (folder !== undefined) left.add(folder);
  }
  return changed
    .filter((path) => {
      const found = storeOf(stores, path);
      if (found === undefined) return true;
      const rel = within(found, path);
      if (found.bookkeeping(rel)) return false;
      if (found.refreshed?.(rel) === true && rewrote.has(dirname(path)) && freshTwin(path, before, after)) {
        return false;
      }
      const pkg = packageFolder(found, path);
      // Removed: tamper only from a package that is still there.
      if (!after.has(path)) return pkg !== undefined && left.has(pkg);
      if (before.has(path)) return true;
      // Added: tamper only inside a package that was there before.
      return pkg !== undefined && existed(pkg);
    })
    .sort();
}
