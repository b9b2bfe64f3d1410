// `ralph-loop report` as a person sees it: the built CLI writes the page, a real headless chromium
// opens it from disk, and the views are checked against the known ledger of report-fixture.ts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { appendLedgerLine } from '../../src/autoresearch/ledger.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { inPage, launchBrowser, screenshot, watchedPage } from '../support/browser.js';
import { assertBuilt, runCli } from '../support/cli.js';
import { makeRepo } from '../support/runner-repo.js';
import { createReportFixture, INJECTION, REPORT_EPIC, ROWS, TOTAL_COST } from '../support/report-fixture.js';

beforeAll(assertBuilt);

const SERIES = z.array(z.array(z.number().nullable()));

describe('ralph-loop report of a loop, in chromium', () => {
  it('draws every iteration with its decision, the best-kept line and the target, and the totals', async () => {
    const fixture = await createReportFixture();
    const out = join(fixture.dir, 'night.html');
    const written = await runCli('ralph-loop', ['report', REPORT_EPIC, '-o', 'night.html'], {
      cwd: fixture.dir,
    });
    expect(written.exitCode, written.stderr).toBe(0);
    expect(written.stderr).toContain(out);
    expect(await readFile(out, 'utf8')).toContain('<!doctype html>');

    const browser = await launchBrowser();
    const { page, errors } = await watchedPage(browser);
    // Self-contained: the page asks for nothing but itself.
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('[data-chart="score"] canvas');
    expect(requests).toEqual([pathToFileURL(out).href]);

    // The score chart holds exactly the recorded points, each in its decision's series.
    const chart = await inPage(
      page,
      '({ labels: forgeReport.charts.score.series.map((s) => s.label), data: forgeReport.charts.score.data })',
      z.object({ labels: z.array(z.string()), data: SERIES }),
    );
    expect(chart.labels).toEqual([
      'iteration',
      'baseline',
      'kept',
      'reverted',
      'crash',
      'tamper',
      'guard failed',
      'best kept',
      'target',
    ]);
    expect(chart.data[0]).toEqual(ROWS.map((row) => row.iter));
    const series = (label: string) => chart.data[chart.labels.indexOf(label)];
    expect(series('kept')).toEqual([null, 15, null, null, null, null, 18]);
    expect(series('reverted')).toEqual([null, null, 12, null, null, null, null]);
    // No score: drawn at the bar the iteration failed to beat.
    expect(series('crash')).toEqual([null, null, null, 15, null, null, null]);
    expect(series('guard failed')).toEqual([null, null, null, null, 15, null, null]);
    expect(series('tamper')).toEqual([null, null, null, null, null, 15, null]);
    expect(series('best kept')).toEqual(ROWS.map((row) => row.best_after));
    expect(series('target')).toEqual(ROWS.map(() => 20));

    const decisions = await inPage(
      page,
      "[...document.querySelectorAll('tr[data-iter]')].map((row) => row.getAttribute('data-decision'))",
      z.array(z.string()),
    );
    expect(decisions).toEqual(ROWS.map((row) => row.decision));
    const card = (id: string) => page.textContent(`[data-testid="${id}"]`);
    expect(await card('iterations')).toBe('6');
    expect(await card('kept')).toBe('2');
    expect(await card('crashed')).toBe('1');
    expect(await card('guard_failed')).toBe('1');
    expect(await card('tampered')).toBe('1');
    expect(await card('keep_rate')).toBe('33%');
    expect(await card('cost')).toBe(`$${TOTAL_COST.toFixed(2)}`);
    expect(await card('cost_per_keep')).toBe(`$${(TOTAL_COST / 2).toFixed(2)}`);
    expect(await card('best')).toBe('10 → 18');
    expect(await card('terminal')).toContain('iteration_cap');
    expect(await card('retrospective')).toContain('<i>values above 15 help</i>');
    // Time by role per iteration, from the run log: doer 2 and 3 minutes, judge 1.
    const time = await inPage(page, 'forgeReport.charts.time.data', SERIES);
    expect(time[1]).toEqual([null, 120, 180, null, null, null, null]);
    expect(time[2]).toEqual([null, 60, null, null, null, null, null]);
    expect(await page.textContent('tr[data-iter="1"]')).toContain('no test covers it');

    // The agent-written hypothesis is text on the page, never markup or script.
    expect(await page.textContent('tr[data-iter="6"] .hypothesis')).toBe(INJECTION);
    expect(await inPage(page, 'window.__pwned', z.undefined())).toBeUndefined();
    expect(await page.$$('img')).toHaveLength(0);
    expect(await page.title()).toBe('value <b>bold?</b> · Forge report');
    await screenshot(page, 'report-loop-desktop');

    // A phone: nothing wider than the screen (the table scrolls inside its own box).
    await page.setViewportSize({ width: 390, height: 844 });
    // Polled from here: playwright's waitForFunction evaluates a string predicate through eval, which
    // the page's Content-Security-Policy refuses whenever the first check is not already true.
    await expect
      .poll(() =>
        inPage(
          page,
          'document.querySelector(\'[data-chart="score"] canvas\').getBoundingClientRect().width',
          z.number(),
        ),
      )
      .toBeLessThanOrEqual(390);
    expect(await inPage(page, 'document.documentElement.scrollWidth', z.number())).toBeLessThanOrEqual(390);
    await screenshot(page, 'report-loop-phone');
    expect(errors).toEqual([]);
  });
});

