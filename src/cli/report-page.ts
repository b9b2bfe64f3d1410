// What a report page carries, split so a long loop's page draws from little: the head (totals, the
// charts' figures as one array per field, the newest rows of the table) is read when the page opens;
// the older rows are read only when someone asks for every iteration. A 10,000-iteration loop's head
// is about a fifth of its report; JSON.parse of the whole report was the page's largest single cost.
import type { LoopReport, ReportIteration } from '../autoresearch/report-model.js';
import type { EpicReport } from './report-epic.js';
import type { LiveBead, ReportPage } from './report-html.js';

/** The table's first view: the newest hundred iterations (laying out 500 rows took 400 ms in chromium). */
export const ROWS_SHOWN = 100;

/** The roles whose time and cost the page charts per iteration. */
export const CHART_ROLES = ['doer', 'judge', 'arbiter', 'strategist'] as const;

/** Every iteration's figures for the charts, one array per field, in ledger order (the baseline first). */
export interface IterationColumns {
  iter: number[];
  decision: ReportIteration['decision'][];
  score: (number | null)[];
  best: (number | null)[];
  /**
   * Per role: the time (ms) and cost of each iteration; null where no run log covers it. A role no run
   * log covers at all is left out (10,000 iterations of nulls are 100 KB of JSON a role and figure).
   */
  roles: Partial<Record<(typeof CHART_ROLES)[number], RoleColumns>>;
}

interface RoleColumns {
  ms: (number | null)[];
  cost_usd: (number | null)[];
}

/** A loop's report as the page first reads it: everything but the older rows. */
export interface LoopPageReport extends Omit<LoopReport, 'iterations'> {
  /** The newest `ROWS_SHOWN` iterations, oldest first. */
  latest: ReportIteration[];
  columns: IterationColumns;
}

export interface PageHead {
  report: LoopPageReport | EpicReport;
  live: LiveBead | null;
}

/** The page's two parts: `older` and `head.report.latest` together are the report's iterations, in order. */
export interface PageParts {
  head: PageHead;
  older: ReportIteration[];
}

export function pageParts(page: ReportPage): PageParts {
  if (page.report.kind === 'epic') return { head: { report: page.report, live: page.live }, older: [] };
  const { iterations, ...rest } = page.report;
  const split = Math.max(0, iterations.length - ROWS_SHOWN);
  return {
    head: {
      report: { ...rest, latest: iterations.slice(split), columns: columnsOf(iterations) },
      live: page.live,
    },
    older: iterations.slice(0, split),
  };
}

function columnsOf(iterations: readonly ReportIteration[]): IterationColumns {
  const count = iterations.length;
  const columns: IterationColumns = {
    iter: new Array<number>(count),
    decision: new Array<ReportIteration['decision']>(count),
    score: new Array<number | null>(count),
    best: new Array<number | null>(count),
    roles: {},
  };
  for (let k = 0; k < count; k += 1) {
    const iteration = iterations[k]!;
    columns.iter[k] = iteration.iter;
    columns.decision[k] = iteration.decision;
    columns.score[k] = iteration.score;
    columns.best[k] = iteration.best;
    for (const role of CHART_ROLES) {
      const share = iteration.roles[role];
      if (share === undefined) continue;
      const figures = (columns.roles[role] ??= {
        ms: new Array<number | null>(count).fill(null),
        cost_usd: new Array<number | null>(count).fill(null),
      });
      figures.ms[k] = share.ms;
      figures.cost_usd[k] = share.cost_usd;
    }
  }
  return columns;
}
