// The report's data without a browser: the loop report read from a known workspace, the role shares
// folded from run logs, a plain epic's bead table, and the JSON that sits inside the page's script tag.
import { describe, expect, it } from 'vitest';
import { readLoopReport } from '../../src/autoresearch/report-read.js';
import { foldRoleShares, type RoleShare } from '../../src/autoresearch/report-model.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { buildEpicReport } from '../../src/cli/report-epic.js';
import type { EpicStatus } from '../../src/cli/epic-status.js';
import { jsonForScript } from '../../src/cli/report-html.js';
import { createReportFixture, REPORT_EPIC, ROWS, TOTAL_COST } from '../support/report-fixture.js';

const ports = { now: () => Date.parse('2026-11-23T08:00:00Z'), host: 'h', isProcessAlive: () => false };

describe('loop report data', () => {
  it('holds every ledger line with its decision and the totals a person checks in the morning', async () => {
    const fixture = await createReportFixture();
    const report = await readLoopReport(fixture.dir, REPORT_EPIC, { ...ports, files: diskLoopFiles() });
    expect(report.iterations.map((i) => [i.iter, i.decision, i.score, i.best])).toEqual(
      ROWS.map((row) => [row.iter, row.decision, row.score_after, row.best_after]),
    );
    expect(report.totals).toMatchObject({
      iterations: 6,
      kept: 2,
      reverted: 1,
      crashed: 1,
      guard_failed: 1,
      tampered: 1,
      cost_usd: TOTAL_COST,
      cost_per_keep_usd: TOTAL_COST / 2,
      baseline: 10,
      best: 18,
    });
    expect(report.totals.keep_rate).toBeCloseTo(2 / 6, 10);
    expect(report.terminal_reason).toBe('iteration_cap');
    expect(report.retrospective).toContain('values above 15 help');
    expect(report.iterations[1]!.findings).toEqual(['the value is larger', 'no test covers it']);
    expect(report.iterations[1]!.roles).toEqual({
      doer: { ms: 120_000, cost_usd: 0.4 },
      judge: { ms: 60_000, cost_usd: 0.1 },
    });
    expect(report.iterations[3]!.reason).toBe('the metric command crashed');
    expect(report.generated_at).toBe('2026-11-23T08:00:00.000Z');
  });
});

describe('foldRoleShares', () => {
  it('adds attempts of a cycle bead to its iteration and role, retries included, and skips other beads', () => {
    const shares = new Map<number, Record<string, RoleShare>>();
    const attempt = (title: string, ms: number, cost?: number) => ({
      type: 'attempt_finished',
      title,
      duration_ms: ms,
      ...(cost === undefined ? {} : { cost_usd: cost }),
    });
    foldRoleShares(shares, [
      attempt('doer-3: value', 1000, 0.1),
      attempt('doer-3: value', 500, 0.05),
      attempt('strategist-3: value', 200),
      attempt('retrospective: value', 9000, 1),
      attempt('judge-x: value', 100),
      { type: 'bead_closed', title: 'doer-3: value', duration_ms: 77 },
    ]);
    expect([...shares.entries()]).toEqual([
      [3, { doer: { ms: 1500, cost_usd: 0.15 }, strategist: { ms: 200, cost_usd: 0 } }],
    ]);
  });
});

describe('plain epic report data', () => {
  it("counts each bead's attempts, time, cost and last gate results, and what it waits for", () => {
    const status = {
      epic: 'bd-1',
      title: 'ship it',
      counts: { total: 2, done: 1, open: 0, in_progress: 0, blocked: 0, failed: 1 },
      beads: [
        { id: 'bd-1.1', title: 'first', status: 'closed', state: 'done' },
        { id: 'bd-1.2', title: 'second', status: 'open', state: 'failed' },
      ],
      live: null,
      last_run: null,
    } as unknown as EpicStatus;
    const graph = {
      beads: [
        { id: 'bd-1.1', dependencies: [{ id: 'bd-1', dependency_type: 'parent-child' }] },
        {
          id: 'bd-1.2',
          dependencies: [
            { id: 'bd-1', dependency_type: 'parent-child' },
            { id: 'bd-1.1', dependency_type: 'blocks' },
          ],
        },
      ],
    } as unknown as Parameters<typeof buildEpicReport>[1];
    const report = buildEpicReport(
      status,
      graph,
      [
        {
          type: 'attempt_finished',
          bead: 'bd-1.1',
          duration_ms: 1000,
          cost_usd: 0.5,
          agent: 'codex',
          message: 'ok',
        },
        { type: 'gate_finished', bead: 'bd-1.1', gate: 'test', ok: false, exit: 1 },
        { type: 'gate_finished', bead: 'bd-1.1', gate: 'test', ok: true, exit: 0 },
        { type: 'bead_closed', bead: 'bd-1.1', commit: 'abc123' },
        { type: 'attempt_finished', bead: 'bd-1.2', duration_ms: 300, message: 'boom' },
        { type: 'attempt_finished', bead: 'bd-1.2', duration_ms: 400, message: 'boom again' },
        { type: 'attempt_finished', bead: 'bd-other', duration_ms: 99999 },
      ],
      2,
      '2026-11-23T08:00:00.000Z',
    );
    expect(report.beads).toEqual([
      expect.objectContaining({
        id: 'bd-1.1',
        depends_on: [],
        attempts: 1,
        duration_ms: 1000,
        cost_usd: 0.5,
        agent: 'codex',
        commit: 'abc123',
        gates: [{ gate: 'test', ok: true, exit: 0 }],
      }),
      expect.objectContaining({
        id: 'bd-1.2',
        state: 'failed',
        depends_on: ['bd-1.1'],
        attempts: 2,
        duration_ms: 700,
        last_message: 'boom again',
      }),
    ]);
    expect(report.totals).toEqual({ attempts: 3, duration_ms: 1700, cost_usd: 0.5 });
  });
});

describe('jsonForScript', () => {
  it('writes no < at all, so nothing inside can close the script element, and parses back the same', () => {
    const value = { hypothesis: '</script><script>alert(1)</script><!-- \u2028 \u2029' };
    const text = jsonForScript(value);
    expect(text).not.toContain('<');
    expect(text).not.toMatch(/[\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
