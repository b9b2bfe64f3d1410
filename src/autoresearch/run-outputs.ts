// The files a loop's own runs write: a build's output (`cc -o build/app src/*.c` then `./build/app`;
// `cargo build --release` then `./target/release/app`), a results file, `.coverage`. The watches around
// measured runs hold the files the commands name (executors/watched-runs.ts) and the data git ignores or
// the commands name outside the repository (measured-data.ts) to what they were before the run, so that
// code which rewrites what measures it scores nothing; a build's output is rewritten by every honest run,
// and each iteration of a compiled loop gave no score (seen: "changed build/app while the metric command
// ran it", every iteration, whatever the doer did). Only a run no doer's code can have touched says which
// files those are: the baseline's, measured when the loop is made. What its runs made or rewrote there
// is the runs' output, recorded in iteration 0's state (which the loop's seal keeps); a later run may
// write it, and one that makes a file where none was adds it (a folder it made, whole). A file that was
// there and that the baseline left as it was (a dataset, the expected answers, a checker kept out of
// git) stays held: the code that rewrites it scores nothing.
import { isAbsolute, join } from 'node:path';
import { changeStamp } from '../infra/fs-ops.js';
import type { Git } from '../infra/git.js';
import type { LoopFiles } from '../infra/loop-files.js';
import type { LoopConfig } from './config.js';
import { readIterationState, updateIterationState } from './iteration-state.js';
import { isRunWritten, madeByRun } from './measured-data.js';
import { commandFiles } from './metric-files.js';

type IgnoringGit = Pick<Git, 'ignoredPaths'>;

/** Of `paths` (relative to the tree), those git ignores, from `git ls-files --ignored --directory`. */
export async function ignoredOf(git: IgnoringGit, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const ignored = (await git.ignoredPaths?.()) ?? [];
  return paths.filter((path) =>
    ignored.some((entry) => entry === path || (entry.endsWith('/') && path.startsWith(entry))),
  );
}

/** Each path's inode and change time (undefined: not there); a write changes the one or the other. */
async function stamps(tree: string, paths: readonly string[]): Promise<Map<string, string | undefined>> {
  return new Map(
    await Promise.all(paths.map(async (path) => [path, await changeStamp(join(tree, path))] as const)),
  );
}

/** Watches the files the loop's commands name across runs, for those the runs make or write. */
export interface OutputsWatch {
  /** Before a run: what the commands name and git ignores, as it is. */
  before(): Promise<void>;
  /**
   * After it: the files the run made (absent before) or, with `written`, also those it wrote, which
   * git ignores. Each call adds to `found`.
   */
  after(options: { written: boolean }): Promise<string[]>;
  /** Every output found so far, sorted. */
  found(): string[];
}

/**
 * `ignored`, when given, lists the tree's other ignored files with their identities (dependency-guard's
 * `snapshotIgnored(…).others`), and those of the data outside it the commands name (outside-data.ts):
 * what the runs make or write there, build outputs apart (measured-data.ts), is theirs too (a coverage
 * run's `.coverage`, a results file).
 */
export function watchOutputs(
  config: LoopConfig,
  tree: string,
  git: IgnoringGit,
  ignored?: () => Promise<ReadonlyMap<string, string> | undefined>,
): OutputsWatch {
  const found = new Set<string>();
  let seen = new Map<string, string | undefined>();
  let seenIgnored: ReadonlyMap<string, string> | undefined;
  const named = async () => ignoredOf(git, await commandFiles(config, tree));
  return {
    async before() {
      seen = await stamps(tree, await named());
      seenIgnored = await ignored?.();
    },
    async after({ written }) {
      const now = await stamps(tree, await named());
      const outputs = [...now]
        .filter(([path, stamp]) =>
          seen.has(path) ? written && seen.get(path) !== stamp : stamp !== undefined,
        )
        .map(([path]) => path);
      const nowIgnored = seenIgnored === undefined ? undefined : await ignored?.();
      const made: string[] = [];
      for (const [path, id] of nowIgnored ?? []) {
        // Absolute: a file of the data outside the repository the commands name (outside-data.ts).
        if (path.endsWith(' ->') || isRunWritten(path, config.scope.rebuilt_paths)) continue;
        const was = seenIgnored?.get(path);
        if (was === undefined) made.push(path);
        else if (written && was !== id && !outputs.includes(path)) outputs.push(path);
      }
      // A folder the run made is recorded whole, as a later run's is (measured-data.ts).
      const before = new Set(seenIgnored?.keys() ?? []);
      const relative = made.filter((path) => !isAbsolute(path));
      for (const path of [...madeByRun(before, relative), ...made.filter((path) => isAbsolute(path))])
        if (!outputs.includes(path)) outputs.push(path);
      for (const path of outputs) found.add(path);
      return outputs;
    },
    found: () => [...found].sort(),
  };
}

/**
 * The files the loop's commands name (metric-files.ts) less the runs' outputs that git ignores: those the
 * watches hold as they were. `outputs` when the caller read them already.
 */
export async function heldCommandFiles(
  ctx: { config: LoopConfig; tree: string; git: IgnoringGit; files: LoopFiles; workspace: string },
  outputs?: ReadonlySet<string>,
): Promise<string[]> {
  const named = await commandFiles(ctx.config, ctx.tree);
  const known = outputs ?? (await readRunOutputs(ctx.files, ctx.workspace)) ?? new Set<string>();
  const candidates = named.filter((path) => isOutput(known, path));
  if (candidates.length === 0) return named;
  const ignored = new Set(await ignoredOf(ctx.git, candidates));
  return named.filter((path) => !ignored.has(path));
}

/**
 * Whether `path` is among the runs' outputs: named itself, or under a folder recorded whole (`results/run-7/`,
 * a folder a run made).
 */
export function isOutput(outputs: ReadonlySet<string>, path: string): boolean {
  if (outputs.has(path)) return true;
  for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) {
    if (outputs.has(path.slice(0, at + 1))) return true;
  }
  return false;
}

/**
 * The most outputs recorded: a metric that writes a file of a new name every run (a timestamped result)
 * would grow the record by one a run; past this, what runs make is not recorded (a later run that
 * rewrites one of those gives no score, and names `--rebuilt`).
 */
export const MAX_RECORDED_OUTPUTS = 5_000;

/**
 * The outputs iteration 0's state records; undefined for a loop made before they were recorded, whose
 * runs' outputs nobody saw made (its ignored data is not held: every run that writes a results file
 * would give no score).
 */
export async function readRunOutputs(files: LoopFiles, workspace: string): Promise<Set<string> | undefined> {
  const recorded = (await readIterationState(files, workspace, 0)).run_outputs;
  return recorded === undefined ? undefined : new Set(recorded);
}

/** Adds `paths` to the outputs iteration 0's state records (no write when it holds them all). */
export async function recordRunOutputs(
  files: LoopFiles,
  workspace: string,
  paths: readonly string[],
): Promise<void> {
  const known = await readRunOutputs(files, workspace);
  if (known === undefined || known.size >= MAX_RECORDED_OUTPUTS) return;
  const added = paths.filter((path) => !isOutput(known, path)).slice(0, MAX_RECORDED_OUTPUTS - known.size);
  if (added.length === 0) return;
  await updateIterationState(files, workspace, 0, (state) => ({
    ...state,
    run_outputs: [...new Set([...(state.run_outputs ?? []), ...added])].sort(),
  }));
}
