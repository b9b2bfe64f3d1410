// The first reads of a run (the store with br's version, the config, the run directory, the lock, the
// epic's graph), started before the rest of the run's code loads: `ralph-loop <epic>` asks for them
// from this small module, then loads run-command.js (most of a run's code) while br answers.
import type { BeadStore, EpicGraph } from '../beads/types.js';
import { readLockFile } from '../infra/lock-file.js';
import type { RunDir } from '../infra/run-dir.js';
import { openStoreThenConfig, workingDir, type GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import { findLoopWorkspace, runDirFor } from './epic-dirs.js';
import { readRunGraph } from './run-target.js';

const noop = (): void => undefined;

/** What a run has asked for before it checks anything; each promise already has its failure handled. */
export interface RunReads {
  repo: string;
  validate: boolean;
  runDir: Promise<RunDir>;
  /** The loop this epic belongs to (see findLoopWorkspace), or undefined for a plain epic. */
  loop: ReturnType<typeof findLoopWorkspace>;
  /** Whether no runner held the epic's lock when the run began (false unless the run validates). */
  lockFree: Promise<boolean>;
  store: ReturnType<typeof openStoreThenConfig>;
  /** The epic's graph read on `store` beside `br version`, when br's store was made (else undefined). */
  early(): { store: BeadStore; graph: Promise<EpicGraph | undefined> } | undefined;
  /**
   * Settles once br's first calls are on their way (or the store is open without them): the moment
   * to load what else the run needs, which would otherwise hold those calls up.
   */
  sent: Promise<void>;
}

/**
 * Asks, side by side, for what a run of `epicId` checks first (each may start a process); the caller
 * awaits them in the order it reports failures in.
 */
export function startRunReads(
  deps: CliDeps,
  options: GlobalOptions,
  epicId: string,
  flags: { validate?: boolean | undefined },
): RunReads {
  const repo = workingDir(deps, options);
  const validate = flags.validate !== false;
  const runDir = runDirFor(repo, epicId);
  const loop = findLoopWorkspace(repo, epicId);
  // One read of the epic serves the target check, validation and, when no runner held the epic's lock
  // before it began, the run's recovery (see RunnerOptions.beadsAtStart): the lock is looked at first.
  const lockFree = validate
    ? runDir.then(async (dir) => (await readLockFile(dir.lockPath)) === undefined)
    : Promise.resolve(false);
  // On br the read starts as soon as its store is made, beside `br version` (its calls are the same in
  // every version); it counts only if that store is the one opened.
  let early: { store: BeadStore; graph: Promise<EpicGraph | undefined> } | undefined;
  let graphAsked: () => void = () => undefined;
  const graphSent = new Promise<void>((resolve) => (graphAsked = resolve));
  const readEarly = (store: BeadStore): void => {
    // After the lock was looked at, whatever it said (a failed look is reported where it is awaited).
    const graph = lockFree
      .catch(() => false)
      .then(() => {
        const read = readRunGraph(store, epicId);
        setImmediate(graphAsked);
        return read;
      });
    graph.catch(() => undefined);
    early = { store, graph };
  };
  // The config is checked while br answers the store's first calls (see openStoreThenConfig).
  const store = openStoreThenConfig(
    deps,
    { ...options, actor: options.actor ?? 'ralph-loop' },
    epicId,
    validate ? readEarly : undefined,
  );
  runDir.catch(() => undefined);
  loop.catch(() => undefined);
  lockFree.catch(() => undefined);
  const sent = Promise.race([graphSent, store.opened.then(noop, noop)]);
  return { repo, validate, runDir, loop, lockFree, store, early: () => early, sent };
}
