// The page's two parts: the head it draws from (totals, the charts' columns, the newest rows) and the
// older rows it reads only when asked. Together they are the report, field for field.
import { describe, expect, it } from 'vitest';
import type { ReportIteration } from '../../src/autoresearch/report-model.js';
import type { EpicReport } from '../../src/cli/report-epic.js';
import type { ReportPage } from '../../src/cli/report-html.js';
import { CHART_ROLES, pageParts, ROWS_SHOWN, type LoopPageReport } from '../../src/cli/report-page.js';
import { lengthenedReport, readFixtureReport } from '../support/report-fixture.js';

function loopHead(parts: ReturnType<typeof pageParts>): LoopPageReport {
  const report = parts.head.report;
  if (report.kind !== 'loop') throw new Error('not a loop');
  return report;
}

describe('pageParts', () => {
  it('keeps every field of the report: the older rows and the newest are its iterations, in order', async () => {
    const report = lengthenedReport(await readFixtureReport(), 250);
    const live = {
      run_id: 'r1',
      pid: 7,
      bead: 'bd-x',
      title: null,
      role: 'doer',
      agent: 'scripted',
      attempt: 1,
      bead_elapsed_ms: 5,
    };
    const parts = pageParts({ report, live });
    const head = loopHead(parts);
    expect(head.latest).toHaveLength(ROWS_SHOWN);
    expect(parts.older).toHaveLength(250 - ROWS_SHOWN);
    expect([...parts.older, ...head.latest]).toEqual(report.iterations);
    const { latest: _latest, columns: _columns, ...rest } = head;
    const { iterations: _iterations, ...expected } = report;
    expect(rest).toEqual(expected);
    expect(parts.head.live).toEqual(live);
  });

  it('carries every iteration in the charts’ columns, each role’s time and cost where a run log had it', async () => {
    const report = lengthenedReport(await readFixtureReport(), 250);
    const { columns } = loopHead(pageParts({ report, live: null }));
    const its = report.iterations;
    expect(columns.iter).toEqual(its.map((i) => i.iter));
    expect(columns.decision).toEqual(its.map((i) => i.decision));
    expect(columns.score).toEqual(its.map((i) => i.score));
    expect(columns.best).toEqual(its.map((i) => i.best));
    const covered = CHART_ROLES.filter((role) => its.some((i) => i.roles[role] !== undefined));
    // The fixture's run log covers some roles of some iterations, not all.
    expect(covered.length).toBeGreaterThan(0);
    expect(its.some((i) => i.roles[covered[0]!] === undefined)).toBe(true);
    expect(Object.keys(columns.roles).sort()).toEqual([...covered].sort());
    for (const role of covered) {
      expect(columns.roles[role]!.ms).toEqual(its.map((i) => i.roles[role]?.ms ?? null));
      expect(columns.roles[role]!.cost_usd).toEqual(its.map((i) => i.roles[role]?.cost_usd ?? null));
    }
  });

  it('has no older rows for a short loop, and no role figures where no run log covers any iteration', async () => {
    const report = await readFixtureReport();
    const short = pageParts({ report, live: null });
    expect(short.older).toEqual([]);
    expect(loopHead(short).latest).toEqual(report.iterations);
    expect(report.iterations.length).toBeLessThan(ROWS_SHOWN);

    const iterations: ReportIteration[] = report.iterations.map((i) => ({ ...i, roles: {} }));
    expect(loopHead(pageParts({ report: { ...report, iterations }, live: null })).columns.roles).toEqual({});
  });

  it('passes a plain epic’s report through whole', () => {
    const report: EpicReport = {
      kind: 'epic',
      epic: 'bd-e',
      title: 'an epic',
      generated_at: '2026-11-23T08:00:00.000Z',
      counts: { total: 1, done: 0, open: 1, in_progress: 0, blocked: 0, failed: 0 },
      live: null,
      last_run: null,
      beads: [],
      runs: 0,
      totals: { attempts: 0, duration_ms: 0, cost_usd: 0 },
    };
    const page: ReportPage = { report, live: null };
    expect(pageParts(page)).toEqual({ head: { report, live: null }, older: [] });
  });
});
