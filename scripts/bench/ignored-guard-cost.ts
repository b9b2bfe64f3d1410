// What a loop's guard of the files git ignores costs around each agent run (src/autoresearch/
// dependency-guard.ts, ignored-guard.ts): the two fingerprints of a run where nothing changed, the
// first run of a process (every dependency file hashed, every small other file copied), and a
// reinstall of every dependency file with the same bytes, told from a patch by content.
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  changedDependencies,
  changedStoreFiles,
  removeWrittenCaches,
  snapshotIgnored,
} from '../../src/autoresearch/dependency-guard.js';
import { undoIgnoredChanges } from '../../src/autoresearch/ignored-guard.js';
import { createOutsideWatch } from '../../src/autoresearch/outside-watch.js';
import { ContentHashes } from '../../src/infra/content-hashes.js';
import { FileCopies } from '../../src/infra/file-copies.js';
import { createGit } from '../../src/infra/git.js';
import type { Row } from './report.js';
import { summarize, type Summary } from './stats.js';
import { tempDir } from './support.js';

export interface IgnoredGuardCost {
  dependencyFiles: number;
  otherFiles: number;
  /** Bytes in the dependency files and in the others. */
  dependencyBytes: number;
  otherBytes: number;
  /** An agent run that changed nothing: two fingerprints, the primes and the comparisons. */
  steadyMs: Summary;
  /** The first agent run of a process: every dependency file hashed, every other one copied. */
  firstPrimeMs: Summary;
  /** Every dependency file written anew with the same bytes, compared by content. */
  reinstallMs: Summary;
  /** Files the reinstall was found to change: 0 when the comparison works. */
  reinstallChanged: number;
  /** A metric run that changed nothing, watched outside the tree and in the dependencies. */
  metricRunMs: Summary;
  /** What the watch found such a run changed: 0 when it works. */
  metricRunChanged: number;
  /**
   * The same, with the tree's ignored data held (a loop whose runs' outputs are recorded,
   * measured-data.ts): the data's files looked at again before the run, compared after.
   */
  metricRunHeldMs: Summary;
  /** What the watch found such a run changed of the data: 0 when it works. */
  metricRunHeldChanged: number;
  /** Files in the build cache in the home (Go's layout: 256 folders of entries). */
  buildCacheFiles: number;
  /** An agent run that changed nothing, beside an empty tree: the cache's two fingerprints. */
  buildCacheSteadyMs: Summary;
  /** Files in Maven's repository in the home (four a version folder), as the fingerprint saw them. */
  storeFiles: number;
  /** An agent run that changed nothing, beside an empty tree: the store's two fingerprints and their comparison. */
  storeSteadyMs: Summary;
  /** What the comparison found changed: 0 when it works. */
  storeChanged: number;
}

const FILE_BYTES = 4096;

