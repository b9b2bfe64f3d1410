// What the metric, guard and track commands must leave as they found it outside the tree they measure.
// They run the doer's code, and that code can write what every later run loads without git seeing it:
// git's config and hooks (a clean filter rewrites what Forge's own commits hold), a tool's settings
// above the tree or in the home (cargo's runner, pytest's conftest.py, npm's node-options), the
// instructions and settings the next agent's CLI reads, the installed dependencies the metric imports.
// The agent runs are guarded against the same (state-guard.ts, agent-executor.ts); this is the same
// watch around the runs that measure.
import { isAbsolute, join, relative, sep } from 'node:path';
import { ContentHashes } from '../infra/content-hashes.js';
import { changedPaths, restoreSnapshot, takeSnapshot } from '../infra/file-vault.js';
import { removePath } from '../infra/fs-ops.js';
import type { Git } from '../infra/git.js';
import { gitControlPaths, isGitControlPath, readModes, restoreModes } from '../infra/git-control.js';
import { homeAgentConfig, readContents, restoreChanged } from '../infra/home-instructions.js';
import { watchLooseObjects } from '../infra/loose-objects.js';
import { changedFiles, type IgnoredFiles } from '../infra/ignored-files.js';
import { toolConfigPaths } from '../infra/tool-config.js';
import {
  changedDependencies,
  changedStoreFiles,
  forbiddenChanges,
  noteChangedFiles,
  snapshotIgnored,
  type DependencyGuardContext,
} from './dependency-guard.js';
import { agentInstructionPaths } from './judge-checkout.js';
import { createDataWatch } from './measured-data.js';
import { fingerprintOutside } from './outside-data.js';
import { isLoadedUnasked } from './silenced-checks.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface OutsideWatchOptions {
  git: Git;
  /** The trees the runs work in: the loop's, and the repository holding it. */
  trees: readonly string[];
  /** The environment the runs get: where the home and the user's git and tool config are. */
  env: Env;
  /** The machine's config folder (/etc; a test's own). */
  etc?: string;
  /**
   * The loop's tree as the dependency guard sees it: its installed dependencies and programs are
   * watched too, and the ignored files a run makes. Without it, neither is.
   */
  dependencies?: DependencyGuardContext & {
    allowed: readonly string[];
    /** The paths the loop names as its metric's to write again (`scope.rebuilt_paths`). */
    rebuilt?: readonly string[];
    /** The data outside the trees the commands name (outside-data.ts), held as the tree's is. */
    outsideData?: () => Promise<string[]>;
  };
}

/** What a run changed outside what git shows, once it is undone as far as it can be. */
export interface OutsideChange {
  /** Put back as they were (relative inside the first tree, absolute outside it). */
  putBack: string[];
  /** Test files and tools' settings the run made where git ignores them, removed (relative). */
  planted: string[];
  /** Installed dependencies and programs it changed, which cannot be put back: recorded, the loop held. */
  dependencies: string[];
  /** Of those, the files in a package store in the home (package-stores.ts). */
  stored?: string[];
  /** Ignored files of the tree the run reads, changed by it: put back, or (`lost`) left as found (measured-data.ts). */
  data?: {
    putBack: string[];
    lost: string[];
    rewritten: string[];
    /** Found changed at the start: a run measuring when its runner was killed left them so. */
    interrupted?: string[];
  };
  /** Ignored files the run made where none was, outside build outputs: the runs' own (run-outputs.ts). */
  made?: string[];
}

/** Ends a watch: undoes what the run changed and says what that was. */
export type EndOutsideWatch = () => Promise<OutsideChange>;

/**
 * Begins watching, right before a run; the function it gives undoes the run's changes once it ends. A
 * run in another working tree of the repository (a population's candidate worktree) names it: the
 * ignored files the run makes there are watched too.
 */
export type OutsideWatch = (
  tree?: { cwd: string; git: Git },
  /**
   * The ignored files the loop's runs write (run-outputs.ts): not held as data. Without them, no
   * ignored file of the tree is held (a loop whose outputs were never recorded).
   */
  outputs?: ReadonlySet<string>,
) => Promise<EndOutsideWatch>;

