// `ralph-loop status` of a plain epic (not an autoresearch loop): its beads, the live bead, the last run
// and what failed, as data. Read without disturbing a running loop; rendering is epic-status-text.ts.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { compareHybrid, type Bead, type BeadStatus, type BeadStore, type EpicGraph } from '../beads/types.js';
import { AppError, BeadStoreError, ExitCode } from '../infra/errors.js';
import { isLockHolderLive, readLockFile } from '../infra/lock-file.js';
import type { RunDir } from '../infra/run-dir.js';
import { cacheView, readCachedView, STATUS_CACHE_FILE, type StoreView } from './epic-status-cache.js';
import { lastGateResults, type GateStatus } from './epic-status-gates.js';
import { emptyDigest, readRunDigest, RUN_DIGESTS_FILE, type RunDigest } from './run-digest.js';

/** The runner's label for a bead that used up its attempts (src/loop/select.ts, not imported: keep status light). */
const FAILED_LABEL = 'ralph:failed';

/** How many older event logs are searched for a failed bead's last message when it has no comment. */
const RUNS_SEARCHED = 20;

export interface EpicStatusPorts {
  store: Pick<BeadStore, 'graph' | 'ready' | 'version'>;
  runDir: RunDir;
  /** The store's clock (a deferred bead comes due by it). */
  now(): number;
  /**
   * The file system's clock, for whether the store had settled when it was read (epic-status-cache.ts);
   * without it, what status reads of the store is not cached.
   */
  wallNow?: () => number;
  /**
   * Whether what this status reads of the run logs is kept beside the epic's runs for the next status
   * (run-digest.ts): the status command's, not a report's.
   */
  keepLogDigests?: boolean;
  /** This machine's host name: a lock taken on another host cannot be checked by pid. */
  host: string;
  isProcessAlive(pid: number): boolean;
}

/** done: closed; failed: labelled ralph:failed; blocked: open with unmet dependencies (or deferred). */
export type BeadState = 'done' | 'open' | 'in_progress' | 'blocked' | 'failed';

export interface EpicBead {
  id: string;
  title: string;
  status: BeadStatus;
  state: BeadState;
}

export interface LiveRun {
  pid: number;
  host: string;
  /** False when the runner is on another host and its pid could not be checked. */
  verified: boolean;
  run_id: string;
  run_started_at: string;
  run_elapsed_ms: number | null;
  /** The bead being worked on; null between beads. */
  bead: string | null;
  title: string | null;
  role: string | null;
  agent: string | null;
  attempt: number | null;
  agent_pid: number | null;
  bead_elapsed_ms: number | null;
  /** A `--parallel` run's beads in flight, in pick order; null for a serial run. */
  running: string[] | null;
}

export interface LastRun {
  run_id: string;
  /** running: its runner is live; finished: it wrote run_finished; ended: it stopped without (killed). */
  state: 'running' | 'finished' | 'ended';
  started_at: string | null;
  finished_at: string | null;
  reason: string | null;
  message: string | null;
  beads_run: number | null;
  beads_closed: number | null;
  cost_usd: number | null;
  /** Time the run spent in gates (null: none ran, or an older run). */
  gate_ms: number | null;
  events_file: string;
}

export interface BeadFailure {
  bead: string;
  title: string;
  message: string;
  /** Where the message came from: the bead's last attempt comment, or the event log. */
  source: 'comment' | 'event' | 'none';
  at: string | null;
}

export interface EpicStatus {
  epic: string;
  title: string;
  status: BeadStatus;
  run_dir: string;
  counts: Record<BeadState, number> & { total: number };
  beads: EpicBead[];
  live: LiveRun | null;
  /** A lock left by a runner that died: the next run takes it over. */
  stale_lock: { pid: number; host: string; started_at: string } | null;
  last_run: LastRun | null;
  failures: BeadFailure[];
  /** Each gate's last result in the newest run (empty: no gate ran). */
  gates: GateStatus[];
}

