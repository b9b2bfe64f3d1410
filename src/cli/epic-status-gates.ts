// `ralph-loop status` of a plain epic: the gates of its newest run, each as it last ended.

export interface GateStatus {
  gate: string;
  bead: string;
  attempt: number | null;
  ok: boolean;
  exit: number | null;
  duration_ms: number | null;
  timed_out: boolean;
  at: string | null;
}

/** Each gate's last result in a run's events, in the order the gates first ran. */
export function lastGateResults(events: readonly Record<string, unknown>[]): GateStatus[] {
  const byGate = new Map<string, GateStatus>();
  for (const event of events) {
    if (event.type !== 'gate_finished' || typeof event.gate !== 'string') continue;
    byGate.set(event.gate, {
      gate: event.gate,
      bead: typeof event.bead === 'string' ? event.bead : '?',
      attempt: typeof event.attempt === 'number' ? event.attempt : null,
      ok: event.ok === true,
      exit: typeof event.exit === 'number' ? event.exit : null,
      duration_ms: typeof event.duration_ms === 'number' ? event.duration_ms : null,
      timed_out: event.timed_out === true,
      at: typeof event.ts === 'string' ? event.ts : null,
    });
  }
  return [...byGate.values()];
}

/** One line: `test passed (3s, bd-1.2) · lint FAILED exit 1 (bd-1.3, attempt 2)`. */
export function describeGateResults(gates: readonly GateStatus[]): string {
  return gates
    .map((g) => {
      const how = g.ok ? 'passed' : g.timed_out ? 'TIMED OUT' : `FAILED exit ${g.exit ?? 'none'}`;
      const where = [
        g.duration_ms === null ? undefined : `${Math.round(g.duration_ms / 100) / 10}s`,
        g.bead,
        g.attempt === null || g.attempt === 1 ? undefined : `attempt ${g.attempt}`,
      ].filter((part) => part !== undefined);
      return `${g.gate} ${how} (${where.join(', ')})`;
    })
    .join(' · ');
}
