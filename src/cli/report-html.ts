// The report page: one self-contained HTML document (styles, uPlot, the data and the script inlined)
// that opens from disk with no network. The dashboard serves the same page with an address to poll.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { LoopReport } from '../autoresearch/report-model.js';
import type { EpicReport } from './report-epic.js';
import { REPORT_CLIENT_SCRIPT, UPLOT_INTL_STAND_IN } from './report-client.js';
import { pageParts, type PageParts } from './report-page.js';

/** The bead a runner is working on right now, as the lock and the run's events tell. */
export interface LiveBead {
  run_id: string;
  pid: number;
  bead: string | null;
  title: string | null;
  role: string | null;
  agent: string | null;
  attempt: number | null;
  bead_elapsed_ms: number | null;
}

export interface ReportPage {
  report: LoopReport | EpicReport;
  /** Null when no runner holds the epic. */
  live: LiveBead | null;
}

export interface PageOptions {
  /** The dashboard's address of this page's head (report-page.ts); the page polls it and redraws. */
  api?: string;
  /** The dashboard's address of the whole report as JSON, read when someone asks for every row. */
  full?: string;
  intervalMs?: number;
}

let vendor: Promise<{ script: string; style: string }> | undefined;

/** uPlot's minified browser build and its stylesheet, read from the installed package once. */
export function loadChartLibrary(): Promise<{ script: string; style: string }> {
  vendor ??= (async () => {
    const require = createRequire(import.meta.url);
    const [script, style] = await Promise.all([
      readFile(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
      readFile(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
    ]);
    return { script: inlineScript(script), style };
  })();
  return vendor;
}

export async function renderReportHtml(page: ReportPage, options: PageOptions = {}): Promise<string> {
  const chart = await loadChartLibrary();
  const config = {
    api: options.api ?? null,
    full: options.full ?? null,
    interval_ms: options.intervalMs ?? 1500,
    epic: page.report.epic,
  };
  const title = page.report.kind === 'loop' ? page.report.subject : page.report.title;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:;${options.api === undefined ? '' : " connect-src 'self';"}">
<title>${escapeHtml(title)} · Forge report</title>
<style>${chart.style}</style>
<style>${PAGE_STYLE}</style>
</head>
<body>
<main id="app"><p>This report draws its views with JavaScript; enable it to see them.</p></main>
<p id="status" role="status"></p>
<script type="application/json" id="forge-config">${jsonForScript(config)}</script>
${dataElements(pageParts(page), options.full === undefined)}
<script>${UPLOT_INTL_STAND_IN}</script>
<script>${chart.script}</script>
<script>${REPORT_CLIENT_SCRIPT}</script>
</body>
</html>
`;
}

/**
 * From this much JSON on (about 200 loop iterations), a page carries its data gzip-compressed. Below it
 * the JSON is smaller than the rest of the page (74 KB, uPlot most of it) and chromium reads it in a few
 * milliseconds, so it stays plain for a person reading the source. Above it the JSON is what grows:
 * 3 MB at 10,000 iterations, 250 ms of chromium's time before any script ran when it was plain.
 */
export const COMPRESS_FROM_BYTES = 64 * 1024;

/**
 * The page's data elements: `forge-data`, the head it draws from, and `forge-older`, the older rows
 * (report-page.ts; `withOlder` false leaves them out, for the dashboard's page, which reads them from
 * the server). Both plain JSON when together they are smaller than `COMPRESS_FROM_BYTES`; else
 * both gzipped and base64-encoded (base64 holds no `<`, so it needs no escaping), which the page's
 * script decompresses. Level 1: 5 ms for the 3 MB of a 10,000-iteration loop against the default
 * level's 11, for 17% more bytes (on varied hypotheses 14 ms against 72, for 36% more).
 */
export function dataElements(parts: PageParts, withOlder = true): string {
  const elements = [
    { id: 'forge-data', json: JSON.stringify(parts.head) },
    // A dashboard's page reads them from its server (`full`), fresher than any copy here.
    { id: 'forge-older', json: withOlder ? JSON.stringify(parts.older) : '[]' },
  ];
  const bytes = elements.reduce((sum, element) => sum + Buffer.byteLength(element.json, 'utf8'), 0);
  if (bytes < COMPRESS_FROM_BYTES) {
    return elements
      .map(({ id, json }) => `<script type="application/json" id="${id}">${scriptSafe(json)}</script>`)
      .join('\n');
  }
  return elements
    .map(({ id, json }) => {
      const packed = gzipSync(json, { level: 1 }).toString('base64');
      return `<script type="application/octet-stream" id="${id}" data-encoding="gzip+base64">${packed}</script>`;
    })
    .join('\n');
}

/**
 * JSON that can sit inside a script element: `<` is written `\u003c`, so no string in it (a hypothesis
 * holding `</script>`) can close the element; U+2028/2029 are escaped too.
 */
export function jsonForScript(value: unknown): string {
  return scriptSafe(JSON.stringify(value));
}

function scriptSafe(json: string): string {
  return json
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A library build never needs `</script` literally; should one hold it, it is split where JS allows. */
function inlineScript(code: string): string {
  return code.replace(/<\/script/gi, '<\\/script');
}

const PAGE_STYLE = `
:root { color-scheme: light; --fg: #111827; --muted: #6b7280; --line: #e5e7eb; --bg: #f9fafb; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1100px; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.5rem; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 28px 0 8px; }
.sub, .reason { color: var(--muted); font-size: 0.9rem; }
.terminal { font-weight: 600; }
.live { margin: 12px 0; padding: 10px 12px; border-radius: 8px; background: #eef2ff; overflow-wrap: anywhere; }
.unreadable { margin: 12px 0; padding: 10px 12px; border-radius: 8px; background: #fee2e2; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 8px; margin: 12px 0; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 10px; }
.card-label { color: var(--muted); font-size: 0.8rem; }
.card-value { font-size: 1.2rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.chart { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 0; margin: 8px 0; overflow: hidden; }
.scroll { overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); }
th { position: sticky; top: 0; background: #fff; font-size: 0.85rem; color: var(--muted); }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { min-width: 220px; overflow-wrap: anywhere; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.85rem; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; color: #fff; font-size: 0.8rem; white-space: nowrap; background: #6b7280; }
.state-done { background: #16a34a; } .state-failed { background: #dc2626; } .state-in_progress { background: #2563eb; }
.state-blocked { background: #a16207; }
.d-baseline { background: #2563eb; } .d-keep { background: #16a34a; } .d-revert { background: #ea580c; }
.d-crash { background: #dc2626; } .d-tamper { background: #9333ea; } .d-guard_failed { background: #a16207; }
pre.retro { white-space: pre-wrap; overflow-wrap: anywhere; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px; }
#status:empty { display: none; }
#status { position: fixed; bottom: 8px; left: 8px; right: 8px; background: #fee2e2; padding: 8px; border-radius: 8px; }
@media (max-width: 640px) {
  main { padding: 10px; }
  th:nth-child(6), td:nth-child(6) { display: none; }
}
`;
