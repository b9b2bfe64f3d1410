// The text of `ralph-loop status`: the loop status that autoresearch computes, as people read it, and
// the number, duration and decision words other loop output shares with it.
import { DECISION_WORDS } from '../autoresearch/decision-words.js';
import { CYCLE_ROLES, type LoopFigures } from '../autoresearch/loop-figures.js';
import type { LoopPhase, LoopStatus } from '../autoresearch/status.js';
import type { BestNoise } from '../autoresearch/status-figures.js';
import { sparkline } from '../autoresearch/sparkline.js';

export function formatNumber(value: number | null): string {
  if (value === null) return '—';
  return String(Number(value.toPrecision(6)));
}

export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

function formatTokenCount(n: number): string {
  return n >= 1_000_000
    ? `${(n / 1_000_000).toFixed(1)}M`
    : n >= 1000
      ? `${(n / 1000).toFixed(1)}k`
      : String(n);
}

/** The report as people read it. `unicode: false` draws the sparkline in ASCII. */
export function renderStatusText(status: LoopStatus, options: { unicode: boolean }): string {
  const out: string[] = [];
  const { metric, scores } = status;
  out.push(`${status.subject}  (epic ${status.epic})`);
  const measure =
    metric.type === 'hard'
      ? `hard: \`${metric.command ?? ''}\` → ${metric.score ?? 'exit-code'}`
      : metric.type === 'soft'
        ? `soft: rubric ${metric.rubric ?? '?'} on ${metric.artifact ?? '?'}`
        : 'unknown';
  out.push(
    `metric    ${measure}, ${metric.direction}${status.target === null ? '' : ` · target ${formatNumber(status.target)}`}`,
  );
  if (status.config_error !== null) {
    out.push(
      ...status.config_error
        .split('\n')
        .map((line, i) => `${i === 0 ? 'config    INVALID' : ' '.repeat(17)}  ${line}`),
      '          the next run stops on it (exit 4): fix the field(s) above',
    );
  }
  out.push(`phase     ${describePhase(status.phase, status.epic)}`);
  if (status.stale_lock !== null) {
    out.push(
      `          (a stale lock of pid ${status.stale_lock.pid} on ${status.stale_lock.host}: the next run takes it over)`,
    );
  }
  const it = status.iterations;
  out.push(
    `iters     ${it.decided} decided: ${it.kept} kept, ${it.reverted} reverted, ${it.crashed} crashed${it.tampered > 0 ? `, ${it.tampered} tampered` : ''}${it.guard_failed > 0 ? `, ${it.guard_failed} guard failed` : ''} · ${formatDuration(status.duration_ms)}`,
    `spend     $${status.cost_usd.toFixed(2)} · ${formatTokenCount(status.tokens.input)} in / ${formatTokenCount(status.tokens.output)} out tokens · ${status.agent_runs} agent run(s)${status.scripted_runs > 0 ? `, ${status.scripted_runs} by the scripted agent (no model)` : ''}`,
  );
  out.push(
    `score     ${formatNumber(scores.baseline)} (baseline) → ${formatNumber(scores.best)} (best${scores.best_iter === null ? '' : `, iter ${scores.best_iter}`}) → ${formatNumber(scores.last)} (last${scores.last_iter === null ? '' : `, iter ${scores.last_iter}`})`,
  );
  for (const track of status.tracks) {
    out.push(
      `track     ${track.name} ${formatNumber(track.baseline)} (baseline) → ${formatNumber(track.last)} (last${track.last_iter === null ? '' : `, iter ${track.last_iter}`})`,
    );
  }
  const { trajectory } = status;
  if (trajectory.scores.length > 0) {
    const first = trajectory.iters[0] ?? 0;
    const lastIter = trajectory.iters[trajectory.iters.length - 1] ?? 0;
    out.push(`trend     ${sparkline(trajectory.scores, options.unicode)}  (iterations ${first}–${lastIter})`);
  }
  out.push(
    ...renderFiguresLines(status.noise, status.figures, { number: formatNumber, duration: formatDuration }),
  );
  if (status.beads !== undefined) {
    const counts = Object.entries(status.beads)
      .map(([state, count]) => `${count} ${state}`)
      .join(', ');
    out.push(`beads     ${counts === '' ? 'none' : counts}`);
  }
  if (status.recent.length > 0) {
    out.push('recent');
    for (const line of status.recent) {
      const delta =
        line.delta === null ? '' : line.delta > 0 ? `+${formatNumber(line.delta)}` : formatNumber(line.delta);
      const hypothesis = line.hypothesis.length > 72 ? `${line.hypothesis.slice(0, 71)}…` : line.hypothesis;
      out.push(
        `  ${String(line.iter).padStart(4)}  ${DECISION_WORDS[line.decision].padEnd(8)}  ${formatNumber(line.score).padStart(8)}  ${delta.padStart(8)}  ${hypothesis === '' ? '' : JSON.stringify(hypothesis)}`.trimEnd(),
      );
      for (const record of line.tamper) {
        out.push(`        tamper: the ${record.role} changed ${record.paths.join(', ')} (put back)`);
      }
      if (line.failed_guard !== null) out.push(`        ${line.failed_guard}`);
      const population = status.candidates.filter((c) => c.iter === line.iter);
      const lead = population.find((c) => c.candidate === line.candidate);
      if (lead !== undefined) {
        const score = (c: { score: number | null }) =>
          c.score === null ? 'no score' : formatNumber(c.score);
        const others = population.filter((c) => c !== lead).map((c) => `c${c.candidate} ${score(c)}`);
        out.push(
          `        iter ${line.iter}: c${lead.candidate} ${lead.decision} ${score(lead)} (${others.join(', ')})`,
        );
      }
    }
  }
  return `${out.join('\n')}\n`;
}

