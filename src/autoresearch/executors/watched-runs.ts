// The metric, guard and track commands run the doer's code over the tree they measure. Code that
// rewrites the metric (or a helper it loads) while it is measured would score every later iteration
// with its own rules, so what a run leaves changed there is put back and the run measures nothing; so
// is what it changes outside the tree that later runs load (git's config, tools' settings: see
// outside-watch.ts). And a run whose test process the doer's code ended early measured nothing
// (exit-endings.ts).
import { isAbsolute, join } from 'node:path';
import { startExitWatch, type ExitWatch } from '../../infra/exit-watch.js';
import { changeStamp, realPath, removePath } from '../../infra/fs-ops.js';
import type { Git } from '../../infra/git.js';
import type { Command, ProcessResult } from '../../infra/process.js';
import { nameSome } from '../dependency-guard.js';
import { doerEndings } from '../exit-endings.js';
import { loadLedgerSummary } from '../ledger-summary.js';
import { doerReads, type DoerReads } from '../outside-reads.js';
import type { OutsideChange } from '../outside-watch.js';
import { isLoadedUnasked } from '../silenced-checks.js';
import { metricKeyFolders } from '../metric-folders.js';
import { commandFiles } from '../metric-files.js';
import {
  heldCommandFiles,
  isOutput,
  readRunOutputs,
  recordRunOutputs,
  watchOutputs,
} from '../run-outputs.js';
import { snapshotSubmodules } from '../submodules.js';
import { describeTreeChange, restoreTree, snapshotTree } from '../tree-snapshot.js';
import { bookkeepingPaths, ledgerPath, type AutoresearchContext, type MetricRunOptions } from './context.js';

export interface TreeChangingRun {
  command: Command;
  /** What the run changed, as describeTreeChange puts it (`changed metric/score.mjs`); '' for nothing. */
  what: string;
  /** How the doer's code ended a process that decides the check, as doerEndings puts it. */
  ended: readonly string[];
  /** What the doer's code read outside the commit, as doerReads puts it. */
  reached: readonly string[];
  /** The doer's files that read it. */
  readers: readonly string[];
}

export interface WatchedRuns {
  /** `context.runMetric`, with the tree as it was put back after every run. */
  run: (command: Command, options: MetricRunOptions) => Promise<ProcessResult>;
  /** The runs so far that changed the tree, or whose process the doer's code ended, in order. */
  changes: () => readonly TreeChangingRun[];
}

/**
 * Watches tracked files, HEAD, the index and the files the loop's commands name. A file that appears,
 * was never tracked and is not ignored is removed after the run (removePlanted). `metric`: the runs are
 * the metric's, where a line of the scope that reads its process's command line is judged too.
 */