export async function epicStatus(epicId: string, ports: EpicStatusPorts): Promise<EpicStatus> {
  const { runDir } = ports;
  // The store and the run files at once. The view is awaited first: an unknown epic is that error.
  const viewAsked = storeView(epicId, ports);
  const restAsked = Promise.all([readLockFile(runDir.lockPath), listRunFiles(runDir)]);
  restAsked.catch(() => undefined);
  const view = await viewAsked;
  const [lock, runFiles] = await restAsked;
  const { beads } = view;
  const counts = { total: beads.length, done: 0, open: 0, in_progress: 0, blocked: 0, failed: 0 };
  for (const bead of beads) counts[bead.state] += 1;

  const lockValid = lock !== undefined;
  const live =
    lockValid &&
    (await isLockHolderLive(runDir.lockPath, lock, ports.host, (pid) => ports.isProcessAlive(pid)));
  const newest = runFiles[runFiles.length - 1];
  // Each log read on from where the last status left it (run-digest.ts): a run's log grows with its beads.
  const kept =
    ports.keepLogDigests === true
      ? { path: join(runDir.root, RUN_DIGESTS_FILE), root: runDir.trustedRoot }
      : undefined;
  const newestDigest =
    newest === undefined
      ? emptyDigest()
      : ((await readRunDigest(join(runDir.runsDir, newest), kept)) ?? emptyDigest());
  const liveDigest =
    live && lock.run_id !== undefined && runDir.eventLogPath(lock.run_id) !== pathOf(runDir, newest)
      ? ((await readRunDigest(runDir.eventLogPath(lock.run_id), kept)) ?? emptyDigest())
      : newestDigest;
  const now = ports.now();

  return {
    epic: epicId,
    title: view.title,
    status: view.status,
    run_dir: runDir.root,
    counts,
    beads,
    live: live ? liveRun(lock, liveDigest, now, ports.host) : null,
    stale_lock: lockValid && !live ? { pid: lock.pid, host: lock.host, started_at: lock.started_at } : null,
    last_run:
      newest === undefined
        ? null
        : lastRun(newest, join(runDir.runsDir, newest), newestDigest, live ? lock.run_id : undefined),
    failures: await failuresOf(
      new Map(view.comments.map((note) => [note.bead, note])),
      beads.filter((bead) => bead.state === 'failed'),
      runDir,
      runFiles,
      newestDigest,
    ),
    gates: lastGateResults([...newestDigest.gates.values()]),
  };
}

/**
 * What status needs of the store: the cached view while the store has not changed since it was made,
 * else one read of the epic's graph and of its ready beads (kept for the next status when it can be).
 */
async function storeView(epicId: string, ports: EpicStatusPorts): Promise<StoreView> {
  const { store, runDir } = ports;
  const cachePath = join(runDir.root, STATUS_CACHE_FILE);
  // All taken before the store is read: a change made while it is read dates later, and misses the
  // cache; the store counts as settled only if it was so before the read began; and a deferred bead
  // the read found not yet due is due after `now`, so the view expires by then.
  const now = ports.now();
  const readAt = ports.wallNow?.();
  const version = readAt === undefined ? undefined : await store.version?.();
  const cached = version && (await readCachedView(cachePath, epicId, version, now));
  if (cached) return cached;
  // Every read at once (each br call is a process). One read of the epic's graph gives the epic, its
  // beads and a failed bead's comments, however many failed. The graph is awaited first: ready of an
  // unknown id fails too, and the race must not decide which error shows.
  const graphAsked = graphOf(store, epicId);
  const readyAsked = store.ready(epicId, { recursive: true });
  readyAsked.catch(() => undefined);
  const graph = await graphAsked;
  const view = viewOf(epicId, graph, await readyAsked, now);
  if (version !== undefined && readAt !== undefined)
    cacheView(cachePath, runDir.trustedRoot, epicId, version, view, readAt);
  return view;
}

function viewOf(epicId: string, graph: EpicGraph, ready: readonly Bead[], now: number): StoreView {
  const readyIds = new Set(ready.map((bead) => bead.id));
  // In the order br lists ready work (the graph lists them as it walked), whichever store holds them.
  const members = [...graph.beads]
    .sort(compareHybrid)
    .filter((bead) => bead.id !== epicId && bead.issue_type !== 'epic');
  const beads = members.map((bead) => ({
    id: bead.id,
    title: bead.title,
    status: bead.status,
    state: stateOf(bead, readyIds),
  }));
  const comments: StoreView['comments'] = [];
  let validUntil: number | null = null;
  for (const [i, bead] of members.entries()) {
    if (beads[i]?.state === 'failed') {
      const comment = bead.comments.findLast((c) => ATTEMPT_COMMENT.test(c.text));
      if (comment !== undefined)
        comments.push({ bead: bead.id, text: comment.text, created_at: comment.created_at });
    }
    // A deferred bead is ready once its time comes, with nothing in the store changed.
    const due =
      bead.status !== 'open' || bead.defer_until === undefined ? Number.NaN : Date.parse(bead.defer_until);
    if (due > now && (validUntil === null || due < validUntil)) validUntil = due;
  }
  return { title: graph.epic.title, status: graph.epic.status, beads, comments, validUntil };
}

/** The comment ralph-loop leaves on a bead whose attempt failed, or that it left open. */
const ATTEMPT_COMMENT = /^ralph-loop (attempt \d+|left this bead open)/;

