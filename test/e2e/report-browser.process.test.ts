// `ralph-loop report` as a person sees it: the built CLI writes the page, a real headless chromium
// opens it from disk, and the views are checked against the known ledger of report-fixture.ts.
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { appendLedgerLine, type LedgerLine } from '../../src/autoresearch/ledger.js';
import { readLoopReport } from '../../src/autoresearch/report-read.js';
import { renderReportHtml, type ReportPage } from '../../src/cli/report-html.js';
import { pageParts } from '../../src/cli/report-page.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { inPage, launchBrowser, screenshot, watchedPage } from '../support/browser.js';
import { assertBuilt, runCli } from '../support/cli.js';
import { makeRepo } from '../support/runner-repo.js';
import {
  createReportFixture,
  INJECTION,
  REPORT_EPIC,
  ROWS,
  TOTAL_COST,
  type ReportFixture,
} from '../support/report-fixture.js';

beforeAll(assertBuilt);

const SERIES = z.array(z.array(z.number().nullable()));
/** The page's data element as the CLI wrote it: plain JSON, or gzipped in base64 past 64 KiB of JSON. */
const PLAIN_DATA = '<script type="application/json" id="forge-data">';
const PACKED_DATA =
  /<script type="application\/octet-stream" id="forge-data" data-encoding="gzip\+base64">([^<]*)<\/script>/;
const PACKED_OLDER =
  /<script type="application\/octet-stream" id="forge-older" data-encoding="gzip\+base64">([^<]*)<\/script>/;
/** What the tests compare of a page's data: the loop's totals and iterations, the rest as it is. */
const REPORT_JSON = z.looseObject({
  report: z.looseObject({
    generated_at: z.string(),
    totals: z.looseObject({
      iterations: z.number(),
      kept: z.number(),
      reverted: z.number(),
      crashed: z.number(),
      guard_failed: z.number(),
      tampered: z.number(),
    }),
    iterations: z.array(z.looseObject({ iter: z.number(), decision: z.string() })),
  }),
});
/** The head a page draws from (report-page.ts): the report without its iterations, then theirs. */
const PAGE_HEAD = z.looseObject({
  report: z.looseObject({
    generated_at: z.string(),
    latest: z.array(z.looseObject({ iter: z.number(), decision: z.string() })),
    columns: z.looseObject({ iter: z.array(z.number()), decision: z.array(z.string()) }),
  }),
});
/**
 * Run before the page's script: what the page holds each time #app is marked data-rendered (seen in the
 * microtask after, so a mark set before the views are drawn is caught however fast they follow).
 */
const WATCH_DRAWINGS = `window.__drawings = [];
new MutationObserver(function (records) {
  records.forEach(function () {
    window.__drawings.push({ charts: document.querySelectorAll('[data-chart] canvas').length,
      rows: document.querySelectorAll('tr[data-iter]').length });
  });
}).observe(document, { subtree: true, attributeFilter: ['data-rendered'] });`;
const DRAWINGS = z.array(z.object({ charts: z.number(), rows: z.number() }));

/** The fixture's ledger continued up to `until` iterations, each decided by `decide`. */
async function appendIterations(
  fixture: ReportFixture,
  until: number,
  decide: (iter: number) => LedgerLine['decision'],
): Promise<void> {
  const ledger = join(fixture.workspace, 'research-log.jsonl');
  let best = 18;
  for (let iter = ROWS.length; iter < until; iter += 1) {
    const decision = decide(iter);
    const score = decision === 'keep' ? best + 1 : decision === 'revert' ? best - 1 : null;
    const before = best;
    if (decision === 'keep') best += 1;
    await appendLedgerLine(diskLoopFiles(), ledger, {
      iter,
      ts: '2026-11-22T09:00:00.000Z',
      score_before: before,
      score_after: score,
      best_before: before,
      best_after: best,
      delta: score === null ? null : score - before,
      decision,
      base_sha: null,
      sha: null,
      findings_count: 0,
      hypothesis: `try ${iter}`,
      cost_usd: 0,
      duration_ms: 1,
    });
  }
}