function describePhase(phase: LoopPhase, epic: string): string {
  switch (phase.state) {
    case 'running': {
      const where = phase.verified ? `pid ${phase.pid}` : `pid ${phase.pid} on ${phase.host} (not checked)`;
      const bead =
        phase.bead === null
          ? 'between beads'
          : `${phase.bead}${phase.bead_elapsed_ms === null ? '' : ` for ${formatDuration(phase.bead_elapsed_ms)}`}`;
      const run =
        phase.run_elapsed_ms === null ? '' : `, run started ${formatDuration(phase.run_elapsed_ms)} ago`;
      return `running: ${bead} (${where}${run})`;
    }
    case 'waiting_for_human':
      return `waiting for a human: ${phase.question === '' ? phase.needs_human : `"${phase.question}"`} (answer in ${phase.needs_human}, then: ralph-loop resume ${epic})`;
    case 'terminated':
      return `terminated: ${phase.reason}${phase.best_score === null ? '' : ` (best ${formatNumber(phase.best_score)})`}`;
    case 'idle':
      return phase.underway_iter === null
        ? 'idle (not running)'
        : `idle (not running): iteration ${phase.underway_iter} is under way, not yet decided; ralph-loop ${epic} goes on with it`;
  }
}

/** The status lines for the noise band and the figures, under the `score` line. */
export function renderFiguresLines(
  noise: BestNoise | null,
  figures: LoopFigures,
  format: { number(value: number | null): string; duration(ms: number): string },
): string[] {
  const out: string[] = [];
  if (noise !== null) {
    out.push(
      `noise     best ±${format.number(noise.band)} (median of ${noise.samples.length} samples, spread ${format.number(noise.spread)})`,
    );
  }
  if (figures.iterations === 0) return out;
  const rate = figures.keep_rate === null ? '—' : `${Math.round(figures.keep_rate * 100)}%`;
  const perHour =
    figures.iterations_per_hour === null ? '—' : format.number(roundRate(figures.iterations_per_hour));
  const roles = CYCLE_ROLES.map((role) => {
    const ms = figures.time_per_iteration_ms[role];
    return `${role} ${ms === null ? '—' : format.duration(ms)}`;
  }).join(', ');
  const usd = (value: number | null) => (value === null ? '—' : `$${value.toFixed(2)}`);
  out.push(
    `pace      ${perHour} iterations/hour · keep rate ${rate} · per iteration: ${roles}`,
    `earned    ${usd(figures.cost_per_iteration_usd)} per iteration, ${usd(figures.cost_per_keep_usd)} per kept improvement · improvement ${format.number(figures.improvement)}${figures.improvement_per_usd === null ? '' : ` (${format.number(figures.improvement_per_usd)} per $)`}`,
  );
  return out;
}

/** A rate a person reads at a glance: whole numbers from 100 up (1418.72 → 1419), else 3 significant digits. */
export function roundRate(value: number): number {
  return Math.abs(value) >= 100 ? Math.round(value) : Number(value.toPrecision(3));
}
