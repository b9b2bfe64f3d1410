// A loop workspace with a known ledger (one iteration of each decision, an agent-written hypothesis
// that tries to break out of the page), run logs, judge findings, terminal signal and retrospective:
// what the report tests check the page and its data against.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { appendLedgerLine, type LedgerLine } from '../../src/autoresearch/ledger.js';
import type { LoopReport } from '../../src/autoresearch/report-model.js';
import { readLoopReport } from '../../src/autoresearch/report-read.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

export const REPORT_EPIC = 'bd-rpt';
export const INJECTION = '</script><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

type Row = Pick<LedgerLine, 'iter' | 'decision' | 'score_after' | 'best_after' | 'hypothesis' | 'cost_usd'> &
  Partial<LedgerLine>;

/** The ledger as recorded: iteration, decision, score, the best kept after it, cost. */
export const ROWS: Row[] = [
  { iter: 0, decision: 'baseline', score_after: 10, best_after: 10, hypothesis: 'baseline', cost_usd: 0 },
  {
    iter: 1,
    decision: 'keep',
    score_after: 15,
    best_after: 15,
    hypothesis: 'raise it to 15',
    cost_usd: 0.5,
    findings_count: 2,
    sha: 'a1b2c3d4e5f60718',
  },
  {
    iter: 2,
    decision: 'revert',
    score_after: 12,
    best_after: 15,
    hypothesis: 'try 12',
    cost_usd: 0.25,
    reason: '12 does not beat 15',
  },
  {
    iter: 3,
    decision: 'crash',
    score_after: null,
    best_after: 15,
    hypothesis: 'divide by zero',
    cost_usd: 0.25,
    reason: 'the metric command crashed',
  },
  {
    iter: 4,
    decision: 'guard_failed',
    score_after: null,
    best_after: 15,
    hypothesis: 'skip the tests',
    cost_usd: 0.5,
    reason: 'guard tests failed (exit 1)',
  },
  {
    iter: 5,
    decision: 'tamper',
    score_after: null,
    best_after: 15,
    hypothesis: 'edit the metric',
    cost_usd: 0.5,
    reason: 'the doer changed metric/score.mjs',
  },
  {
    iter: 6,
    decision: 'keep',
    score_after: 18,
    best_after: 18,
    hypothesis: INJECTION,
    cost_usd: 1,
    sha: 'ffeeddccbbaa0099',
  },
];
export const TOTAL_COST = 3;

export interface ReportFixture {
  dir: string;
  workspace: string;
}

export async function createReportFixture(): Promise<ReportFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-report-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const workspace = join(dir, '.autoresearch');
  await mkdir(join(workspace, 'runs'), { recursive: true });
  await mkdir(join(dir, '.forge'), { recursive: true });
  await writeFile(
    join(dir, '.forge', 'loops.json'),
    JSON.stringify({ [REPORT_EPIC]: { workspace: '.autoresearch', subject: 'value <b>bold?</b>' } }),
  );
  await writeFile(
    join(workspace, 'config.json'),
    JSON.stringify({
      subject: 'value <b>bold?</b>',
      epic_id: REPORT_EPIC,
      target: 20,
      metric: {
        type: 'hard',
        command: 'node metric/score.mjs',
        direction: 'maximize',
        score: { from: 'json', path: 'value' },
      },
      scope: { doer_paths: ['src/'] },
    }),
  );
  let best = 10;
  for (const row of ROWS) {
    const before = best;
    best = row.best_after ?? best;
    await appendLedgerLine(diskLoopFiles(), join(workspace, 'research-log.jsonl'), {
      ts: `2026-11-22T0${row.iter}:00:00.000Z`,
      score_before: before,
      best_before: before,
      delta: row.score_after === null || row.iter === 0 ? null : row.score_after - before,
      base_sha: null,
      sha: null,
      findings_count: 0,
      duration_ms: 60_000,
      ...row,
    });
  }
  await writeFile(
    join(workspace, 'judge-output-1.json'),
    JSON.stringify({ score: 15, findings: ['the value is larger', { message: 'no test covers it' }] }),
  );
  // Two iterations' beads in one run log: doer 2 min + judge 1 min on iteration 1, doer 3 min on 2.
  const attempt = (title: string, role: string, ms: number, cost: number) =>
    JSON.stringify({
      type: 'attempt_finished',
      ts: '2026-11-22T01:00:00.000Z',
      epic: REPORT_EPIC,
      bead: `${REPORT_EPIC}.${title}`,
      title: `${title}: value`,
      role,
      agent: 'scripted',
      attempt: 1,
      outcome: 'ok',
      duration_ms: ms,
      cost_usd: cost,
      message: 'ok',
      transcript: 'x',
    });
  await writeFile(
    join(workspace, 'runs', '2026-11-22T00-00-00-000Z-1.jsonl'),
    [
      attempt('doer-1', 'doer', 120_000, 0.4),
      attempt('judge-1', 'judge', 60_000, 0.1),
      attempt('doer-2', 'doer', 180_000, 0.25),
      '',
    ].join('\n'),
  );
  await writeFile(
    join(workspace, 'terminal-signal.json'),
    JSON.stringify({ reason: 'iteration_cap', iter: 6, final_score: 18, best_score: 18 }),
  );
  await writeFile(join(workspace, 'retrospective.md'), '# What we learned\n<i>values above 15 help</i>\n');
  return { dir, workspace };
}

/** A fresh fixture's loop read as `ralph-loop report` reads it, at a fixed time, with no runner live. */
export async function readFixtureReport(): Promise<LoopReport> {
  const fixture = await createReportFixture();
  return readLoopReport(fixture.dir, REPORT_EPIC, {
    now: () => Date.parse('2026-11-23T08:00:00Z'),
    host: 'h',
    isProcessAlive: () => false,
    files: diskLoopFiles(),
  });
}

/** The report's iterations repeated to `count`, numbered 0…count-1; `hypothesis` writes each one's. */
export function lengthenedReport(
  report: LoopReport,
  count: number,
  hypothesis?: (iter: number) => string,
): LoopReport {
  const iterations = Array.from({ length: count }, (_, k) => {
    const iteration = { ...report.iterations[k % report.iterations.length]!, iter: k };
    return hypothesis === undefined ? iteration : { ...iteration, hypothesis: hypothesis(k) };
  });
  return { ...report, iterations };
}