/** The fixture's loop continued to `until` iterations, its report written by the CLI to long.html. */
async function longReport(
  until: number,
  decide: (iter: number) => LedgerLine['decision'] = () => 'revert',
): Promise<{ fixture: ReportFixture; out: string }> {
  const fixture = await createReportFixture();
  await appendIterations(fixture, until, decide);
  const out = join(fixture.dir, 'long.html');
  const written = await runCli('ralph-loop', ['report', REPORT_EPIC, '-o', out], { cwd: fixture.dir });
  expect(written.exitCode, written.stderr).toBe(0);
  return { fixture, out };
}

describe('ralph-loop report of a loop, in chromium', () => {
  it('draws every iteration with its decision, the best-kept line and the target, and the totals', async () => {
    const fixture = await createReportFixture();
    const out = join(fixture.dir, 'night.html');
    const written = await runCli('ralph-loop', ['report', REPORT_EPIC, '-o', 'night.html'], {
      cwd: fixture.dir,
    });
    expect(written.exitCode, written.stderr).toBe(0);
    expect(written.stderr).toContain(out);
    const html = await readFile(out, 'utf8');
    expect(html).toContain('<!doctype html>');
    // A small report keeps its data as JSON a person can read in the page's source.
    expect(html).toContain(PLAIN_DATA);
    expect(html).not.toMatch(PACKED_DATA);

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
    // uPlot loaded beside a stand-in for Intl (report-client.ts): its numbers read as Intl's en-US would
    // write them, and the page has the browser's own Intl again.
    expect(
      await inPage(
        page,
        '[1234567.891, 1000, 999, -0.5, -1234.5, 0.1 + 0.2, 2.0004, 0].map((n) => uPlot.fmtNum(n))',
        z.array(z.string()),
      ),
    ).toEqual(['1,234,567.891', '1,000', '999', '-0.5', '-1,234.5', '0.3', '2', '0']);
    expect(
      await inPage(
        page,
        "String(Intl.NumberFormat).includes('[native code]') && !('forgeIntl' in window)",
        z.boolean(),
      ),
    ).toBe(true);

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
    const { out } = await longReport(600);
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
    // The older rows are read from the page when asked for, then the note goes.
    await page.waitForSelector('[data-testid="more-rows"]', { state: 'detached' });
    expect(await iters()).toEqual(Array.from({ length: 600 }, (_, k) => k));
    expect(errors).toEqual([]);
  });
});

/**
 * Each decision's markers on the score chart at `width` px: how many points and distinct pixels it
 * has, how many markers the chart draws and on how many pixels, and whether every pixel with a point
 * gets one.
 */
const MARKERS = (width: number) => `new Promise((resolve) => {
  const u = forgeReport.charts.score;
  u.setSize({ width: ${width}, height: 200 });
  requestAnimationFrame(() => resolve(u.series.flatMap((s, k) => {
    if (!['baseline', 'kept', 'reverted', 'crash', 'tamper', 'guard failed'].includes(s.label)) return [];
    const cell = (i) => Math.round(u.valToPos(u.data[0][i], 'x', true)) + ',' +
      Math.round(u.valToPos(u.data[k][i], s.scale, true));
    const points = u.data[k].flatMap((y, i) => (y === null ? [] : [i]));
    const all = points.map(cell);
    // What uPlot draws: the indices the series' filter picks, or every point when it has none.
    const drawn = (s.points.filter(u, k, true, null) ?? points).map(cell);
    const pixels = new Set(drawn);
    return [{ label: s.label, points: all.length, pixels: new Set(all).size, drawn: drawn.length,
      drawnPixels: pixels.size, everyPixel: all.every((c) => pixels.has(c)) }];
  })));
})`;
const MARKER_COUNTS = z.array(
  z.object({
    label: z.string(),
    points: z.number(),
    pixels: z.number(),
    drawn: z.number(),
    drawnPixels: z.number(),
    everyPixel: z.boolean(),
  }),
);