export async function measureIgnoredGuardCost(options: {
  dependencyFiles: number;
  otherFiles: number;
  buildCacheFiles: number;
  storeFiles: number;
  rounds: number;
}): Promise<IgnoredGuardCost> {
  const dir = await tempDir('ignored-guard');
  const outside = await tempDir('ignored-guard-home');
  try {
    const cwd = dir.path;
    execFileSync('git', ['init', '-q'], { cwd });
    await writeFile(join(cwd, '.gitignore'), 'node_modules/\ndata/\n');
    const body = (i: number) => Buffer.alloc(FILE_BYTES, i % 251);
    const dependencyPaths = Array.from(
      { length: options.dependencyFiles },
      (_, i) => `node_modules/pkg-${Math.floor(i / 10)}/file-${i % 10}.js`,
    );
    const otherPaths = Array.from(
      { length: options.otherFiles },
      (_, i) => `data/set-${Math.floor(i / 50)}/${i}.json`,
    );
    const install = async () => {
      for (const [i, path] of dependencyPaths.entries()) {
        await mkdir(join(cwd, path, '..'), { recursive: true });
        await writeFile(join(cwd, path), body(i));
      }
    };
    await install();
    for (const [i, path] of otherPaths.entries()) {
      await mkdir(join(cwd, path, '..'), { recursive: true });
      await writeFile(join(cwd, path), body(i));
    }
    const ctx = {
      cwd,
      git: createGit({ cwd, env: process.env }),
      vaultDir: join(cwd, '.git', 'forge'),
      // Java's home is the account's unless told: here one with nothing in it, for the figures to be the tree's.
      env: { JAVA_TOOL_OPTIONS: `-Duser.home=${outside.path}` },
    };

    const firstPrime: number[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      const files = (await snapshotIgnored(ctx))!;
      const started = performance.now();
      await new ContentHashes(cwd).prime(files.dependencies);
      await new FileCopies(cwd).prime(files.others);
      firstPrime.push(performance.now() - started);
    }

    const contents = new ContentHashes(cwd);
    const copies = new FileCopies(cwd);
    const primed = (await snapshotIgnored(ctx))!;
    await contents.prime(primed.dependencies);
    await copies.prime(primed.others);
    const steady: number[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      const started = performance.now();
      const before = (await snapshotIgnored(ctx))!;
      await contents.prime(before.dependencies);
      await copies.prime(before.others);
      const after = (await snapshotIgnored(ctx))!;
      await undoIgnoredChanges(cwd, before.others, after.others, copies);
      await changedDependencies(before.dependencies, after.dependencies, contents);
      steady.push(performance.now() - started);
    }

    // The same tree watched around a metric, guard or track run (outside-watch.ts): git's config, the
    // tools' settings, the agents' instructions and, chained from the run before, the dependencies.
    const watch = createOutsideWatch({
      git: ctx.git,
      trees: [cwd],
      env: ctx.env,
      dependencies: { ...ctx, allowed: [] },
    });
    await (
      await watch()
    )();
    const metricRun: number[] = [];
    let metricRunChanged = 0;
    for (let round = 0; round < options.rounds; round += 1) {
      const started = performance.now();
      const change = await (await watch())();
      metricRun.push(performance.now() - started);
      metricRunChanged += change.putBack.length + change.planted.length + change.dependencies.length;
    }
    // A loop's runs hold the tree's ignored data (the first run copies it: once a process and identity).
    const noOutputs = new Set<string>();
    await (
      await watch(undefined, noOutputs)
    )();
    const metricRunHeld: number[] = [];
    let metricRunHeldChanged = 0;
    for (let round = 0; round < options.rounds; round += 1) {
      const started = performance.now();
      const change = await (await watch(undefined, noOutputs))();
      metricRunHeld.push(performance.now() - started);
      const data = change.data ?? { putBack: [], lost: [], rewritten: [] };
      metricRunHeldChanged += data.putBack.length + data.lost.length + data.rewritten.length;
    }

    const reinstall: number[] = [];
    let reinstallChanged = 0;
    for (let round = 0; round < options.rounds; round += 1) {
      const before = (await snapshotIgnored(ctx))!;
      await contents.prime(before.dependencies);
      await install();
      const after = (await snapshotIgnored(ctx))!;
      const started = performance.now();
      reinstallChanged += (await changedDependencies(before.dependencies, after.dependencies, contents))
        .length;
      reinstall.push(performance.now() - started);
    }
    // A build cache in the home (outside the tree), as Go lays its out: every file of it is fingerprinted.
    const home = join(outside.path, 'home');
    const cache = join(home, '.cache', 'go-build');
    for (let i = 0; i < options.buildCacheFiles; i += 1) {
      const folder = join(cache, (i % 256).toString(16).padStart(2, '0'));
      if (i < 256) await mkdir(folder, { recursive: true });
      await writeFile(join(folder, `${i.toString(16).padStart(64, '0')}-d`), body(i).subarray(0, 512));
    }
    // Beside an empty tree, so that the two fingerprints are the cache's alone.
    const empty = join(outside.path, 'repo');
    await mkdir(empty);
    execFileSync('git', ['init', '-q'], { cwd: empty });
    const withCache = {
      cwd: empty,
      git: createGit({ cwd: empty, env: process.env }),
      vaultDir: join(empty, '.git', 'forge'),
      env: { HOME: home, JAVA_TOOL_OPTIONS: `-Duser.home=${home}` },
    };
    const cached = (await snapshotIgnored(withCache))!;
    const buildCacheFiles = [...cached.caches.keys()].filter((path) => path.startsWith(cache)).length;
    const buildCacheSteady: number[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      const started = performance.now();
      const before = (await snapshotIgnored(withCache))!;
      const after = (await snapshotIgnored(withCache))!;
      await removeWrittenCaches(withCache, before, after);
      buildCacheSteady.push(performance.now() - started);
    }
    // Maven's repository in a home of its own, each version folder a jar and a pom with their checksums.
    const storeHome = join(outside.path, 'store-home');
    const kinds = ['jar', 'pom', 'jar.sha1', 'pom.sha1'];
    for (let i = 0; i < options.storeFiles; i += 1) {
      const lib = `lib-${Math.floor(i / kinds.length)}`;
      const folder = join(storeHome, '.m2', 'repository', 'org', `group-${Math.floor(i / 400)}`, lib, '1.0');
      if (i % kinds.length === 0) await mkdir(folder, { recursive: true });
      await writeFile(join(folder, `${lib}-1.0.${kinds[i % kinds.length]}`), body(i).subarray(0, 512));
    }
    const withStore = {
      ...withCache,
      env: { HOME: storeHome, JAVA_TOOL_OPTIONS: `-Duser.home=${storeHome}` },
    };
    const storeFiles = (await snapshotIgnored(withStore))!.stores.size;
    const storeSteady: number[] = [];
    let storeChanged = 0;
    for (let round = 0; round < options.rounds; round += 1) {
      const started = performance.now();
      const before = (await snapshotIgnored(withStore))!;
      const after = (await snapshotIgnored(withStore))!;
      storeChanged += changedStoreFiles(withStore, before, after).length;
      storeSteady.push(performance.now() - started);
    }
    return {
      storeFiles,
      storeSteadyMs: summarize(storeSteady),
      storeChanged,
      buildCacheFiles,
      buildCacheSteadyMs: summarize(buildCacheSteady),
      dependencyFiles: primed.dependencies.size,
      otherFiles: primed.others.size,
      dependencyBytes: options.dependencyFiles * FILE_BYTES,
      otherBytes: options.otherFiles * FILE_BYTES,
      steadyMs: summarize(steady),
      firstPrimeMs: summarize(firstPrime),
      reinstallMs: summarize(reinstall),
      reinstallChanged,
      metricRunMs: summarize(metricRun),
      metricRunChanged,
      metricRunHeldMs: summarize(metricRunHeld),
      metricRunHeldChanged,
    };
  } finally {
    await dir.remove();
    await outside.remove();
  }
}

