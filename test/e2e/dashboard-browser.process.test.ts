// `ralph-loop dashboard` while a scripted-agent loop runs: the page, opened before the run, shows the
// live bead and its agent and then the decided iteration without being reloaded; the run writes its
// report at the end; the server only reads and stops on SIGINT.
import { execa } from 'execa';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { inPage, launchBrowser, screenshot, watchedPage } from '../support/browser.js';
import { assertBuilt, BIN, runCli } from '../support/cli.js';
import { doer, retrospectiveRules, scriptedLoopRepo, stampNext } from '../support/loop-script.js';

beforeAll(assertBuilt);

const VALUE_METRIC = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) }));
`;

/** The dashboard as a process of its own, on a free port; stopped with SIGINT when the test ends. */
async function startDashboard(dir: string, env: Record<string, string>) {
  const child = execa(
    process.execPath,
    [BIN['ralph-loop'], '--store', 'embedded', '--json', 'dashboard', '--port', '0', '--interval', '250'],
    { cwd: dir, env: { NO_COLOR: '1', ...env }, reject: false, stdin: 'ignore' },
  );
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  const lines = createInterface({ input: child.stdout });
  // One JSON document (pretty-printed) on stdout, then the server runs.
  const first = await new Promise<string>((resolve, reject) => {
    let text = '';
    lines.on('line', (line) => {
      text += `${line}\n`;
      if (line === '}') resolve(text);
    });
    child.once('exit', () => reject(new Error('the dashboard exited before printing its address')));
  });
  const { url } = z.object({ url: z.string() }).parse(JSON.parse(first));
  return { child, url };
}

const ITERATION = z.looseObject({ iter: z.number() });
const WHOLE_JSON = z.object({ report: z.looseObject({ iterations: z.array(ITERATION) }) }).loose();
const LOOP_TOTALS = z.looseObject({ time_per_iteration_ms: z.record(z.string(), z.number().nullable()) });
const HEAD_JSON = z
  .object({
    report: z.looseObject({
      latest: z.array(ITERATION),
      columns: z.looseObject({ iter: z.array(z.number()) }),
    }),
  })
  .loose();

describe('ralph-loop dashboard, in chromium', () => {
  it('shows a running loop live: the live bead and its agent, then the new iteration, without a reload', async () => {
    const repo = await scriptedLoopRepo({ 'src/value.txt': '10\n', 'metric/score.mjs': VALUE_METRIC });
    const slowDoer = doer(1, '15');
    // Long enough for the page to see the doer at work (it polls every 250 ms).
    slowDoer.steps.push({ sleep_ms: 2500 } as never);
    await repo.rules([slowDoer, doer(2, '12'), ...retrospectiveRules(repo.dir), stampNext(repo.dir)]);
    const stamped = await repo.forge([
      'loop',
      'value',
      '--program',
      'Make the value large.',
      '--metric-command',
      'node metric/score.mjs',
      '--score',
      'json:value',
      '--direction',
      'maximize',
      '--scope',
      'src/',
      '--max-iterations',
      '2',
      '--agents',
      'doer=scripted,judge=scripted,strategist=scripted',
    ]);
    expect(stamped.exitCode, stamped.stderr).toBe(0);
    const epic = stamped.stdout.trim();

    const dashboard = await startDashboard(repo.dir, repo.env);
    const index = await fetch(dashboard.url);
    expect(await index.text()).toContain(`href="/epic/${epic}"`);
    // Read-only: nothing but GET and HEAD.
    expect((await fetch(`${dashboard.url}api/epic/${epic}`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${dashboard.url}epic/..%2F..%2Fetc`)).status).toBe(404);
    // Its JSON: the whole report, as `ralph-loop report --json` prints it, and the head the page polls
    // (every iteration's figures for the charts, the newest rows; report-page.ts).
    const whole = WHOLE_JSON.parse(await (await fetch(`${dashboard.url}api/epic/${epic}`)).json());
    const head = HEAD_JSON.parse(await (await fetch(`${dashboard.url}api/epic/${epic}/page`)).json());
    expect(whole.report.iterations.length).toBeGreaterThan(0);
    expect(head.report.columns.iter).toEqual(whole.report.iterations.map((i) => i.iter));
    expect(head.report.latest).toEqual(whole.report.iterations.slice(-100));
    expect((await fetch(`${dashboard.url}api/epic/${epic}/other`)).status).toBe(404);
    expect((await fetch(`${dashboard.url}epic/${epic}/page`)).status).toBe(404);

    const browser = await launchBrowser();
    const { page, errors } = await watchedPage(browser);
    await page.goto(`${dashboard.url}epic/${epic}`);
    await page.waitForSelector('tr[data-iter="0"]');
    expect(await page.$('tr[data-iter="1"]')).toBeNull();
    // Survives only while the page is not reloaded.
    await page.evaluate('window.__sameDocument = true');

    const run = runCli('ralph-loop', ['--store', 'embedded', epic, '--agent', 'scripted'], {
      cwd: repo.dir,
      env: repo.env,
      timeoutMs: 120_000,
    });
    // Locators, not a function: the page's Content-Security-Policy forbids evaluating strings.
    await page.locator('[data-testid=live]', { hasText: 'doer on scripted' }).waitFor({ timeout: 30_000 });
    expect(await page.textContent('[data-testid=live]')).toMatch(/doer-1: value · doer on scripted · \d+s/);
    await screenshot(page, 'dashboard-live-bead');
    await page.waitForSelector('tr[data-iter="1"][data-decision="keep"]', { timeout: 60_000 });
    expect(await inPage(page, 'window.__sameDocument', z.literal(true))).toBe(true);
    await screenshot(page, 'dashboard-iteration-appeared');

    const finished = await run;
    expect(finished.exitCode, finished.stderr).toBe(0);
    // The run leaves its report beside the loop's files and says where.
    const report = join(repo.dir, '.autoresearch', 'report.html');
    expect(finished.stderr).toContain(`Report: ${report}`);
    await access(report);
    await page.waitForSelector('[data-testid=terminal]', { timeout: 30_000 });
    expect(await page.textContent('[data-testid=terminal]')).toContain('iteration_cap');
    expect(errors).toEqual([]);
    // The dashboard read the run logs as they grew, each poll going on from the last: its figures are
    // those a fresh read of the finished logs gives.
    const fresh = await runCli('ralph-loop', ['--store', 'embedded', 'report', epic, '--json'], {
      cwd: repo.dir,
      env: repo.env,
    });
    expect(fresh.exitCode, fresh.stderr).toBe(0);
    const byReport = WHOLE_JSON.parse(JSON.parse(fresh.stdout));
    const served = WHOLE_JSON.parse(await (await fetch(`${dashboard.url}api/epic/${epic}`)).json());
    expect(served.report.iterations).toEqual(byReport.report.iterations);
    expect(served.report.totals).toEqual(byReport.report.totals);
    expect(LOOP_TOTALS.parse(served.report.totals).time_per_iteration_ms.doer).toBeGreaterThan(0);

    dashboard.child.kill('SIGINT');
    const stopped = await dashboard.child;
    expect(stopped.exitCode).toBe(0);
    expect(stopped.stderr).toContain('Dashboard stopped.');
  });

  it('refuses an address beyond this machine unless told, and then warns', async () => {
    const repo = await scriptedLoopRepo({ 'a.txt': 'a\n' });
    const refused = await runCli('ralph-loop', ['dashboard', '--host', '0.0.0.0'], {
      cwd: repo.dir,
      env: repo.env,
    });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('not loopback');
    expect(refused.stderr).toContain('--allow-remote');
  });
});
