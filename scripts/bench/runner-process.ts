// Runs the built `ralph-loop` over an epic as a user would, and reads per-bead timings from its event log.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gaps } from './stats.js';
import { BIN, expectSuccess, NODE, runTimed, type Timed } from './support.js';

export interface RunnerRunOptions {
  /** The project root (cwd of the runner). */
  cwd: string;
  env: Record<string, string>;
  epicId: string;
  store: 'br' | 'embedded';
  agentSpec: string;
  /** Beads expected to close. */
  beads: number;
  /** Pass --max-beads (a slice of a longer epic); the run then stops on that cap, not on `done`. */
  maxBeads?: number;
}

export interface BeadSamples {
  /** Bead-to-bead time (consecutive bead_closed events): everything a bead costs in steady state. */
  cycle: number[];
  /** The agent's share of each of those beads (attempt_finished.duration_ms: spawn to exit, transcript). */
  agent: number[];
  /** cycle − agent: the runner and its store (and br). */
  outsideAgent: number[];
  closed: number;
}

export interface RunnerRun extends BeadSamples {
  process: Timed;
  /** The run's event log, as read after it ended. */
  events: EventLine[];
  /** Whole process wall time: Node start, recovery and shutdown included. */
  wallMs: number;
  /** Spawn to run_started, and run_finished to exit. */
  startupMs: number;
  shutdownMs: number;
}

export interface EventLine {
  type: string;
  ts: string;
  bead?: string;
  duration_ms?: number;
}

/** The NDJSON events of the newest run of `epicId` in `cwd` (plain epic: `.forge/epics/<epic>/runs`). */
export async function readRunEvents(cwd: string, epicId: string): Promise<EventLine[]> {
  const dir = join(cwd, '.forge', 'epics', epicId.replace(/[^A-Za-z0-9._-]/g, '_'), 'runs');
  const files = (await readdir(dir)).filter((name) => name.endsWith('.jsonl')).sort();
  const newest = files.at(-1);
  if (newest === undefined) throw new Error(`no event log in ${dir}`);
  return (await readFile(join(dir, newest), 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as EventLine);
}

/** Per-bead samples from a run's events; the first bead (recovery, first ready) has no cycle. */
export function perBeadFromEvents(events: readonly EventLine[]): BeadSamples {
  const closed = events.filter((event) => event.type === 'bead_closed');
  const closedAt = closed.map((event) => Date.parse(event.ts));
  const agentOf = new Map<string, number>();
  for (const event of events) {
    if (event.type === 'attempt_finished' && event.bead !== undefined)
      agentOf.set(event.bead, event.duration_ms ?? 0);
  }
  const cycles = gaps(closedAt);
  const agents = closed.slice(1).map((event) => agentOf.get(event.bead ?? '') ?? 0);
  return {
    cycle: cycles,
    agent: agents,
    outsideAgent: cycles.map((cycle, i) => cycle - (agents[i] ?? 0)),
    closed: closed.length,
  };
}

export async function runRalphLoop(options: RunnerRunOptions): Promise<RunnerRun> {
  const args = [
    BIN.ralphLoop,
    '--store',
    options.store,
    options.epicId,
    '--agent',
    options.agentSpec,
    '--max-attempts',
    '1',
    '--timeout',
    '120',
    ...(options.maxBeads === undefined ? [] : ['--max-beads', String(options.maxBeads)]),
  ];
  const run = expectSuccess(
    await runTimed(NODE, args, { cwd: options.cwd, env: options.env, timeoutMs: 600_000 }),
    `ralph-loop ${options.epicId} (${options.store})`,
  );
  const events = await readRunEvents(options.cwd, options.epicId);
  const perBead = perBeadFromEvents(events);
  if (perBead.closed !== options.beads) {
    throw new Error(`ralph-loop closed ${perBead.closed} bead(s), expected ${options.beads}:\n${run.stderr}`);
  }
  const started = events.find((event) => event.type === 'run_started');
  const finished = events.find((event) => event.type === 'run_finished');
  const endedAt = run.startedAt + run.ms;
  return {
    process: run,
    events,
    wallMs: run.ms,
    ...perBead,
    startupMs: started === undefined ? Number.NaN : Date.parse(started.ts) - run.startedAt,
    shutdownMs: finished === undefined ? Number.NaN : endedAt - Date.parse(finished.ts),
  };
}
