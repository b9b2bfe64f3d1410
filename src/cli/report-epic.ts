// The report of a plain epic (not a loop) as data: its bead graph with each bead's state, attempts,
// time and gate results, and the runs. `buildEpicReport` is pure; `readEpicReport` gathers its inputs.
import { join } from 'node:path';
import type { BeadStore, EpicGraph } from '../beads/types.js';
import { readEventLog } from '../infra/event-log.js';
import { listDirIfExists } from '../infra/fs-ops.js';
import type { RunDir } from '../infra/run-dir.js';
import { epicStatus, type EpicStatus, type EpicStatusPorts } from './epic-status.js';

export interface EpicReportBead {
  id: string;
  title: string;
  state: EpicStatus['beads'][number]['state'];
  /** Beads of the epic this one waits for. */
  depends_on: string[];
  attempts: number;
  /** Time over its attempts, every run together. */
  duration_ms: number;
  cost_usd: number;
  agent: string | null;
  commit: string | null;
  /** Each gate's last result on this bead. */
  gates: { gate: string; ok: boolean; exit: number | null }[];
  last_message: string | null;
}

export interface EpicReport {
  kind: 'epic';
  epic: string;
  title: string;
  generated_at: string;
  counts: EpicStatus['counts'];
  live: EpicStatus['live'];
  last_run: EpicStatus['last_run'];
  beads: EpicReportBead[];
  runs: number;
  totals: { attempts: number; duration_ms: number; cost_usd: number };
}

export function buildEpicReport(
  status: EpicStatus,
  graph: Pick<EpicGraph, 'beads'>,
  events: readonly Record<string, unknown>[],
  runs: number,
  generatedAt: string,
): EpicReport {
  const inEpic = new Set(status.beads.map((bead) => bead.id));
  const dependsOn = new Map<string, string[]>();
  for (const bead of graph.beads) {
    dependsOn.set(
      bead.id,
      bead.dependencies
        .filter((edge) => edge.dependency_type !== 'parent-child' && inEpic.has(edge.id))
        .map((edge) => edge.id),
    );
  }
  const beads = status.beads.map((bead): EpicReportBead => ({
    id: bead.id,
    title: bead.title,
    state: bead.state,
    depends_on: dependsOn.get(bead.id) ?? [],
    attempts: 0,
    duration_ms: 0,
    cost_usd: 0,
    agent: null,
    commit: null,
    gates: [],
    last_message: null,
  }));
  const byId = new Map(beads.map((bead) => [bead.id, bead]));
  for (const event of events) {
    const bead = typeof event.bead === 'string' ? byId.get(event.bead) : undefined;
    if (bead === undefined) continue;
    if (event.type === 'attempt_finished') {
      bead.attempts += 1;
      bead.duration_ms += positive(event.duration_ms);
      bead.cost_usd = Number((bead.cost_usd + positive(event.cost_usd)).toPrecision(12));
      if (typeof event.agent === 'string') bead.agent = event.agent;
      if (typeof event.message === 'string') bead.last_message = event.message;
    } else if (event.type === 'bead_closed' && typeof event.commit === 'string') {
      bead.commit = event.commit;
    } else if (event.type === 'gate_finished' && typeof event.gate === 'string') {
      const result = {
        gate: event.gate,
        ok: event.ok === true,
        exit: typeof event.exit === 'number' ? event.exit : null,
      };
      bead.gates = [...bead.gates.filter((gate) => gate.gate !== result.gate), result];
    }
  }
  const sum = (pick: (bead: EpicReportBead) => number) =>
    beads.reduce((total, bead) => total + pick(bead), 0);
  return {
    kind: 'epic',
    epic: status.epic,
    title: status.title,
    generated_at: generatedAt,
    counts: status.counts,
    live: status.live,
    last_run: status.last_run,
    beads,
    runs,
    totals: {
      attempts: sum((bead) => bead.attempts),
      duration_ms: sum((bead) => bead.duration_ms),
      cost_usd: Number(sum((bead) => bead.cost_usd).toPrecision(12)),
    },
  };
}

export interface EpicReportPorts extends Omit<EpicStatusPorts, 'store'> {
  store: Pick<BeadStore, 'graph' | 'ready'>;
  runDir: RunDir;
}

export async function readEpicReport(epicId: string, ports: EpicReportPorts): Promise<EpicReport> {
  // The status reads the epic's graph (it gives the epic, its beads and their comments); the report
  // takes that same read rather than making its own.
  let read: Promise<EpicGraph> | undefined;
  const store: EpicStatusPorts['store'] = {
    graph: (id, options) =>
      id === epicId ? (read ??= ports.store.graph(id, options)) : ports.store.graph(id, options),
    ready: (id, options) => ports.store.ready(id, options),
  };
  const status = await epicStatus(epicId, { ...ports, store });
  const graph = await (read ?? ports.store.graph(epicId));
  const names = ((await listDirIfExists(ports.runDir.runsDir)) ?? [])
    .filter((n) => n.endsWith('.jsonl'))
    .sort();
  const events: Record<string, unknown>[] = [];
  for (const name of names) events.push(...(await readEventLog(join(ports.runDir.runsDir, name))).events);
  return buildEpicReport(status, graph, events, names.length, new Date(ports.now()).toISOString());
}

function positive(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : 0;
}
