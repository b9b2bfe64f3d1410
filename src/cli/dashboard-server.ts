// The dashboard's HTTP server (node:http, read-only): the list of the repo's epics and loops, each
// epic's report page, and the JSON that page polls to redraw while a run goes on. GET and HEAD only.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { listDirIfExists } from '../infra/fs-ops.js';
import { AppError } from '../infra/errors.js';
import { readLoopsRegistry } from './epic-dirs.js';
import { escapeHtml, renderReportHtml, type ReportPage } from './report-html.js';
import type { LiveFollower } from './report-live.js';
import { pageParts } from './report-page.js';

export interface DashboardSources {
  repo: string;
  /** The report data of one epic; `live` follows that epic's events from one read to the next. */
  page(epicId: string, live: LiveFollower | undefined): Promise<{ page: ReportPage; live: LiveFollower }>;
  intervalMs: number;
}

export interface EpicEntry {
  epic: string;
  kind: 'loop' | 'epic';
  subject: string | null;
}

/** Epic ids as Forge names them; anything else in a path is refused before it reaches a file name. */
const EPIC_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function createDashboardServer(sources: DashboardSources): Server {
  const followers = new Map<string, LiveFollower>();
  const pageOf = async (epicId: string): Promise<ReportPage> => {
    const { page, live } = await sources.page(epicId, followers.get(epicId));
    followers.set(epicId, live);
    return page;
  };
  return createServer((request, response) => {
    handle(request, response, sources, pageOf).catch((error: unknown) => {
      // An unknown epic is the user's typo, not the server's fault.
      const status = error instanceof AppError ? 404 : 500;
      send(response, status, 'text/plain; charset=utf-8', `Could not read it: ${messageOf(error)}\n`);
    });
  });
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  sources: DashboardSources,
  pageOf: (epicId: string) => Promise<ReportPage>,
): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('Allow', 'GET, HEAD');
    send(response, 405, 'text/plain; charset=utf-8', 'The dashboard is read-only.\n');
    return;
  }
  const url = new URL(request.url ?? '/', 'http://dashboard.invalid');
  const path = url.pathname;
  if (path === '/') {
    send(response, 200, 'text/html; charset=utf-8', renderIndex(sources.repo, await listEpics(sources.repo)));
    return;
  }
  if (path === '/api/epics') {
    send(response, 200, 'application/json', JSON.stringify(await listEpics(sources.repo)));
    return;
  }
  // /epic/<id>: the page; /api/epic/<id>: its report as JSON (the same as `ralph-loop report --json`);
  // /api/epic/<id>/page: what the page polls, the head of that report (report-page.ts).
  const match = /^\/(?:(api\/)epic\/([^/]+?)(\/page)?|epic\/([^/]+))$/.exec(path);
  const rawId = match?.[2] ?? match?.[4];
  const epicId = rawId === undefined ? undefined : safeDecode(rawId);
  if (match === null || epicId === undefined || !EPIC_ID.test(epicId)) {
    send(response, 404, 'text/plain; charset=utf-8', 'Not found. The list of epics is at /.\n');
    return;
  }
  const page = await pageOf(epicId);
  if (match[1] !== undefined) {
    send(
      response,
      200,
      'application/json',
      JSON.stringify(match[3] === undefined ? page : pageParts(page).head),
    );
    return;
  }
  const full = `/api/epic/${encodeURIComponent(epicId)}`;
  send(
    response,
    200,
    'text/html; charset=utf-8',
    await renderReportHtml(page, { api: `${full}/page`, full, intervalMs: sources.intervalMs }),
  );
}

/** The loops of `.forge/loops.json`, then the plain epics that have run files under `.forge/epics/`. */
export async function listEpics(repo: string): Promise<EpicEntry[]> {
  const loops = await readLoopsRegistry(repo);
  const entries: EpicEntry[] = Object.entries(loops).map(([epic, entry]) => ({
    epic,
    kind: 'loop',
    subject: entry.subject ?? null,
  }));
  for (const name of ((await listDirIfExists(join(repo, '.forge', 'epics'))) ?? []).sort()) {
    if (loops[name] === undefined && EPIC_ID.test(name))
      entries.push({ epic: name, kind: 'epic', subject: null });
  }
  return entries;
}

function renderIndex(repo: string, epics: readonly EpicEntry[]): string {
  const items = epics
    .map(
      (entry) =>
        `<li><a href="/epic/${encodeURIComponent(entry.epic)}">${escapeHtml(entry.epic)}</a> <span class="kind">${entry.kind}</span>${
          entry.subject === null ? '' : ` ${escapeHtml(entry.subject)}`
        }</li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Forge dashboard</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:900px;margin:0 auto;padding:16px}li{margin:6px 0;overflow-wrap:anywhere}.kind{color:#6b7280;font-size:.85rem}</style>
</head><body>
<h1>Forge dashboard</h1>
<p>${escapeHtml(repo)} · read-only</p>
${epics.length === 0 ? '<p>No loops or epics have run here yet.</p>' : `<ul id="epics">\n${items}\n</ul>`}
</body></html>
`;
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(status, {
    'Content-Type': type,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
