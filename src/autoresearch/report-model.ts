// The morning report of a loop as data: every iteration with its decision, score, best-kept line,
// cost and time by role, and the totals. Pure: the reader (report-read.ts) gathers the inputs, the
// cli layer renders the page, and tests check the figures without a browser.
import type { LedgerLine } from './ledger.js';
import type { LoopStatus } from './status.js';

/** A cycle role's share of one iteration: time over its attempts, and what its agent spent. */
export interface RoleShare {
  ms: number;
  cost_usd: number;
}

export interface ReportIteration {
  iter: number;
  ts: string;
  decision: LedgerLine['decision'];
  /** Measured this iteration; null when it crashed or was not judged. */
  score: number | null;
  /** The best-kept score after this decision (the bar the next iteration must beat). */
  best: number | null;
  delta: number | null;
  hypothesis: string;
  findings_count: number;
  /** What the judge wrote, when its output file is still there. */
  findings: string[];
  sha: string | null;
  /** Why it was reverted, crashed or failed a guard; null otherwise. */
  reason: string | null;
  cost_usd: number;
  duration_ms: number;
  /** Time and cost by role, from the run event logs; empty when no log covers this iteration. */
  roles: Record<string, RoleShare>;
}

export interface LoopReportTotals {
  iterations: number;
  kept: number;
  reverted: number;
  crashed: number;
  tampered: number;
  guard_failed: number;
  keep_rate: number | null;
  cost_usd: number;
  cost_per_keep_usd: number | null;
  baseline: number | null;
  best: number | null;
  best_iter: number | null;
  improvement: number | null;
  duration_ms: number;
  /** Mean time per iteration by role (null: nothing recorded for that role). */
  time_per_iteration_ms: Record<string, number | null>;
}

export interface LoopReport {
  kind: 'loop';
  epic: string;
  subject: string;
  generated_at: string;
  metric: LoopStatus['metric'];
  target: number | null;
  phase: LoopStatus['phase'];
  /** Why the loop ended, in one phrase; null while it has not. */
  terminal_reason: string | null;
  totals: LoopReportTotals;
  /** Iteration 0 (the baseline) first, then every iteration in ledger order. */
  iterations: ReportIteration[];
  /** Lines of the ledger that are not iterations (settings changed, tamper between runs). */
  notices: { ts: string; kind: string; message: string }[];
  retrospective: string | null;
}

export interface LoopReportInput {
  status: LoopStatus;
  lines: readonly LedgerLine[];
  notices: readonly { ts: string; kind: string; message: string }[];
  /** Role shares by iteration (see `foldRoleShares`). */
  roles: ReadonlyMap<number, Record<string, RoleShare>>;
  findings: ReadonlyMap<number, string[]>;
  retrospective: string | null;
  generatedAt: string;
}

export function buildLoopReport(input: LoopReportInput): LoopReport {
  const { status } = input;
  const iterations = input.lines.map((line): ReportIteration => ({
    iter: line.iter,
    ts: line.ts,
    decision: line.decision,
    score: line.score_after,
    best: line.best_after,
    delta: line.delta,
    hypothesis: line.hypothesis,
    findings_count: line.findings_count,
    findings: input.findings.get(line.iter) ?? [],
    sha: line.sha,
    reason: line.reason ?? line.failed_guard?.reason ?? null,
    cost_usd: line.cost_usd,
    duration_ms: line.duration_ms,
    roles: input.roles.get(line.iter) ?? {},
  }));
  const count = (decision: LedgerLine['decision']) =>
    iterations.filter((iteration) => iteration.decision === decision).length;
  const decided = iterations.filter((iteration) => iteration.decision !== 'baseline').length;
  const kept = count('keep');
  const cost = status.cost_usd;
  const figures = status.figures;
  return {
    kind: 'loop',
    epic: status.epic,
    subject: status.subject,
    generated_at: input.generatedAt,
    metric: status.metric,
    target: status.target,
    phase: status.phase,
    terminal_reason: status.phase.state === 'terminated' ? status.phase.reason : null,
    totals: {
      iterations: decided,
      kept,
      reverted: count('revert'),
      crashed: count('crash'),
      tampered: count('tamper'),
      guard_failed: count('guard_failed'),
      keep_rate: decided > 0 ? round(kept / decided) : null,
      cost_usd: round(cost),
      cost_per_keep_usd: kept > 0 ? round(cost / kept) : null,
      baseline: status.scores.baseline,
      best: status.scores.best,
      best_iter: status.scores.best_iter,
      improvement: figures.improvement,
      duration_ms: status.duration_ms,
      time_per_iteration_ms: { ...figures.time_per_iteration_ms },
    },
    iterations,
    notices: [...input.notices],
    retrospective: input.retrospective,
  };
}

/**
 * An attempt's end, and its title's start `<role>-<iter>:` (stamp.ts), which ties it to its iteration.
 * Keys are read by pattern, however spaced: inside a JSON string a quote is escaped, so `"title":"` can
 * only be the key itself (attempt_finished events are flat).
 */
const ATTEMPT_END = /"type"\s*:\s*"attempt_finished"/;
const ROLE_TITLE = /"title"\s*:\s*"(doer|judge|arbiter|strategist)-(\d+):/;
const DURATION = /"duration_ms"\s*:\s*(-?\d[\d.eE+-]*)/;
const COST = /"cost_usd"\s*:\s*(-?\d[\d.eE+-]*)/;

/**
 * Adds one run log's `attempt_finished` lines to the shares by iteration; other beads' are left out, and
 * so is a line that does not end its object (one still being written). Read by pattern, not parsed:
 * a 10,000-iteration loop's logs hold 40,000 of them, and parsing each whole was ~100 ms of its report.
 */
export function foldRoleShares(
  shares: Map<number, Record<string, RoleShare>>,
  lines: readonly string[],
): void {
  for (const line of lines) {
    if (!ATTEMPT_END.test(line) || !line.trimEnd().endsWith('}')) continue;
    const match = ROLE_TITLE.exec(line);
    if (match === null) continue;
    const role = match[1] ?? '';
    const iter = Number(match[2]);
    const byRole = shares.get(iter) ?? {};
    const share = byRole[role] ?? { ms: 0, cost_usd: 0 };
    share.ms += finiteOrZero(Number(DURATION.exec(line)?.[1]));
    share.cost_usd = round(share.cost_usd + finiteOrZero(Number(COST.exec(line)?.[1])));
    byRole[role] = share;
    shares.set(iter, byRole);
  }
}

/** A judge's findings as lines of text (a finding is a string or an object with a message-like field). */
export function findingTexts(findings: readonly unknown[]): string[] {
  return findings.map((finding) => {
    if (typeof finding === 'string') return finding;
    if (typeof finding === 'object' && finding !== null) {
      const record = finding as Record<string, unknown>;
      for (const key of ['message', 'text', 'finding', 'description', 'summary']) {
        const value = record[key];
        if (typeof value === 'string') return value;
      }
    }
    return JSON.stringify(finding);
  });
}

function finiteOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : 0;
}

function round(value: number): number {
  return Number(value.toPrecision(12));
}
