// `ralph-loop status` of a plain epic, as people read it.
import { formatDuration } from './loop-status-text.js';
import type { EpicStatus, LastRun, LiveRun } from './epic-status.js';
import { describeGateResults } from './epic-status-gates.js';

/** How many blocked beads are named before summarising the rest. */
const BLOCKED_NAMED = 5;

export function renderEpicStatusText(status: EpicStatus): string {
  const out: string[] = [];
  out.push(`${status.title}  (epic ${status.epic}, ${status.status})`);
  const c = status.counts;
  out.push(
    `beads     ${c.total} in all: ${c.done} done, ${c.open} open, ${c.in_progress} in progress, ${c.blocked} blocked, ${c.failed} failed`,
  );
  out.push(`now       ${describeLive(status.live)}`);
  if (status.stale_lock !== null) {
    out.push(
      `          (a stale lock of pid ${status.stale_lock.pid} on ${status.stale_lock.host}: the next run takes it over)`,
    );
  }
  out.push(indent(`last run  ${describeLastRun(status.last_run, status.epic)}`));
  if (status.gates.length > 0) out.push(`gates     ${describeGateResults(status.gates)}`);
  for (const failure of status.failures) {
    out.push(indent(`failed    ${failure.bead} ${JSON.stringify(failure.title)}: ${failure.message}`));
  }
  const blocked = status.beads.filter((bead) => bead.state === 'blocked');
  if (blocked.length > 0) {
    const named = blocked.slice(0, BLOCKED_NAMED).map((bead) => `${bead.id} ${JSON.stringify(bead.title)}`);
    if (blocked.length > BLOCKED_NAMED) named.push(`… and ${blocked.length - BLOCKED_NAMED} more`);
    out.push(`blocked   ${named.join(', ')}`);
  }
  if (status.failures.length > 0) {
    out.push(`          (transcripts: ralph-loop logs ${status.epic} <bead>)`);
  }
  return `${out.join('\n')}\n`;
}

function describeLive(live: LiveRun | null): string {
  if (live === null) return 'not running';
  const where = live.verified ? `pid ${live.pid}` : `pid ${live.pid} on ${live.host} (not checked)`;
  const since =
    live.run_elapsed_ms === null ? '' : `, run started ${formatDuration(live.run_elapsed_ms)} ago`;
  if (live.running !== null && live.running.length > 0) {
    return `${live.running.length} running: ${live.running.join(', ')} · ${where}${since}`;
  }
  if (live.bead === null) return `running, between beads (${where}${since})`;
  const title = live.title === null ? '' : ` ${JSON.stringify(live.title)}`;
  const via = live.agent === null ? '' : ` via ${live.agent}`;
  const details = [
    live.role === null ? undefined : `role:${live.role}`,
    live.attempt === null ? undefined : `attempt ${live.attempt}`,
    live.agent_pid === null ? undefined : `agent pid ${live.agent_pid}`,
  ].filter((part) => part !== undefined);
  const elapsed = live.bead_elapsed_ms === null ? '' : ` for ${formatDuration(live.bead_elapsed_ms)}`;
  return `running ${live.bead}${title}${via}${elapsed}${details.length > 0 ? ` (${details.join(', ')})` : ''} · ${where}${since}`;
}

function describeLastRun(run: LastRun | null, epic: string): string {
  if (run === null) return `none yet (start one with: ralph-loop ${epic})`;
  const started = run.started_at === null ? '' : ` (started ${run.started_at})`;
  switch (run.state) {
    case 'running':
      return `${run.run_id}: running${started}`;
    case 'ended':
      return `${run.run_id}: ended without finishing${started}; its runner was killed or crashed`;
    case 'finished': {
      const closed =
        run.beads_run === null ? '' : `, ${run.beads_closed ?? 0} of ${run.beads_run} bead(s) run closed`;
      const cost = run.cost_usd !== null && run.cost_usd > 0 ? `, $${run.cost_usd.toFixed(4)}` : '';
      const gates = run.gate_ms === null ? '' : `, gates ${formatDuration(run.gate_ms)}`;
      const when = [
        run.started_at === null ? undefined : `started ${run.started_at}`,
        run.finished_at === null ? undefined : `ended ${run.finished_at}`,
      ].filter((part) => part !== undefined);
      const message = run.message === null || run.message === '' ? '' : `\n${run.message}`;
      return `${run.run_id}: ${run.reason ?? 'finished'}${closed}${cost}${gates}${when.length > 0 ? ` (${when.join(', ')})` : ''}${message}`;
    }
  }
}

/** Continuation lines of a multi-line message line up under the first line's text. */
function indent(text: string): string {
  return text.replace(/\n/g, '\n          ');
}
