// After a doer: the runner runs the loop's guards and tracks itself (never an agent) on the doer's tree,
// before the judge, and records the outcome for the judge (which skips a failed iteration) and the arbiter.
import type { ExecutionRequest } from '../../loop/types.js';
import { describeFailedGuard, runChecks } from '../guards.js';
import { readIterationState, updateIterationState, withTamper } from '../iteration-state.js';
import { loadLedgerSummary } from '../ledger-summary.js';
import { readLedger, type FailedGuard } from '../ledger.js';
import { ledgerPath, type AutoresearchContext } from './context.js';
import { describeChangingRun, readTamper, watchRuns, type TreeChangingRun } from './watched-runs.js';

export type GuardStep = { aborted: true } | { aborted: false; note?: string };

export async function runGuardStep(
  context: AutoresearchContext,
  request: ExecutionRequest,
  iter: number,
): Promise<GuardStep> {
  const { config, workspace } = context;
  // An earlier attempt's outcome never outlives the tree it was measured on.
  await updateIterationState(context.files, workspace, iter, (s) => {
    const { guard_failure: _failure, tracks: _tracks, ...rest } = s;
    return rest;
  });
  if (config.guards.length === 0 && config.tracks.length === 0) return { aborted: false };
  const watched = watchRuns(context);
  const outcome = await runChecks(
    config,
    (command, run) => watched.run(command, { ...run, signal: run.signal ?? request.signal }),
    {
      cwd: request.cwd,
      signal: request.signal,
      baselineTracks: await baselineTracks(context),
      // Loops made before the floors were kept have none: their guards are held to their exit codes.
      ...(await baselineFloors(context.files, workspace)),
    },
  );
  if (outcome.aborted) return { aborted: true };
  // A check whose run changed the tree fails whatever it printed: its pass was on other files.
  const changing = watched.changes()[0];
  const failure = treeChangeFailure(context, changing) ?? outcome.failure;
  const tamper = changing === undefined ? undefined : readTamper(changing, checkName(context, changing));
  await updateIterationState(context.files, workspace, iter, (s) => ({
    ...(tamper === undefined ? s : withTamper(s, { role: 'doer', ...tamper })),
    ...(Object.keys(outcome.tracks).length === 0 ? {} : { tracks: outcome.tracks }),
    guard_failure: failure ?? s.guard_failure,
  }));
  if (failure === undefined) return { aborted: false };
  const note = describeFailedGuard(failure);
  request.onActivity?.(`${note}; the iteration will be reverted without judging`);
  return { aborted: false, note };
}

/** The tracks the baseline recorded: from the ledger summary, or the ledger itself for an older cache. */
async function baselineTracks(context: AutoresearchContext): Promise<Record<string, number | null>> {
  if (!context.config.tracks.some((t) => t.max !== undefined || t.min !== undefined)) return {};
  const path = ledgerPath(context.workspace);
  const { summary } = await loadLedgerSummary(context.files, path, {
    direction: context.config.metric.direction,
    target: context.config.target,
  });
  if (summary.baseline_tracks !== undefined) return summary.baseline_tracks;
  const baseline = (await readLedger(context.files, path)).lines.find((line) => line.decision === 'baseline');
  return baseline?.tracks ?? {};
}

/** The guard or track whose run changed the tree, as a failure naming what it changed. */
function treeChangeFailure(
  context: AutoresearchContext,
  run: TreeChangingRun | undefined,
): FailedGuard | undefined {
  if (run === undefined) return undefined;
  const { name, kind } = whichCheck(context, run);
  return {
    name,
    kind,
    exit_code: null,
    reason: describeChangingRun(run, `${kind} ${name}`),
    output_tail: '',
  };
}

/** The guard or track a run was, by its argv. */
function whichCheck(
  context: AutoresearchContext,
  run: TreeChangingRun,
): { name: string; kind: 'guard' | 'track' } {
  const argv = [run.command.file, ...run.command.args];
  const same = (check: { argv: readonly string[] }) =>
    check.argv.length === argv.length && check.argv.every((arg, i) => arg === argv[i]);
  const guard = context.config.guards.find(same);
  const track = guard === undefined ? context.config.tracks.find(same) : undefined;
  return {
    name: guard?.name ?? track?.name ?? argv.join(' '),
    kind: guard === undefined && track !== undefined ? 'track' : 'guard',
  };
}

/** The check as the user knows it: `guard unit`. */
function checkName(context: AutoresearchContext, run: TreeChangingRun): string {
  const { name, kind } = whichCheck(context, run);
  return `${kind} ${name}`;
}

/** The tests each guard passed and each test track counted at the baseline (iteration 0's state). */
async function baselineFloors(
  files: AutoresearchContext['files'],
  workspace: string,
): Promise<{ baselineGuardTests?: Record<string, number>; baselineTrackTests?: Record<string, number> }> {
  const state = await readIterationState(files, workspace, 0);
  return {
    ...(state.guard_tests === undefined ? {} : { baselineGuardTests: state.guard_tests }),
    ...(state.track_tests === undefined ? {} : { baselineTrackTests: state.track_tests }),
  };
}
