// Where the package stores in the home are, and which of their changes a download does not explain.
import { describe, expect, it } from 'vitest';
import { packageStores, tamperedStoreFiles } from '../../src/infra/package-stores.js';

const HOME = '/home/u';
const roots = (env: Record<string, string>, cwd = '/work/repo', watched: string[] = []) =>
  packageStores(cwd, env, { watched }).map((store) => store.root);

/** Identities keyed by path: the same id for the same file, another when it was rewritten. */
const files = (...paths: string[]) => new Map(paths.map((path) => [path, `id:${path}`]));

describe('the package stores in the home', () => {
  it('are where each tool keeps them by default', () => {
    expect(roots({ HOME })).toEqual([
      '/home/u/.m2/repository',
      '/home/u/.gradle/caches/modules-2/files-2.1',
      '/home/u/.cargo/registry/src',
      '/home/u/.cargo/git/checkouts',
      '/home/u/go/pkg/mod',
      '/home/u/.nuget/packages',
      '/home/u/.gem/ruby',
      '/home/u/.local/share/gem/ruby',
      '/home/u/.yarn/berry/cache',
      '/home/u/.ivy2',
      '/home/u/.cache/coursier',
      '/home/u/Library/Caches/Coursier',
    ]);
  });

  it('are where the tools’ variables put them', () => {
    const found = roots({
      HOME,
      MAVEN_OPTS: '-Xmx1g -Dmaven.repo.local=/data/m2',
      GRADLE_USER_HOME: '/data/gradle',
      CARGO_HOME: '/data/cargo',
      GOPATH: '/data/go:/other/go',
      GEM_HOME: '/data/gems',
      NUGET_PACKAGES: '/data/nuget',
    });
    expect(found).toEqual(
      expect.arrayContaining([
        '/data/m2',
        '/data/gradle/caches/modules-2/files-2.1',
        '/data/cargo/registry/src',
        '/data/go/pkg/mod',
        '/data/gems',
        '/data/nuget',
      ]),
    );
    expect(found).not.toContain('/home/u/.m2/repository');
    expect(found).not.toContain('/home/u/go/pkg/mod');
    // GOMODCACHE before GOPATH; a relative repo.local is not a place Forge can watch.
    expect(roots({ HOME, GOPATH: '/data/go', GOMODCACHE: '/mods' })).toContain('/mods');
    expect(roots({ HOME, MAVEN_ARGS: '-Dmaven.repo.local=rel/m2' })).toContain('/home/u/.m2/repository');
  });

  it('are where Java puts them for its tools: in the account’s home as well, or where -Duser.home says', () => {
    // Java takes user.home from the password database, not from HOME.
    const both = packageStores('/work/repo', { HOME }, { userHome: '/root' }).map((store) => store.root);
    for (const home of [HOME, '/root'])
      expect(both).toEqual(
        expect.arrayContaining([
          `${home}/.m2/repository`,
          `${home}/.gradle/caches/modules-2/files-2.1`,
          `${home}/.ivy2`,
          `${home}/.cache/coursier`,
        ]),
      );
    expect(both).not.toContain('/root/.cargo/registry/src');
    const told = roots({ HOME, JAVA_TOOL_OPTIONS: '-Xss4m -Duser.home=/data/java' });
    expect(told).toContain('/data/java/.m2/repository');
    expect(told).toContain('/home/u/.m2/repository');
  });

  it('are none without a home or a variable, and not one inside the tree or an environment watched whole', () => {
    expect(roots({})).toEqual([]);
    expect(roots({ GEM_HOME: '/work/repo/vendor/gems' })).toEqual([]);
    expect(roots({ GEM_HOME: '/venv/gems' }, '/work/repo', ['/venv'])).toEqual([]);
    expect(roots({ HOME }, '/home/u')).toEqual([]);
  });
});

