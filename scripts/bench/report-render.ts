// Figure 9: the morning report of a 10,000-iteration loop with its run logs (41 MB, mostly agent
// activity): `ralph-loop report` writing the page (a process, as a user runs it) plus Debian's chromium
// loading it until every view is drawn.
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Row } from './report.js';
import { ms, verdictAtMost } from './report.js';
import { BIN, cleanEnv } from './support.js';

const run = promisify(execFile);
const EPIC = 'bd-bench';
const BUDGET_MS = 1000;
const DECISIONS = [
  'keep',
  'revert',
  'revert',
  'crash',
  'revert',
  'guard_failed',
  'revert',
  'tamper',
] as const;

export interface ReportRender {
  iterations: number;
  runs: number;
  html_bytes: number;
  generate_ms: number[];
  load_ms: number[];
  total_ms: number[];
  median_total_ms: number;
  /** `ralph-loop status` of the same loop, a process each. */
  status_ms: number[];
  /** The dashboard's poll of the same loop (what its page asks every 1.5 s), after a first one. */
  poll_ms: number[];
}

export async function measureReportRender(options: {
  iterations: number;
  runs: number;
}): Promise<ReportRender | { skipped: string }> {
  const browserPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
  let executable: string | undefined;
  for (const path of browserPath)
    if (
      await stat(path).then(
        () => true,
        () => false,
      )
    )
      executable = path;
  if (executable === undefined) return { skipped: 'n/a (no chromium: apt-get install -y chromium)' };
  const dir = await mkdtemp(join(tmpdir(), 'forge-bench-report-'));
  try {
    await writeLoop(dir, options.iterations);
    // As every other figure's children: nothing inherited (NODE_EXTRA_CA_CERTS alone costs each start).
    const home = join(dir, 'home');
    await mkdir(home);
    const env = cleanEnv(home);
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: executable, args: ['--no-sandbox'] });
    const figures: ReportRender = {
      iterations: options.iterations,
      runs: options.runs,
      html_bytes: 0,
      generate_ms: [],
      load_ms: [],
      total_ms: [],
      median_total_ms: Number.NaN,
      status_ms: [],
      poll_ms: [],
    };
    try {
      for (let round = 0; round < options.runs; round += 1) {
        const out = join(dir, `report-${round}.html`);
        const started = performance.now();
        await run(process.execPath, [BIN.ralphLoop, 'report', EPIC, '-o', out], { cwd: dir, env });
        const generated = performance.now();
        const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
        const loadStart = performance.now();
        await page.goto(pathToFileURL(out).href);
        await page.waitForSelector('#app[data-rendered]');
        const loaded = performance.now();
        await page.close();
        figures.html_bytes = (await stat(out)).size;
        figures.generate_ms.push(generated - started);
        figures.load_ms.push(loaded - loadStart);
        figures.total_ms.push(generated - started + (loaded - loadStart));
      }
    } finally {
      await browser.close();
    }
    for (let round = 0; round < options.runs; round += 1) {
      const started = performance.now();
      await run(process.execPath, [BIN.ralphLoop, 'status', EPIC], { cwd: dir, env });
      figures.status_ms.push(performance.now() - started);
    }
    figures.poll_ms = await dashboardPolls(dir, env, options.runs);
    const sorted = [...figures.total_ms].sort((a, b) => a - b);
    figures.median_total_ms = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
    return figures;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The dashboard on a free port, polled for the loop's page `polls` times after a first poll. */
async function dashboardPolls(dir: string, env: Record<string, string>, polls: number): Promise<number[]> {
  const child = spawn(process.execPath, [BIN.ralphLoop, '--json', 'dashboard', '--port', '0'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    let printed = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        printed += chunk.toString('utf8');
        const end = printed.indexOf('}');
        if (end !== -1) resolve((JSON.parse(printed.slice(0, end + 1)) as { url: string }).url);
      });
      child.once('exit', () => reject(new Error('the dashboard exited before printing its address')));
    });
    const times: number[] = [];
    for (let poll = 0; poll <= polls; poll += 1) {
      const started = performance.now();
      const response = await fetch(`${url}api/epic/${EPIC}/page`);
      if (!response.ok) throw new Error(`the dashboard answered ${response.status}`);
      await response.arrayBuffer();
      if (poll > 0) times.push(performance.now() - started);
    }
    return times;
  } finally {
    child.kill('SIGINT');
  }
}

export function reportRenderRows(figures: ReportRender | { skipped: string }): Row[] {
  if ('skipped' in figures) {
    return [
      {
        figure: '9',
        measure: 'report page of a long loop',
        value: figures.skipped,
        budget: '≤ 1 s',
        verdict: 'n/a',
      },
    ];
  }
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  return [
    {
      figure: '9',
      measure: `report of ${figures.iterations.toLocaleString('en-US')} iterations and their run logs: ralph-loop report + chromium load (median of ${figures.runs})`,
      value: `${ms(figures.median_total_ms)} (${ms(median(figures.generate_ms))} + ${ms(median(figures.load_ms))}), ${(figures.html_bytes / 1e6).toFixed(1)} MB`,
      budget: '≤ 1 s',
      verdict: verdictAtMost(figures.median_total_ms, BUDGET_MS),
    },
    {
      figure: '9',
      measure: `  ralph-loop status of that loop, its run logs read (median of ${figures.runs})`,
      value: ms(median(figures.status_ms)),
      budget: '',
      verdict: '',
    },
    {
      figure: '9',
      measure: `  the dashboard's poll of that loop after its first (the page asks every 1.5 s; median of ${figures.runs})`,
      value: ms(median(figures.poll_ms)),
      budget: '',
      verdict: '',
    },
  ];
}