export function watchRuns(context: AutoresearchContext, runs: { metric?: boolean } = {}): WatchedRuns {
  const changes: TreeChangingRun[] = [];
  // Read once, before the first run: the seal vouched for it when the bead began, and a run's code
  // that added a dataset to it would have the next run let that dataset be rewritten.
  let recorded: Promise<Set<string> | undefined> | undefined;
  // What git ignores, listed once a moment (before a run, after it): the held files, the outputs' watch
  // and the bytecode sweep each ask, and nothing between them writes (two git calls fewer a run).
  let listing: Promise<string[]> | undefined;
  const ignoring = { ignoredPaths: () => (listing ??= context.git.ignoredPaths?.() ?? Promise.resolve([])) };
  const outputs = watchOutputs(context.config, context.repo, ignoring);
  return {
    async run(command, options) {
      recorded ??= readRunOutputs(context.files, context.workspace);
      // A loop made before its runs' outputs were recorded (run-outputs.ts) holds no ignored data.
      const record = await recorded;
      const known = record ?? new Set<string>();
      const named = await commandFiles(context.config, context.repo);
      // A build's output the runs write (run-outputs.ts) is not held; what git does not ignore always is.
      listing = undefined;
      const held = await heldCommandFiles({ ...context, git: ignoring, tree: context.repo }, known);
      await outputs.before();
      // Before the run too: one a process the doer left wrote since the last run is no cache of ours.
      await removeBytecodeCaches(context, ignoring);
      listing = undefined;
      const before = await snapshotTree(context.git, held);
      // A submodule's files are the tree's too (a metric's fixtures may live in one), whatever the scope.
      const submodules = await snapshotSubmodules(context.git, context.gitAt, context.repo, 'HEAD', []);
      const outside = await context.watchOutside?.({ cwd: context.repo, git: context.git }, record);
      // Lifted with the rest of the runtime's rules: the loop lets the doer's code end what it likes.
      const exits = context.config.scope.doer_may_patch_runtime ? undefined : await startExitWatch();
      // Content put back by the time the run ends is still a rewrite: bash reads its script as it runs,
      // and code that wrote its own line into the script through /proc, then restored it byte for byte,
      // had its score kept (red team). A write leaves the file a new ctime, which no process sets back.
      const stamps = await Promise.all(held.map((path) => changeStamp(join(context.repo, path))));
      const realRepo = await realPath(context.repo).catch(() => context.repo);
      const entries = named.map((path) => join(realRepo, path));
      const roots = [context.repo, realRepo];
      // The metric's own folders: a file there the doer's code reads, as the metric does, is its key.
      const keys = metricKeyFolders(context.config.scope.doer_paths, named).map((path) =>
        join(realRepo, path),
      );
      try {
        return await context.runMetric(
          command,
          exits === undefined
            ? options
            : { ...options, withEnv: (env) => exits.env(env, entries, [...new Set(roots)], keys) },
        );
      } finally {
        const rewritten: string[] = [];
        for (const [index, path] of held.entries()) {
          if ((await changeStamp(join(context.repo, path))) !== stamps[index]) rewritten.push(path);
        }
        const change = await restoreTree(context.git, before, bookkeepingPaths(context), {
          leaveNewFiles: true,
        });
        // One the run made where none was (its build's first output in this tree) is the runs' too.
        listing = undefined;
        const made = (await outputs.after({ written: false })).filter((path) => !isOutput(known, path));
        if (made.length > 0) {
          await recordRunOutputs(context.files, context.workspace, made);
          for (const path of made) known.add(path);
        }
        await removeBytecodeCaches(context, ignoring);
        listing = undefined;
        const read =
          exits === undefined
            ? { phrases: [], readers: [] }
            : await reads(context, exits, roots, named, runs.metric === true);
        // A rewrite git still sees is the change above (no score); one whose bytes were put back hid itself.
        const hidden = rewritten.filter((path) => !change.paths.includes(path));
        const reached = [
          ...read.phrases,
          ...(hidden.length === 0
            ? []
            : [`rewrote ${hidden.join(', ')}, which the command runs, and put the bytes back`]),
        ];
        const readers = read.readers;
        const ended = exits === undefined ? [] : await endings(context, exits, roots, named);
        const outsideChange = await outside?.();
        // A file the commands name is put back and named by the tree's watch above already.
        if (outsideChange?.data !== undefined) {
          const unnamed = (paths: string[]) => paths.filter((path) => !held.includes(path));
          outsideChange.data = {
            putBack: unnamed(outsideChange.data.putBack),
            lost: unnamed(outsideChange.data.lost),
            rewritten: unnamed(outsideChange.data.rewritten),
            interrupted: outsideChange.data.interrupted ?? [],
          };
        }
        const madeData = (outsideChange?.made ?? []).filter((path) => !isOutput(known, path));
        if (madeData.length > 0) {
          await recordRunOutputs(context.files, context.workspace, madeData);
          for (const path of madeData) known.add(path);
        }
        const planted = [
          ...(await removePlanted(context.repo, change.left ?? [])),
          ...(outsideChange?.planted ?? []),
        ];
        const what = [
          describeTreeChange(change),
          ...(planted.length === 0 ? [] : [`made ${planted.join(', ')}`]),
          ...(await submodules.restore()),
          ...describeOutsideChange(outsideChange),
        ]
          .filter((part) => part !== undefined)
          .join('; ');
        if (what !== '' || ended.length > 0 || reached.length > 0)
          changes.push({ command, what, ended, reached, readers });
      }
    },
    changes: () => changes,
  };
}

/**
 * Python's bytecode caches that git ignores in the tree, removed before and after every measured run. Python loads
 * a `.pyc` whose header matches its source's size and time without reading the source, so one the
 * measured code wrote would score every later run (seen: a helper's cache forged as `W = 100` during
 * an iteration that was reverted, then loaded by the next one's metric: a worse 5 kept as 500). Python
 * writes them again; a virtual environment's, under a folder git ignores whole, are not listed.
 */
async function removeBytecodeCaches(
  context: AutoresearchContext,
  git: Required<Pick<Git, 'ignoredPaths'>>,
): Promise<void> {
  for (const path of await git.ignoredPaths()) {
    if (/(?:^|\/)__pycache__\/?$|\.py[co]$/.test(path))
      await removePath(join(context.repo, path), { recursive: true });
  }
}

/** How the doer's code ended the run's processes, from the exit watch's log, which is then removed. */
async function endings(
  context: AutoresearchContext,
  exits: ExitWatch,
  roots: readonly string[],
  commandFiles: readonly string[],
): Promise<string[]> {
  const records = await exits.read();
  await exits.remove();
  // Only code the run started can have removed it; what it held is lost.
  if (records === undefined)
    return ["removed the log in which Forge's exit watch records who ended a process"];
  return doerEndings(records, {
    roots,
    scope: context.config.scope.doer_paths,
    commandFiles,
  });
}

