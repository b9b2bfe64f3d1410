// Figure 1's rows: the runner's own time per bead, and the runner against the br protocol's floor.
import { medP95, ms, num, verdictAtMost, type Row } from './report.js';
import type { RunnerOverhead } from './runner-overhead.js';
import type { WholeRun } from './whole-run.js';

/** DESIGN §7: a whole run within 1.10× the floor at 20 beads, and 1.03× per bead in the steady state. */
export const WHOLE_RATIO = 1.1;
export const STEADY_RATIO = 1.03;
/**
 * br calls a whole run may make beyond the floor's (ready, claim and close per bead, the last ready):
 * the version probe, the read of the epic before the run (dep list + show), the read that explains why
 * it is idle (one show), the epic's close and the flush of what the run wrote; less the last ready,
 * which a run that knows every bead closed does not make (the read that explains the end shows it).
 */
export const EXTRA_CALLS = 5;

const times = (v: number) => `${v.toFixed(2)}×`;
/** A difference of times, with its sign: "+182 ms", "−3.10 ms". */
const signedMs = (v: number) => `${v < 0 ? '−' : '+'}${ms(Math.abs(v))}`;
/** Three decimals where the budget is 1.03×: two would show 1.034× as 1.03× and a miss as "0.00×". */
const fine = (v: number) => `${num(v, 3)}×`;

/** The order the extra calls are named in, as a run makes them (any other command after these). */
const CALL_ORDER = ['version', 'dep list', 'show', 'close (epic)', 'sync'];

export function wholeRunRows(w: WholeRun): Row[] {
  // Beyond one ready, claim and close per bead and the last ready: what else the run asked br, and
  // what of the floor's it did not need.
  const counted = Object.entries(w.calls.byCommand)
    .map(([command, count]): [string, number] =>
      command === 'ready'
        ? [command, count - w.beads - 1]
        : command === 'claim'
          ? [command, count - w.beads]
          : command === 'close'
            ? ['close (epic)', count - w.beads]
            : [command, count],
    )
    .sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const name = (entries: [string, number][]) =>
    entries.map(([command, count]) => `${command} ${Math.abs(count)}`).join(', ');
  const more = name(counted.filter(([, count]) => count > 0));
  const fewer = name(counted.filter(([, count]) => count < 0));
  const others = `${more || 'none'}${fewer === '' ? '' : `; fewer: ${fewer}`}`;
  const rounds = w.rounds.map((round) => times(round.ratio)).join(', ');
  return [
    {
      figure: '1d',
      measure: `whole run, ${w.beads} beads, fake br: ralph-loop / floor (median of ${w.rounds.length}: ${rounds})`,
      value: `${ms(w.runnerMs)} / ${ms(w.floorMs)} = ${times(w.ratio)}`,
      budget: `≤ ${WHOLE_RATIO}×`,
      verdict: verdictAtMost(w.ratio, WHOLE_RATIO, fine),
    },
    {
      figure: '',
      measure: `  br calls of the run: total (per bead) vs the floor's; beyond it: ${others || 'none'}`,
      value: `${w.calls.total} (${num(w.calls.total / w.beads)}) vs ${w.floorCalls}`,
      budget: `≤ floor + ${EXTRA_CALLS}`,
      verdict: verdictAtMost(w.calls.total, w.floorCalls + EXTRA_CALLS, (v) => `${v} call(s)`),
    },
    {
      figure: '',
      measure:
        "  beyond the floor, medians: start (Node, the checks, the first ready and claim) / per bead / end (the epic's close, the flush, exit)",
      value: `${signedMs(w.excess.startMs)} / ${signedMs(w.excess.perBeadMs)} × ${w.beads} / ${signedMs(w.excess.endMs)}`,
      budget: '',
      verdict: '',
    },
  ];
}

export function runnerRows(r: RunnerOverhead): Row[] {
  const row = (figure: string, measure: string, value: string, budget = '', verdict = ''): Row => ({
    figure,
    measure,
    value,
    budget,
    verdict,
  });
  const calls = r.br.calls;
  return [
    row('1a', `embedded store, ${r.beads} no-op beads: per bead, median / p95`, medP95(r.embedded.cycle)),
    row('', 'of which the no-op agent (spawn to exit), median', ms(r.embedded.agent.median)),
    row(
      '',
      'runner + embedded store outside the agent, median / p95',
      medP95(r.embedded.outsideAgent),
      '< 50 ms',
      verdictAtMost(r.embedded.outsideAgent.median, 50),
    ),
    row('', 'whole process wall time per bead (start and exit included)', ms(r.embedded.wallPerBeadMs)),
    row(
      '1b',
      `fake br ${r.brVersion}, ${r.beads} beads in ${r.br.runs} run(s): per bead, median / p95`,
      medP95(r.br.cycle),
    ),
    row(
      '',
      `floor (ready + claim + spawn + close), ${r.floorBeads} beads: median / p95`,
      medP95(r.floor.perBead),
    ),
    row(
      '',
      'steady state, ratio to the floor per bead: means (total time) / medians',
      `${fine(r.ratio.mean)} / ${fine(r.ratio.median)}`,
      `≤ ${STEADY_RATIO}×`,
      verdictAtMost(r.ratio.mean, STEADY_RATIO, fine),
    ),
    row(
      '',
      r.containment.contained
        ? "  of which the agent's PID namespace (unshare and its shell; the floor has none): contained / direct start, medians"
        : "  the agent's start: no PID namespace on this machine, so none of the excess is containment",
      r.containment.contained
        ? `${ms(r.containment.inNamespace.median)} / ${ms(r.containment.direct.median)} (${signedMs(r.containment.inNamespace.median - r.containment.direct.median)} a bead)`
        : ms(r.containment.direct.median),
    ),
    row(
      '',
      'br calls per bead (ready+claim+close; others per run)',
      `${num(calls.perBead)} (${num(calls.protocolPerBead)}; ${num(calls.otherPerRun, 1)}/run)`,
      '≤ 4',
      verdictAtMost(calls.perBead, 4, (v) => v.toFixed(2)),
    ),
    ...wholeRunRows(r.whole),
    row(
      '',
      "runner's own time per bead, excl. br and agent (est.)",
      ms(r.overheadExcludingBrAndAgentMs),
      '< 50 ms',
      r.overheadExcludingBrAndAgentMs < 0
        ? 'n/a (below the noise of this run)'
        : verdictAtMost(r.overheadExcludingBrAndAgentMs, 50),
    ),
    row(
      '',
      'floor parts: spawn / ready / claim / close, medians',
      [r.floor.spawn, r.floor.ready, r.floor.claim, r.floor.close].map((s) => ms(s.median)).join(' / '),
    ),
    row(
      '',
      'runner start (spawn to run_started): embedded / br, median',
      `${ms(r.embedded.startupMs.median)} / ${ms(r.br.startupMs.median)}`,
    ),
    row(
      '1c',
      `core runner in process (memory store, no-op executor), ${r.core.beads} beads: median / p95`,
      medP95(r.core.perBead),
      '< 50 ms',
      verdictAtMost(r.core.perBead.median, 50),
    ),
    row(
      '',
      `whole CLI in process (embedded store on disk, lock, logs; no spawn), ${r.cli.beads} beads`,
      `${medP95(r.cli.perBead)} (mean ${ms(r.cli.meanMs)})`,
      '< 50 ms',
      verdictAtMost(r.cli.perBead.median, 50),
    ),
  ];
}

function rank(command: string): number {
  const index = CALL_ORDER.indexOf(command);
  return index === -1 ? CALL_ORDER.length : index;
}