/** A loop workspace whose ledger has `iterations` iterations of every decision (unchained lines). */
export async function writeLoop(dir: string, iterations: number): Promise<void> {
  const workspace = join(dir, '.autoresearch');
  await mkdir(join(workspace, 'runs'), { recursive: true });
  await mkdir(join(dir, '.forge'), { recursive: true });
  await writeFile(
    join(dir, '.forge', 'loops.json'),
    JSON.stringify({ [EPIC]: { workspace: '.autoresearch' } }),
  );
  await writeFile(
    join(workspace, 'config.json'),
    JSON.stringify({
      subject: 'bench',
      epic_id: EPIC,
      target: iterations,
      metric: { type: 'hard', command: 'true', direction: 'maximize' },
      scope: { doer_paths: ['src/'] },
    }),
  );
  const lines: string[] = [];
  let best = 0;
  for (let iter = 0; iter <= iterations; iter += 1) {
    const decision = iter === 0 ? 'baseline' : DECISIONS[iter % DECISIONS.length]!;
    const score =
      decision === 'crash' || decision === 'tamper' || decision === 'guard_failed'
        ? null
        : best + (decision === 'revert' ? -1 : 1);
    const before = best;
    if (decision === 'keep' || decision === 'baseline') best = score ?? best;
    lines.push(
      JSON.stringify({
        iter,
        ts: new Date(Date.UTC(2026, 10, 1) + iter * 60_000).toISOString(),
        score_before: before,
        score_after: score,
        best_before: before,
        best_after: best,
        delta: score === null ? null : score - before,
        decision,
        base_sha: null,
        sha: decision === 'keep' ? iter.toString(16).padStart(12, '0') : null,
        findings_count: 0,
        hypothesis: `iteration ${iter}: try a slightly different constant in the hot loop`,
        cost_usd: 0.12,
        duration_ms: 60_000,
        ...(score === null ? { reason: 'the metric command crashed' } : {}),
      }),
    );
  }
  await writeFile(join(workspace, 'research-log.jsonl'), `${lines.join('\n')}\n`);
  await writeRunLogs(join(workspace, 'runs'), iterations);
}

/** Runs of a thousand iterations each, this many lines of agent activity per cycle bead. */
const ITERATIONS_PER_RUN = 1000;
const ACTIVITY_LINES: Record<string, number> = { doer: 12, judge: 4, arbiter: 0, strategist: 2 };

/**
 * The run logs of such a loop, as a runner writes them: each iteration's four beads started, their
 * agents' activity (a line per tool call), each attempt's end with its time and cost. (The report
 * charts time and cost per role from the attempts' ends; the rest is what it reads past.)
 */
async function writeRunLogs(runs: string, iterations: number): Promise<void> {
  for (let first = 1; first <= iterations; first += ITERATIONS_PER_RUN) {
    const events: string[] = [];
    const last = Math.min(iterations, first + ITERATIONS_PER_RUN - 1);
    for (let iter = first; iter <= last; iter += 1) {
      const ts = new Date(Date.UTC(2026, 10, 1) + iter * 60_000).toISOString();
      for (const [role, activity] of Object.entries(ACTIVITY_LINES)) {
        const bead = `${EPIC}.${iter * 4 + Object.keys(ACTIVITY_LINES).indexOf(role)}`;
        const title = `${role}-${iter}: bench`;
        events.push(JSON.stringify({ type: 'bead_started', ts, epic: EPIC, bead, title, role }));
        for (let k = 0; k < activity; k += 1)
          events.push(
            JSON.stringify({
              type: 'activity',
              ts,
              epic: EPIC,
              bead,
              message: `Edit src/hot-loop.ts (step ${k})`,
            }),
          );
        events.push(
          JSON.stringify({
            type: 'attempt_finished',
            ts,
            epic: EPIC,
            bead,
            title,
            role,
            agent: role === 'arbiter' ? 'builtin' : 'claude',
            attempt: 1,
            outcome: 'ok',
            duration_ms: role === 'doer' ? 40_000 : 5_000,
            cost_usd: role === 'doer' ? 0.1 : role === 'arbiter' ? 0 : 0.01,
            message: 'ok',
            transcript: `.autoresearch/transcripts/${bead}.jsonl`,
          }),
        );
      }
    }
    const name = `${new Date(Date.UTC(2026, 10, 1) + first * 60_000).toISOString().replace(/[:.]/g, '-')}-${first}.jsonl`;
    await writeFile(join(runs, name), `${events.join('\n')}\n`);
  }
}