describe('the score chart of a long loop', () => {
  it('draws one marker on each pixel that has a point, and none twice, however wide it is', async () => {
    const { out } = await longReport(600, (iter) =>
      iter % 7 === 0 ? 'keep' : iter % 5 === 0 ? 'crash' : 'revert',
    );
    const browser = await launchBrowser();
    const { page, errors } = await watchedPage(browser);
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('#app[data-rendered]');
    for (const width of [1000, 200]) {
      const markers = await inPage(page, MARKERS(width), MARKER_COUNTS);
      expect(markers.map((m) => m.label)).toEqual(expect.arrayContaining(['kept', 'reverted', 'crash']));
      for (const m of markers) {
        expect(m, `${m.label} at ${width} px`).toEqual({
          ...m,
          drawn: m.pixels,
          drawnPixels: m.pixels,
          everyPixel: true,
        });
      }
      const reverted = markers.find((m) => m.label === 'reverted');
      // 600 iterations on 200 px: far fewer markers than points; on 1,000 px most have a pixel of their own.
      if (width === 200) expect(reverted?.drawn).toBeLessThan((reverted?.points ?? 0) / 2);
    }
    expect(errors).toEqual([]);
  });
});

describe('a long loop, its data compressed in the page', () => {
  it('draws every view from the compressed data, with the counts and data of --json', async () => {
    const decisions = ['revert', 'keep', 'crash', 'revert', 'guard_failed', 'tamper'] as const;
    const { fixture, out } = await longReport(400, (iter) => decisions[iter % decisions.length]!);
    const json = await runCli('ralph-loop', ['report', REPORT_EPIC, '--json'], { cwd: fixture.dir });
    expect(json.exitCode, json.stderr).toBe(0);
    const expected = REPORT_JSON.parse(JSON.parse(json.stdout));
    const html = await readFile(out, 'utf8');
    expect(html).toMatch(PACKED_DATA);
    expect(html).not.toContain(PLAIN_DATA);

    const browser = await launchBrowser();
    const { page, errors } = await watchedPage(browser);
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.addInitScript(WATCH_DRAWINGS);
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('#app[data-rendered]');
    expect(requests).toEqual([pathToFileURL(out).href]);
    // Marked drawn once, when the charts and the table were there (the data is decoded first).
    expect(await inPage(page, 'window.__drawings', DRAWINGS)).toEqual([{ charts: 3, rows: 100 }]);

    // The page holds what --json prints (read a moment apart: only the time of reading differs): all of
    // it but the rows before the newest 100, and every iteration's figures for the charts.
    const shown = PAGE_HEAD.parse(await inPage(page, 'forgeReport.page', z.unknown()));
    const { latest, columns, ...rest } = shown.report;
    const { iterations, ...expectedRest } = expected.report;
    expect({ ...shown, report: { ...rest, generated_at: '' } }).toEqual({
      ...expected,
      report: { ...expectedRest, generated_at: '' },
    });
    expect(latest).toEqual(iterations.slice(-100));
    expect(columns.iter).toEqual(iterations.map((i) => i.iter));
    expect(columns.decision).toEqual(iterations.map((i) => i.decision));
    const { totals } = expected.report;
    const card = (id: string) => page.textContent(`[data-testid="${id}"]`);
    expect(await card('iterations')).toBe(String(totals.iterations));
    expect(await card('kept')).toBe(String(totals.kept));
    expect(await card('reverted')).toBe(String(totals.reverted));
    expect(await card('crashed')).toBe(String(totals.crashed));
    expect(await card('guard_failed')).toBe(String(totals.guard_failed));
    expect(await card('tampered')).toBe(String(totals.tampered));
    expect(await card('retrospective')).toContain('values above 15 help');

    // Each decision's series has a point for exactly its iterations.
    const chart = await inPage(
      page,
      '({ labels: forgeReport.charts.score.series.map((s) => s.label), data: forgeReport.charts.score.data })',
      z.object({ labels: z.array(z.string()), data: SERIES }),
    );
    expect(chart.data[0]).toEqual(iterations.map((i) => i.iter));
    const label = { keep: 'kept', revert: 'reverted', crash: 'crash', guard_failed: 'guard failed' };
    for (const [decision, name] of Object.entries(label)) {
      const points = chart.data[chart.labels.indexOf(name)]!.filter((value) => value !== null).length;
      expect(points, name).toBe(iterations.filter((i) => i.decision === decision).length);
    }
    for (const name of ['score', 'time', 'cost'])
      expect(await page.$(`[data-chart="${name}"] canvas`)).not.toBeNull();
    const rows = await inPage(
      page,
      "[...document.querySelectorAll('tr[data-iter]')].map((row) => row.getAttribute('data-decision'))",
      z.array(z.string()),
    );
    expect(rows).toEqual(iterations.slice(-100).map((i) => i.decision));
    expect(await page.textContent('[data-testid="more-rows"]')).toContain('of 400 iterations');
    // The older rows, from their own compressed element, each as --json has it.
    await page.click('[data-testid="more-rows"] button');
    await page.waitForSelector('[data-testid="more-rows"]', { state: 'detached' });
    const all = await inPage(
      page,
      "[...document.querySelectorAll('tr[data-iter]')].map((row) => [Number(row.getAttribute('data-iter')), row.getAttribute('data-decision')])",
      z.array(z.tuple([z.number(), z.string()])),
    );
    expect(all).toEqual(iterations.map((i) => [i.iter, i.decision]));
    expect(errors).toEqual([]);
  });

  it('says what went wrong and where the same data is, never a blank page, when its data is cut short', async () => {
    const { fixture, out } = await longReport(400);
    const html = await readFile(out, 'utf8');
    const packed = PACKED_DATA.exec(html)![1]!;
    const browser = await launchBrowser();
    // Cut at a multiple of 4 the base64 still decodes and the gzip stream ends early; one more
    // character and the base64 itself is broken.
    const half = packed.length / 2 - ((packed.length / 2) % 4);
    for (const cut of [half, half + 1]) {
      const damaged = join(fixture.dir, `damaged-${cut}.html`);
      await writeFile(damaged, html.replace(packed, packed.slice(0, cut)));
      const { page, errors } = await watchedPage(browser);
      await page.goto(pathToFileURL(damaged).href);
      await expectUnreadable(page, /could not be read; the file may be cut short or damaged/);
      expect(errors).toEqual([]);
    }
  });

  it('keeps its views and says so when only the older rows are damaged, asked for', async () => {
    const { fixture, out } = await longReport(400);
    const html = await readFile(out, 'utf8');
    const older = PACKED_OLDER.exec(html)![1]!;
    const damaged = join(fixture.dir, 'damaged-older.html');
    await writeFile(
      damaged,
      html.replace(older, older.slice(0, older.length / 2 - ((older.length / 2) % 4))),
    );
    const browser = await launchBrowser();
    const { page, errors } = await watchedPage(browser);
    await page.goto(pathToFileURL(damaged).href);
    await page.waitForSelector('#app[data-rendered]');
    await page.click('[data-testid="more-rows"] button');
    await page
      .locator('[data-testid="more-rows"]', { hasText: 'The older rows could not be read' })
      .waitFor();
    // The newest rows and the charts stay; the button can be tried again.
    expect(await page.$$('tr[data-iter]')).toHaveLength(100);
    expect(await page.$$('[data-chart] canvas')).toHaveLength(3);
    expect(await page.isEnabled('[data-testid="more-rows"] button')).toBe(true);
    expect(errors).toEqual([]);
  });

  it('says so when the browser cannot decompress', async () => {
    const { out } = await longReport(400);
    const browser = await launchBrowser();
    const { page, errors } = await watchedPage(browser);
    await page.addInitScript('delete window.DecompressionStream');
    await page.goto(pathToFileURL(out).href);
    await expectUnreadable(page, /cannot decompress it \(it has no DecompressionStream/);
    expect(errors).toEqual([]);
  });
});

/** The page shows why it has no views, how to get the data instead, and no view at all. */
async function expectUnreadable(page: Page, why: RegExp): Promise<void> {
  await page.waitForSelector('[data-testid="unreadable"]');
  const text = await page.textContent('#app');
  expect(text).toContain('This report could not be shown: ');
  expect(text).toMatch(why);
  expect(text).toContain(`ralph-loop report ${REPORT_EPIC} --json prints the same data as JSON.`);
  expect(await page.$('#app[data-rendered]')).toBeNull();
  expect(await page.$$('[data-chart], table, [data-testid="iterations"]')).toHaveLength(0);
}

/** A runner at work on a doer bead, as the dashboard's JSON says it. */
const LIVE = {
  run_id: 'run-1',
  pid: 4242,
  bead: 'bd-rpt.7',
  title: 'doer-7: value',
  role: 'doer',
  agent: 'scripted',
  attempt: 1,
  bead_elapsed_ms: 5_000,
};

describe('the report page on the dashboard', () => {
  it('keeps its drawing when a poll brings the data it shows, redraws when one brings news, and reads older rows from the whole report', async () => {
    const fixture = await createReportFixture();
    const read = () =>
      readLoopReport(fixture.dir, REPORT_EPIC, {
        now: () => Date.parse('2026-11-23T08:00:00Z'),
        host: 'h',
        isProcessAlive: () => false,
        files: diskLoopFiles(),
      });
    // Small, with the agent's `</script>` in it, then long enough for its head alone to be compressed
    // (a dashboard's page carries no older rows).
    const small: ReportPage = { report: await read(), live: null };
    await appendIterations(fixture, 2000, () => 'revert');
    const longRead = await read();
    const long: ReportPage = { report: longRead, live: null };
    // The whole report a moment later: one iteration more than the page has drawn.
    const newest = longRead.iterations.at(-1)!;
    const later: ReportPage = {
      report: { ...longRead, iterations: [...longRead.iterations, { ...newest, iter: newest.iter + 1 }] },
      live: null,
    };
    const browser = await launchBrowser();
    for (const shown of [small, long]) {
      const html = await renderReportHtml(shown, { api: '/api', full: '/full', intervalMs: 100 });
      expect(html.includes(PLAIN_DATA)).toBe(shown === small);
      // The page polls the head it draws from (report-page.ts), not the whole report.
      let answer = JSON.stringify(pageParts(shown).head);
      let polls = 0;
      const server = createServer((request, response) => {
        if (request.url === '/api') polls += 1;
        const json = request.url === '/api' || request.url === '/full';
        response.writeHead(200, { 'Content-Type': json ? 'application/json' : 'text/html' });
        response.end(
          request.url === '/api' ? answer : request.url === '/full' ? JSON.stringify(later) : html,
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const { port } = server.address() as AddressInfo;
      const { page, errors } = await watchedPage(browser);
      await page.addInitScript(WATCH_DRAWINGS);
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForSelector('#app[data-rendered]');
      // Two polls asked: the answer to the first has been handled.
      await expect.poll(() => polls).toBeGreaterThanOrEqual(2);
      expect(await inPage(page, 'window.__drawings', DRAWINGS)).toHaveLength(1);
      const head = pageParts(shown).head;
      const rowCount = async () => (await page.$$('tr[data-iter]')).length;
      if (shown === long) {
        await page.click('[data-testid="more-rows"] button');
        await page.waitForSelector('[data-testid="more-rows"]', { state: 'detached' });
        expect(await rowCount()).toBe(2000);
      }
      // A poll that brings only a live bead and a later time of reading: the live box alone is drawn
      // again; the views, and the rows Show all brought, stay.
      answer = JSON.stringify({
        ...head,
        report: { ...head.report, generated_at: '2026-11-23T09:00:00.000Z' },
        live: { ...LIVE, bead_elapsed_ms: 65_000 },
      });
      await page
        .locator('[data-testid="live"]', { hasText: /doer-7: value · doer on scripted · 1m \d+s/ })
        .waitFor();
      expect(await inPage(page, 'window.__drawings', DRAWINGS)).toHaveLength(1);
      expect(await rowCount()).toBe(shown === long ? 2000 : ROWS.length);
      answer = JSON.stringify({ ...head, report: { ...head.report, retrospective: 'news of the night' } });
      await page.locator('[data-testid="retrospective"]', { hasText: 'news of the night' }).waitFor();
      expect(await inPage(page, 'window.__drawings', DRAWINGS)).toHaveLength(2);
      if (shown === long) {
        // Every row before the newest hundred, from the whole report; none twice, none the page lacks.
        await page.click('[data-testid="more-rows"] button');
        await page.waitForSelector('[data-testid="more-rows"]', { state: 'detached' });
        const iters = await inPage(
          page,
          "[...document.querySelectorAll('tr[data-iter]')].map((row) => Number(row.getAttribute('data-iter')))",
          z.array(z.number()),
        );
        expect(iters).toEqual(Array.from({ length: 2000 }, (_, k) => k));
      }
      expect(errors).toEqual([]);
    }
  });
});