describe('a change in a package store', () => {
  const stores = packageStores('/work/repo', { HOME });
  const m2 = '/home/u/.m2/repository/org/junit/junit/4.13.2';
  const crates = '/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f';
  const mods = '/home/u/go/pkg/mod/github.com/acme';

  it('is tamper when a file there before is rewritten, or removed from a package still there', () => {
    const before = files(
      `${m2}/junit-4.13.2.jar`,
      `${m2}/junit-4.13.2.pom`,
      `${crates}/serde-1.0.0/Cargo.toml`,
      `${crates}/serde-1.0.0/src/lib.rs`,
    );
    const after = new Map(before);
    after.set(`${m2}/junit-4.13.2.jar`, 'forged');
    after.delete(`${crates}/serde-1.0.0/src/lib.rs`);
    expect(tamperedStoreFiles(stores, before, after)).toEqual([
      `${crates}/serde-1.0.0/src/lib.rs`,
      `${m2}/junit-4.13.2.jar`,
    ]);
  });

  it('is no tamper when a download goes (fetched again), or a package goes whole (pruned)', () => {
    const gradle = '/home/u/.gradle/caches/modules-2/files-2.1/org.junit/junit/4.13.2';
    const before = files(
      `${m2}/junit-4.13.2.jar`,
      `${m2}/junit-4.13.2.pom`,
      `${gradle}/abc/junit-4.13.2.jar`,
      `${gradle}/def/junit-4.13.2.pom`,
      `${crates}/serde-1.0.0/Cargo.toml`,
      `${crates}/serde-1.0.0/src/lib.rs`,
      `${mods}/score@v1.0.0/score.go`,
    );
    const after = files(`${m2}/junit-4.13.2.pom`);
    expect(tamperedStoreFiles(stores, before, after)).toEqual([]);
  });

  it('is a download when a SNAPSHOT is fetched anew, as Maven does it; tamper otherwise', () => {
    const snap = '/home/u/.m2/repository/org/acme/lib/1.0-SNAPSHOT';
    const before = new Map([
      [`${snap}/lib-1.0-SNAPSHOT.jar`, '100644:437:11:1'],
      [`${snap}/lib-1.0-20261129.101500-1.jar`, '100644:437:12:1'],
      [`${snap}/maven-metadata-central.xml`, '100644:558:13:1'],
    ]);
    // Seen with Maven 3.8.7: the new timestamped jar, copied over the version's own name, and the
    // metadata rewritten.
    const fetched = new Map([
      ...before,
      [`${snap}/lib-1.0-SNAPSHOT.jar`, '100644:512:11:2'],
      [`${snap}/lib-1.0-20261130.090000-2.jar`, '100644:512:14:2'],
      [`${snap}/maven-metadata-central.xml`, '100644:558:15:2'],
    ]);
    expect(tamperedStoreFiles(stores, before, fetched)).toEqual([]);
    // The jar rewritten with the metadata as it was, or with no fetched twin of its size: not Maven's.
    const unfetched = new Map([...before, [`${snap}/lib-1.0-SNAPSHOT.jar`, '100644:512:11:2']]);
    expect(tamperedStoreFiles(stores, before, unfetched)).toEqual([`${snap}/lib-1.0-SNAPSHOT.jar`]);
    const twinless = new Map([...fetched, [`${snap}/lib-1.0-20261130.090000-2.jar`, '100644:437:14:2']]);
    expect(tamperedStoreFiles(stores, before, twinless)).toEqual([`${snap}/lib-1.0-SNAPSHOT.jar`]);
    // A release's metadata changing says nothing of its jar.
    const release = new Map(files(`${m2}/junit-4.13.2.jar`, `${m2}/_remote.repositories`));
    const rewritten = new Map([...release].map(([path]) => [path, 'rewritten']));
    expect(tamperedStoreFiles(stores, release, rewritten)).toEqual([`${m2}/junit-4.13.2.jar`]);
  });

  it('is a download when it is a new package, or a new file where each file is a package', () => {
    const before = files(
      `${m2}/junit-4.13.2.jar`,
      `${crates}/serde-1.0.0/Cargo.toml`,
      `${mods}/score@v1.0.0/score.go`,
    );
    const after = new Map([
      ...before,
      ...files(
        '/home/u/.m2/repository/org/junit/junit/4.13.3/junit-4.13.3.jar',
        `${m2}/junit-4.13.2-sources.jar`,
        `${crates}/serde-1.0.1/Cargo.toml`,
        `${crates}/serde-1.0.1/src/lib.rs`,
        `${mods}/score@v1.1.0/score.go`,
        '/home/u/.gradle/caches/modules-2/files-2.1/org.junit/junit/4.13.2/abc/junit-4.13.2.jar',
      ),
    ]);
    expect(tamperedStoreFiles(stores, before, after)).toEqual([]);
  });

  it('is no tamper in the tools’ own bookkeeping, which they rewrite', () => {
    const artifact = '/home/u/.m2/repository/org/junit/junit';
    const before = files(
      `${artifact}/maven-metadata-central.xml`,
      `${m2}/_remote.repositories`,
      `${crates}/serde-1.0.0/.cargo-ok`,
    );
    const after = new Map([...before].map(([path]) => [path, 'rewritten']));
    after.set(`${m2}/junit-4.13.2.jar.lastUpdated`, 'new');
    expect(tamperedStoreFiles(stores, before, after)).toEqual([]);
  });

  it('is not looked for in the folders the project installs its own artifacts in', () => {
    const [maven] = packageStores('/work/repo', { HOME }, { own: ['com/acme/app'] });
    expect(maven!.skip).toEqual(['/home/u/.m2/repository/com/acme/app']);
  });

  it('is tamper where no store is known to hold the file', () => {
    expect(tamperedStoreFiles(stores, files('/elsewhere/x.jar'), new Map())).toEqual(['/elsewhere/x.jar']);
  });
});