/** What the doer's code read outside the commit, from the read watch's log (removed with the exits'). */
async function reads(
  context: AutoresearchContext,
  exits: ExitWatch,
  roots: readonly string[],
  commandFiles: readonly string[],
  metric: boolean,
): Promise<DoerReads> {
  const log = await exits.reads();
  if (log === undefined)
    return {
      phrases: ["removed the log in which Forge's read watch records what the measured code read"],
      readers: [],
    };
  const { summary } = await loadLedgerSummary(context.files, ledgerPath(context.workspace), {
    direction: context.config.metric.direction,
    target: context.config.target,
  });
  return doerReads(log, {
    roots,
    scope: context.config.scope.doer_paths,
    commandFiles,
    since: summary.first_ts === null ? undefined : Date.parse(summary.first_ts),
    asks: metric,
  });
}

/**
 * The doer's tamper for a run whose code read what no commit holds: the arbiter records `tamper`
 * whatever the run scored. Undefined for any other run.
 */
export function readTamper(run: TreeChangingRun, who: string): { paths: string[]; what: string } | undefined {
  if (run.reached.length === 0) return undefined;
  return {
    paths: run.readers.length === 0 ? ['(no file of the repository)'] : [...run.readers],
    what: `its code ${run.reached.join('; ')} while ${who} ran it`,
  };
}

/**
 * Removes the files a run made and left that git does not ignore, and names those a later run would
 * load as tests or as a tool's or a checker's settings (`extra.test.js`, which `node --test` finds on
 * its own; a `conftest.py`; an `.eslintignore`): a run that made one measured nothing. The rest go
 * quietly: the next run (a repeat, the metric after a guard) would read them, and a keep would commit
 * them (seen: a memo the measured code wrote in `src/` gave two of three repeats a cached answer, and
 * went into the kept commit). What git ignores (a build's output) stays for the next command.
 */
export async function removePlanted(repo: string, left: readonly string[]): Promise<string[]> {
  for (const path of left) await removePath(join(repo, path));
  return left.filter(isLoadedUnasked);
}

/** What a run changed outside what git shows, as phrases for its reason. */
export function describeOutsideChange(change: OutsideChange | undefined): string[] {
  if (change === undefined) return [];
  const stored = change.stored ?? [];
  const installed = change.dependencies.filter((path) => !stored.includes(path));
  const data = change.data ?? { putBack: [], lost: [], rewritten: [] };
  // The tree's ignored files are named relative to it; the data outside it that the commands name, absolute.
  const dataPhrases = (paths: readonly string[], tail: string) => {
    const ignored = paths.filter((path) => !isAbsolute(path));
    const outside = paths.filter((path) => isAbsolute(path));
    return [
      ...(ignored.length === 0
        ? []
        : [
            `changed ${nameSome(ignored)}, which git ignores and the measured runs read${tail} (one the metric writes again itself belongs in --rebuilt)`,
          ]),
      ...(outside.length === 0
        ? []
        : [`changed ${nameSome(outside)}, data outside the repository that the commands name${tail}`]),
    ];
  };
  return [
    ...(change.putBack.length === 0 ? [] : [`changed ${change.putBack.join(', ')}`]),
    ...dataPhrases(data.putBack, ''),
    ...dataPhrases(data.lost, ', and of which Forge keeps no copy to put back (over 1 MB)'),
    ...(data.interrupted === undefined || data.interrupted.length === 0
      ? []
      : [
          `left ${nameSome(data.interrupted)} changed in a run that was measuring when its runner was killed (the copy died with the runner)`,
        ]),
    ...dataPhrases(data.rewritten, ', and wrote its bytes back before the run ended').map((phrase) =>
      phrase.replace(/^changed /, 'rewrote '),
    ),
    ...(installed.length === 0
      ? []
      : [
          `changed installed dependencies (${nameSome(installed)}), which the loop cannot put back (a command that installs the project itself should install it editable: pip install -e .)`,
        ]),
    ...(stored.length === 0
      ? []
      : [
          `changed installed dependencies in a package store (${nameSome(stored)}), which the loop cannot put back (the project's own artifacts are left out where its pom.xml or Gradle settings name them)`,
        ]),
  ];
}

/** For a ledger reason; `who` is the command as the user knows it (`guard unit`). */
export function describeChangingRun(run: TreeChangingRun, who: string): string {
  const argv = [run.command.file, ...run.command.args].join(' ');
  return [
    ...(run.what === ''
      ? []
      : [
          `the doer's code ${run.what} while ${who} ran it (${argv}); put back, and a run that changes what it measures gives no score`,
        ]),
    ...(run.ended.length === 0
      ? []
      : [
          `the doer's code ${run.ended.join('; ')} while ${who} ran it (${argv}); a check whose process the measured code ends passes nothing`,
        ]),
    ...(run.reached.length === 0
      ? []
      : [
          `the doer's code ${run.reached.join('; ')} while ${who} ran it (${argv}); a score is the commit's only when the code reads what the commit holds`,
        ]),
  ].join('; and ');
}