describe('ralph-loop report of a plain epic, in chromium', () => {
  it('the run leaves a page of every bead with its state, attempts, what it waits for, even when a bead failed', async () => {
    const repo = await makeRepo('embedded');
    const { epic, ids } = await repo.epic([
      'write the parser',
      '<img src=x onerror="window.__pwned=1">',
      'ship',
    ]);
    // The parser waits for the second bead; the third fails both its attempts.
    expect((await repo.beads(['dep', 'add', ids[0]!, ids[1]!])).exitCode).toBe(0);
    await repo.script({ [ids[2]!]: [[{ exit: 1 }], [{ exit: 1 }]] });
    const run = await repo.ralph([
      epic,
      '--agent',
      repo.agent,
      '--max-attempts',
      '2',
      '--backoff',
      '0',
      '--report',
    ]);
    expect(run.exitCode, run.stderr).toBe(5);
    const report = join(repo.dir, '.forge', 'epics', epic, 'report.html');
    expect(run.stderr).toContain(`Report: ${report}`);

    const browser = await launchBrowser();
    const { page, errors } = await watchedPage(browser, { width: 390, height: 844 });
    await page.goto(pathToFileURL(report).href);
    await page.waitForSelector('[data-chart="beads"] canvas');
    const rows = await inPage(
      page,
      "[...document.querySelectorAll('tr[data-bead]')].map((row) => [row.getAttribute('data-bead'), row.getAttribute('data-state'), row.children[2].textContent, row.children[3].textContent])",
      z.array(z.tuple([z.string(), z.string(), z.string(), z.string()])),
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        [ids[0], 'done', ids[1], '1'],
        [ids[1], 'done', '', '1'],
        [ids[2], 'failed', '', '2'],
      ]),
    );
    expect(await page.textContent('[data-testid="failed"]')).toBe('1');
    expect(await page.textContent('[data-testid="attempts"]')).toBe('4');
    expect(await page.textContent(`tr[data-bead="${ids[1]!}"]`)).toContain(
      '<img src=x onerror="window.__pwned=1">',
    );
    expect(await inPage(page, 'window.__pwned', z.undefined())).toBeUndefined();
    await screenshot(page, 'report-epic-phone');
    expect(errors).toEqual([]);
  });
});

describe('a long loop in the report', () => {
  it('lists its last 100 iterations and every one after Show all, in ledger order', async () => {
    const fixture = await createReportFixture();
    const ledger = join(fixture.workspace, 'research-log.jsonl');
    for (let iter = ROWS.length; iter < 600; iter += 1) {
      await appendLedgerLine(diskLoopFiles(), ledger, {
        iter,
        ts: '2026-11-22T09:00:00.000Z',
        score_before: 18,
        score_after: 17,
        best_before: 18,
        best_after: 18,
        delta: -1,
        decision: 'revert',
        base_sha: null,
        sha: null,
        findings_count: 0,
        hypothesis: `try ${iter}`,
        cost_usd: 0,
        duration_ms: 1,
      });
    }
    const out = join(fixture.dir, 'long.html');
    const written = await runCli('ralph-loop', ['report', REPORT_EPIC, '-o', out], { cwd: fixture.dir });
    expect(written.exitCode, written.stderr).toBe(0);
    const browser = await launchBrowser();
    const { page, errors } = await watchedPage(browser);
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('[data-testid="more-rows"]');
    const iters = () =>
      inPage(
        page,
        "[...document.querySelectorAll('tr[data-iter]')].map((row) => Number(row.getAttribute('data-iter')))",
        z.array(z.number()),
      );
    expect(await iters()).toEqual(Array.from({ length: 100 }, (_, k) => 500 + k));
    // The chart draws every one of them all along.
    expect((await inPage(page, 'forgeReport.charts.score.data[0]', z.array(z.number()))).length).toBe(600);
    await page.click('[data-testid="more-rows"] button');
    expect(await iters()).toEqual(Array.from({ length: 600 }, (_, k) => k));
    expect(await page.$('[data-testid="more-rows"]')).toBeNull();
    expect(errors).toEqual([]);
  });
});
