// `ralph-loop status <parent>` of a pipeline: every stage with its bead, its loop or epic, its own phase
// and score line (a loop's baseline → best → last against its target; an epic's beads done of all).
import type { BeadStore } from '../beads/types.js';
import { isOwnerLive, parseLockRecord } from '../infra/lock-record.js';
import type { PipelineRecord } from './pipeline-state.js';
import { readStageQuestion } from './pipeline-state.js';
import { loopStatus, type StatusPorts } from './status.js';

export interface StageStatus {
  name: string;
  type: 'loop' | 'epic';
  bead: string;
  bead_status: string;
  epic: string | null;
  cycle: number;
  /** passed (its bead closed), accepted, stopped, not started, or the loop's or epic's own phase. */
  phase: string;
  /** A loop stage's figures; null for an epic stage or a loop not created yet. */
  scores: { baseline: number | null; best: number | null; last: number | null; target: number | null } | null;
  /** An epic stage's beads (the loop's own beads are not counted). */
  beads: { done: number; total: number } | null;
}

export interface PipelineStatus {
  epic: string;
  name: string;
  phase: 'waiting_for_human' | 'stopped' | 'done' | 'in_progress';
  /**
   * The parent's runner as its lock names it: live (the pipeline is being run now), or a lock left by a
   * runner that died (kill -9: the next `ralph-loop <parent>` takes it over); null with no lock.
   */
  runner: { live: boolean; pid: number; host: string; started_at: string; bead: string | null } | null;
  question: string | null;
  stages: StageStatus[];
}

export async function pipelineStatus(
  repo: string,
  record: PipelineRecord,
  store: Pick<BeadStore, 'show' | 'children'>,
  ports: StatusPorts,
  /** The parent's runner lock (`.forge/epics/<parent>/ralph-loop.lock`); unread when not given. */
  lockPath?: string,
): Promise<PipelineStatus> {
  const stages: StageStatus[] = [];
  for (const stage of record.definition.stages) {
    const state = record.stages[stage.name];
    if (state === undefined) continue;
    const bead = await store.show(state.bead);
    const base = {
      name: stage.name,
      type: stage.type,
      bead: state.bead,
      bead_status: bead.status,
      epic: state.epic,
      cycle: state.cycle,
      scores: null,
      beads: null,
    };
    let phase: string = state.epic === null ? 'not started' : 'idle';
    let scores: StageStatus['scores'] = null;
    let beads: StageStatus['beads'] = null;
    if (stage.type === 'loop' && state.epic !== null) {
      const loop = await loopStatus(repo, state.epic, ports);
      phase = loop.phase.state === 'terminated' ? `terminated (${loop.phase.reason})` : loop.phase.state;
      scores = {
        baseline: loop.scores.baseline,
        best: loop.scores.best,
        last: loop.scores.last,
        target: loop.target,
      };
    }
    if (stage.type === 'epic' && state.epic !== null) {
      const children = await store.children(state.epic);
      beads = { done: children.filter((b) => b.status === 'closed').length, total: children.length };
      phase = beads.done === beads.total ? 'all closed' : 'open beads';
    }
    if (state.answer === 'accept') phase = 'accepted';
    if (state.answer === 'stop') phase = 'stopped';
    if (bead.status === 'closed') phase = state.answer === 'accept' ? 'accepted' : 'passed';
    stages.push({ ...base, phase, scores, beads });
  }
  const question = await readStageQuestion(repo, record.parent);
  const phase: PipelineStatus['phase'] =
    question.state !== 'none'
      ? 'waiting_for_human'
      : stages.some((s) => s.phase === 'stopped')
        ? 'stopped'
        : stages.every((s) => s.bead_status === 'closed')
          ? 'done'
          : 'in_progress';
  return {
    epic: record.parent,
    name: record.name,
    phase,
    runner: lockPath === undefined ? null : await runnerOf(lockPath, ports),
    question: question.state === 'none' ? null : question.path,
    stages,
  };
}

async function runnerOf(lockPath: string, ports: StatusPorts): Promise<PipelineStatus['runner']> {
  const text = await ports.files.readIfExists(lockPath);
  const lock = text === undefined ? undefined : parseLockRecord(text);
  if (lock === undefined) return null;
  // The lock's last write tells a recycled pid from its holder, on the holder's own host only.
  const writtenAt = lock.host === ports.host ? (await ports.files.stat(lockPath))?.mtimeMs : undefined;
  const live = isOwnerLive(lock, ports.host, writtenAt, (pid) => ports.isProcessAlive(pid));
  return { live, pid: lock.pid, host: lock.host, started_at: lock.started_at, bead: lock.bead ?? null };
}

const fmt = (n: number | null) => (n === null ? '–' : String(n));

export function renderPipelineStatusText(status: PipelineStatus): string {
  const lines = [`pipeline ${status.name} (${status.epic}): ${pipelinePhaseText(status)}`];
  if (status.runner !== null && !status.runner.live)
    lines.push(
      `  (a stale lock of pid ${status.runner.pid} on ${status.runner.host}: the next run takes it over)`,
    );
  if (status.question !== null)
    lines.push(`  question: ${status.question} (then: ralph-loop resume ${status.epic})`);
  status.stages.forEach((s, index) => {
    const figures =
      s.scores !== null
        ? `score ${fmt(s.scores.baseline)} → ${fmt(s.scores.best)} → ${fmt(s.scores.last)}${s.scores.target === null ? '' : ` (target ${s.scores.target})`}`
        : s.beads !== null
          ? `beads ${s.beads.done}/${s.beads.total} closed`
          : '';
    const cycle = s.cycle > 1 ? ` cycle ${s.cycle}` : '';
    lines.push(
      `  ${index + 1}. ${s.name} [${s.type}] ${s.bead}${s.epic === null ? '' : ` → ${s.epic}`}${cycle}: ${s.phase.replace(/_/g, ' ')}${figures === '' ? '' : `; ${figures}`}`,
    );
  });
  return `${lines.join('\n')}\n`;
}

/** `in progress: running (pid 41 on vm, bead bd-a.3)`, or what goes on with one no runner holds. */
function pipelinePhaseText(status: PipelineStatus): string {
  const phase = status.phase.replace(/_/g, ' ');
  if (status.phase !== 'in_progress') return phase;
  const runner = status.runner;
  if (runner?.live === true) {
    const bead = runner.bead === null ? '' : `, bead ${runner.bead}`;
    return `${phase}: running (pid ${runner.pid} on ${runner.host}${bead})`;
  }
  return `${phase}, not running: ralph-loop ${status.epic} goes on with it`;
}
