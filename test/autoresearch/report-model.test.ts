// The report's data without a browser: the loop report read from a known workspace, the role shares
// folded from run logs, a plain epic's bead table, and the JSON that sits inside the page's script tag.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLoopReport } from '../../src/autoresearch/report-read.js';
import { foldRoleShares, type RoleShare } from '../../src/autoresearch/report-model.js';
import { diskLoopFiles, type LogQuery, type LoopFiles } from '../../src/infra/loop-files.js';
import { buildEpicReport } from '../../src/cli/report-epic.js';
import type { EpicStatus } from '../../src/cli/epic-status.js';
import { jsonForScript } from '../../src/cli/report-html.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';
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

describe('the run logs a loop report reads', () => {
  it('takes each attempt’s end among whatever else a log holds, from disk and from memory alike', async () => {
    const fixture = await createReportFixture();
    const runs = join(fixture.workspace, 'runs');
    const ended = (iter: number, role: string, ms: number) => ({
      type: 'attempt_finished',
      title: `${role}-${iter}: value`,
      role,
      duration_ms: ms,
      cost_usd: 0.01,
    });
    await writeFile(
      join(runs, '2026-11-22T02-00-00-000Z-2.jsonl'),
      [
        JSON.stringify({ type: 'activity', bead: 'b', message: 'x'.repeat(3 * 1024 * 1024) }),
        JSON.stringify({ type: 'activity', bead: 'b', message: 'says "attempt_finished" in passing' }),
        '{"type":"attempt_finished", torn',
        // Written by hand, spaced: still an attempt's end.
        JSON.stringify(ended(5, 'doer', 7_000), null, 1).replace(/\n/g, ''),
        JSON.stringify(ended(6, 'judge', 3_000)),
        '',
      ].join('\n'),
    );
    const fromDisk = await readLoopReport(fixture.dir, REPORT_EPIC, { ...ports, files: diskLoopFiles() });
    expect(fromDisk.iterations[5]!.roles).toEqual({ doer: { ms: 7_000, cost_usd: 0.01 } });
    expect(fromDisk.iterations[6]!.roles).toEqual({ judge: { ms: 3_000, cost_usd: 0.01 } });
    // The fixture's own log still counts beside it.
    expect(fromDisk.iterations[1]!.roles.doer).toEqual({ ms: 120_000, cost_usd: 0.4 });

    const memory = createMemoryLoopFiles();
    for (const name of (await readdir(runs)).sort()) {
      await memory.writeText(join(runs, name), await readFile(join(runs, name), 'utf8'));
    }
    const files = diskLoopFiles();
    const mixed = { ...files, list: memory.list, scanLog: memory.scanLog };
    const fromMemory = await readLoopReport(fixture.dir, REPORT_EPIC, { ...ports, files: mixed });
    expect(fromMemory.iterations.map((i) => i.roles)).toEqual(fromDisk.iterations.map((i) => i.roles));
  });

  it('scans each log once for status and the report, with the one query a remembering disk goes on from (the dashboard)', async () => {
    const fixture = await createReportFixture();
    const disk = diskLoopFiles();
    const asked: { path: string; query: LogQuery }[] = [];
    const files: LoopFiles = {
      ...disk,
      scanLog: (path, query) => {
        asked.push({ path, query });
        return disk.scanLog(path, query);
      },
    };
    const report = await readLoopReport(fixture.dir, REPORT_EPIC, { ...ports, files });
    expect(report.iterations[1]!.roles.doer).toEqual({ ms: 120_000, cost_usd: 0.4 });
    const logs = new Set(asked.map((ask) => ask.path));
    expect(logs.size).toBeGreaterThan(0);
    // Each log once: status's times and the report's shares come from the same scan.
    expect(asked).toHaveLength(logs.size);
    expect(new Set(asked.map((ask) => ask.query)).size).toBe(1);
  });
});

describe('foldRoleShares', () => {
  it('adds attempts of a cycle bead to its iteration and role, retries included, and skips other beads', () => {
    const shares = new Map<number, Record<string, RoleShare>>();
    const attempt = (title: string, ms: number, cost?: number | null) =>
      JSON.stringify({
        type: 'attempt_finished',
        ts: '2026-12-06T00:00:00.000Z',
        title,
        role: 'x',
        duration_ms: ms,
        ...(cost === undefined ? {} : { cost_usd: cost }),
        message: 'ok',
      });
    foldRoleShares(shares, [
      attempt('doer-3: value', 1000, 0.1),
      attempt('doer-3: value', 500, 0.05),
      attempt('strategist-3: value', 200, null),
      attempt('retrospective: value', 9000, 1),
      attempt('judge-x: value', 100),
      JSON.stringify({ type: 'bead_closed', title: 'doer-3: value', duration_ms: 77 }),
      // Spaced as Python's json.dumps writes it.
      '{"type": "attempt_finished", "title": "judge-3: value", "duration_ms": 40, "cost_usd": 1.5e-2}',
      // A title in a value is not the event's: its quotes are escaped.
      JSON.stringify({
        type: 'attempt_finished',
        title: 'plain',
        duration_ms: 5,
        message: '"title":"doer-3:',
      }),
      // One still being written.
      attempt('doer-3: value', 300, 0.2).slice(0, -12),
    ]);
    expect([...shares.entries()]).toEqual([
      [
        3,
        {
          doer: { ms: 1500, cost_usd: 0.15 },
          strategist: { ms: 200, cost_usd: 0 },
          judge: { ms: 40, cost_usd: 0.015 },
        },
      ],
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