export function createOutsideWatch(options: OutsideWatchOptions): OutsideWatch {
  const { git, trees, env, dependencies } = options;
  const root = trees[0] ?? '.';
  const name = (path: string) => {
    const inside = relative(root, path);
    return inside.startsWith('..') || inside === '' ? path : inside.split(sep).join('/');
  };
  // What the dependencies' files hold, hashed once per identity for the life of the runner: a run that
  // reinstalls them (`npm ci` in the metric command) writes the same bytes anew, which is no change.
  const contents = dependencies === undefined ? undefined : new ContentHashes(dependencies.cwd);
  // What the last run left, for the next one's start: an agent's changes between the two are its own
  // guard's to find, and a fingerprint of the dependencies costs a lstat a file.
  let last: IgnoredFiles | undefined;
  const data =
    dependencies === undefined
      ? undefined
      : createDataWatch(dependencies.cwd, dependencies.rebuilt ?? [], {
          marker: join(dependencies.vaultDir, 'measuring-data.json'),
        });
  const outsideData =
    dependencies?.outsideData === undefined
      ? undefined
      : {
          list: dependencies.outsideData,
          watch: createDataWatch('/', [], {
            outside: true,
            marker: join(dependencies.vaultDir, 'measuring-outside-data.json'),
          }),
        };

  return async (tree, outputs) => {
    const commonDir = await git.commonDir();
    // Another tree's ignored files alone: what lies outside the trees is the loop's watch's own.
    const other =
      tree !== undefined && dependencies !== undefined && tree.cwd !== dependencies.cwd
        ? { ...dependencies, cwd: tree.cwd, git: tree.git, outside: false }
        : undefined;
    const otherBefore = other === undefined ? undefined : await snapshotIgnored(other);
    const control = gitControlPaths(await git.gitDir(), commonDir, env);
    const objects = await watchLooseObjects(git, "the doer's code");
    const tools = await toolConfigPaths(trees, env);
    const instructions = trees.map(agentInstructionPaths);
    const layout = {
      repo: root,
      dirs: [...control.dirs, ...tools.dirs, ...instructions.flatMap((paths) => paths.dirs)],
      files: [
        ...new Set([...control.files, ...tools.files, ...instructions.flatMap((paths) => paths.files)]),
      ],
    };
    const before = await takeSnapshot(layout);
    // A hook is as much its mode as its text: `chmod +x` alone arms one.
    const modes = await readModes([...before.keys()].filter((path) => isGitControlPath(control, path)));
    const home = await readContents(homeAgentConfig(env, options.etc));
    const ignored = dependencies === undefined ? undefined : (last ?? (await snapshotIgnored(dependencies)));
    // Held files a run that was killed while it measured left changed: their copies died with it.
    const interrupted: string[] = [];
    if (ignored !== undefined) {
      await contents?.prime(ignored.dependencies);
      if (outputs !== undefined) interrupted.push(...((await data?.prime(ignored.others, outputs)) ?? []));
    }
    const named = outputs === undefined ? undefined : await outsideData?.list();
    const outsideBefore = named === undefined ? undefined : fingerprintOutside(named);
    if (outsideBefore !== undefined)
      interrupted.push(...((await outsideData?.watch.prime(outsideBefore, outputs!)) ?? []));
    return async () => {
      const modesNow = await readModes([...modes.keys()]);
      const changed = [
        ...new Set([
          ...changedPaths(before, await takeSnapshot(layout)),
          ...[...modes].filter(([path, mode]) => (modesNow.get(path) ?? mode) !== mode).map(([path]) => path),
        ]),
      ].sort();
      await restoreSnapshot(before, changed);
      await restoreModes(modes, changed);
      // A commit-graph the run wrote is removed, forged or not: a cache git does without; and an object or a
      // pack it wrote that is not what it is named stops the run, as after an agent's (loose-objects.ts).
      await objects.check();
      const homeChanged = await restoreChanged(home);
      const putBack = [...new Set([...changed, ...homeChanged])].map(name);
      if (dependencies === undefined || contents === undefined || ignored === undefined)
        return { putBack, planted: [], dependencies: [] };
      const after = await snapshotIgnored(dependencies);
      last = after;
      if (after === undefined) return { putBack, planted: [], dependencies: [] };
      const otherAfter = other === undefined ? undefined : await snapshotIgnored(other);
      const planted = [
        ...(await removeIgnoredPlanted(dependencies.cwd, ignored, after)),
        ...(other === undefined || otherBefore === undefined || otherAfter === undefined
          ? []
          : await removeIgnoredPlanted(other.cwd, otherBefore, otherAfter)),
      ];
      const measured =
        outputs === undefined || data === undefined
          ? { putBack: [], lost: [], rewritten: [], made: [] }
          : await data.settle(after.others, outputs);
      if (named !== undefined && outsideBefore !== undefined && outsideData !== undefined) {
        const outside = await outsideData.watch.settle(fingerprintOutside(named), outputs!);
        measured.putBack.push(...outside.putBack);
        measured.lost.push(...outside.lost);
        measured.rewritten.push(...outside.rewritten);
      }
      // What was put back has a new identity: the next run's start is taken afresh.
      if (measured.putBack.length + measured.lost.length + measured.rewritten.length > 0) last = undefined;
      const stored = changedStoreFiles(dependencies, ignored, after);
      const lost = [
        ...forbiddenChanges(
          await changedDependencies(ignored.dependencies, after.dependencies, contents),
          dependencies.allowed,
        ),
        ...changedFiles(ignored.programs, after.programs),
        ...stored,
      ];
      const unrecoverable = [...measured.lost, ...interrupted];
      if (lost.length > 0 || unrecoverable.length > 0)
        await noteChangedFiles(
          dependencies,
          "doer's code",
          lost.length === 0
            ? 'ignored files'
            : unrecoverable.length === 0
              ? 'installed dependencies'
              : 'installed dependencies and ignored files',
          [...lost, ...unrecoverable],
        );
      return {
        putBack,
        planted,
        dependencies: lost,
        stored,
        data: { putBack: measured.putBack, lost: measured.lost, rewritten: measured.rewritten, interrupted },
        made: measured.made,
      };
    };
  };
}

/** The test files and tools' settings a run made where git ignores them (`dist/extra.test.js`), removed. */
async function removeIgnoredPlanted(
  cwd: string,
  before: IgnoredFiles,
  after: IgnoredFiles,
): Promise<string[]> {
  const made = [...after.others.keys(), ...after.caches.keys()].filter(
    (path) => !before.others.has(path) && !before.caches.has(path) && !isAbsolute(path),
  );
  const planted = made.filter(isLoadedUnasked).sort();
  for (const path of planted) {
    await removePath(join(cwd, path));
    after.others.delete(path);
    after.caches.delete(path);
  }
  return planted;
}