/** The figure's rows; `ms` is the table's duration format. */
export function ignoredGuardRows(g: IgnoredGuardCost, ms: (value: number) => string): Row[] {
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
  return [
    {
      figure: '12',
      measure: `ignored-file guard, ${g.dependencyFiles.toLocaleString('en-US')} dependency + ${g.otherFiles.toLocaleString('en-US')} other files: an agent run that changed nothing (median)`,
      value: ms(g.steadyMs.median),
      budget: '',
      verdict: '',
    },
    {
      figure: '',
      measure: `the first agent run of a process: ${mb(g.dependencyBytes)} hashed, ${mb(g.otherBytes)} copied`,
      value: ms(g.firstPrimeMs.median),
      budget: '',
      verdict: '',
    },
    {
      figure: '',
      measure: `a reinstall of every dependency file with the same bytes, compared by content (${g.reinstallChanged} found changed)`,
      value: ms(g.reinstallMs.median),
      budget: '',
      verdict: '',
    },
    {
      figure: '',
      measure: `the watch around a metric, guard or track run that changed nothing: outside the tree, and the dependencies (median; ${g.metricRunChanged} found changed)`,
      value: ms(g.metricRunMs.median),
      budget: '',
      verdict: '',
    },
    {
      figure: '',
      measure: `the same, with the ${g.otherFiles.toLocaleString('en-US')} ignored data files held (looked at again, compared; median; ${g.metricRunHeldChanged} found changed)`,
      value: ms(g.metricRunHeldMs.median),
      budget: '',
      verdict: '',
    },
    {
      figure: '',
      measure: `a build cache in the home of ${g.buildCacheFiles.toLocaleString('en-US')} files (Go's): its two fingerprints around a run that changed nothing (median)`,
      value: ms(g.buildCacheSteadyMs.median),
      budget: '',
      verdict: '',
    },
    {
      figure: '',
      measure: `Maven's repository in the home, ${g.storeFiles.toLocaleString('en-US')} files: its two fingerprints and their comparison around a run that changed nothing (median; ${g.storeChanged} found changed)`,
      value: ms(g.storeSteadyMs.median),
      budget: '',
      verdict: '',
    },
  ];
}