async function graphOf(store: EpicStatusPorts['store'], epicId: string): Promise<EpicGraph> {
  try {
    return await store.graph(epicId);
  } catch (error) {
    if (error instanceof BeadStoreError && error.code === 'ISSUE_NOT_FOUND') {
      throw new AppError(`${epicId} has no autoresearch loop and is not a bead in the store.`, {
        exitCode: ExitCode.usage,
        hint: 'See the beads with: forge-pack beads list (or make a loop with forge-pack loop).',
      });
    }
    throw error;
  }
}

function stateOf(bead: Bead, readyIds: ReadonlySet<string>): BeadState {
  if (bead.status === 'closed') return 'done';
  if (bead.labels.includes(FAILED_LABEL)) return 'failed';
  if (bead.status === 'in_progress') return 'in_progress';
  return bead.status === 'open' && readyIds.has(bead.id) ? 'open' : 'blocked';
}

function liveRun(
  lock: NonNullable<Awaited<ReturnType<typeof readLockFile>>>,
  digest: RunDigest,
  now: number,
  host: string,
): LiveRun {
  // The lock keeps naming a bead after it closes, until the next starts: the events say whether it ended.
  const trace = lock.bead === undefined ? undefined : digest.beads.get(lock.bead);
  const started = trace?.started ?? undefined;
  const ended = trace?.ended ?? false;
  const bead = lock.bead === undefined || ended ? null : lock.bead;
  return {
    pid: lock.pid,
    host: lock.host,
    verified: lock.host === host,
    run_id: lock.run_id,
    run_started_at: lock.started_at,
    run_elapsed_ms: elapsedSince(lock.started_at, now),
    bead,
    title: bead === null ? null : str(started?.title),
    role: bead === null ? null : str(started?.role),
    agent: bead === null ? null : str(started?.agent),
    attempt: bead === null ? null : num(started?.attempt),
    agent_pid: bead === null ? null : (lock.agent_pid ?? null),
    bead_elapsed_ms:
      bead === null || lock.bead_started_at === undefined ? null : elapsedSince(lock.bead_started_at, now),
    running: lock.running ?? null,
  };
}

function lastRun(file: string, path: string, digest: RunDigest, liveRunId: string | undefined): LastRun {
  const started = digest.started ?? undefined;
  const finished = digest.finished ?? undefined;
  const runId = str(started?.run_id) ?? file.replace(/\.jsonl$/, '');
  const summary = (
    typeof finished?.summary === 'object' && finished.summary !== null ? finished.summary : {}
  ) as Record<string, unknown>;
  return {
    run_id: runId,
    state: finished !== undefined ? 'finished' : runId === liveRunId ? 'running' : 'ended',
    started_at: str(started?.ts),
    finished_at: str(finished?.ts),
    reason: str(summary.reason),
    message: str(summary.message),
    beads_run: num(summary.beadsRun),
    beads_closed: num(summary.beadsClosed),
    cost_usd: num(summary.costUsd),
    gate_ms: num(summary.gateMs),
    events_file: path,
  };
}

async function failuresOf(
  comments: ReadonlyMap<string, { text: string; created_at: string }>,
  failed: readonly EpicBead[],
  runDir: RunDir,
  runFiles: readonly string[],
  newest: RunDigest,
): Promise<BeadFailure[]> {
  const failures: BeadFailure[] = [];
  let older: RunDigest[] | undefined;
  for (const bead of failed) {
    const comment = comments.get(bead.id);
    if (comment !== undefined) {
      failures.push({
        bead: bead.id,
        title: bead.title,
        message: comment.text,
        source: 'comment',
        at: comment.created_at,
      });
      continue;
    }
    // No comment (a store that lost it, a label set by hand): the event logs, newest first.
    older ??= await Promise.all(
      runFiles
        .slice(-RUNS_SEARCHED, -1)
        .reverse()
        .map(async (file) => (await readRunDigest(join(runDir.runsDir, file))) ?? emptyDigest()),
    );
    let found: Record<string, unknown> | undefined;
    for (const digest of [newest, ...older]) {
      found = digest.beads.get(bead.id)?.failure ?? undefined;
      if (found !== undefined) break;
    }
    failures.push({
      bead: bead.id,
      title: bead.title,
      message: str(found?.message) ?? 'no message recorded',
      source: found === undefined ? 'none' : 'event',
      at: str(found?.ts),
    });
  }
  return failures;
}

async function listRunFiles(runDir: RunDir): Promise<string[]> {
  // Run ids start with their ISO start time, so name order is start order.
  const names = await readdir(runDir.runsDir).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith('.jsonl')).sort();
}

function pathOf(runDir: RunDir, file: string | undefined): string | undefined {
  return file === undefined ? undefined : join(runDir.runsDir, file);
}

function elapsedSince(iso: string, now: number): number | null {
  const start = Date.parse(iso);
  return Number.isFinite(start) ? Math.max(0, now - start) : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function num(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}
