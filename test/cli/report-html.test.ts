// The report page's data element: a large report's JSON gzipped and base64-encoded so the page stays
// small, a small report's JSON left plain so a person reading the source sees it.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LoopReport } from '../../src/autoresearch/report-model.js';
import { readLoopReport } from '../../src/autoresearch/report-read.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import {
  COMPRESS_FROM_BYTES,
  dataElement,
  jsonForScript,
  renderReportHtml,
  type ReportPage,
} from '../../src/cli/report-html.js';
import { createReportFixture, INJECTION, REPORT_EPIC } from '../support/report-fixture.js';

const ports = { now: () => Date.parse('2026-11-23T08:00:00Z'), host: 'h', isProcessAlive: () => false };

async function fixtureReport(): Promise<LoopReport> {
  const fixture = await createReportFixture();
  return readLoopReport(fixture.dir, REPORT_EPIC, { ...ports, files: diskLoopFiles() });
}

/** The fixture's iterations repeated `count` times over, each hypothesis still the one that tries to break out. */
function longLoop(report: LoopReport, count: number): ReportPage {
  const iterations = Array.from({ length: count }, (_, k) => ({
    ...report.iterations[k % report.iterations.length]!,
    iter: k,
    hypothesis: `${INJECTION} \u2028 \u2029 ${k}`,
  }));
  return { report: { ...report, iterations }, live: null };
}

/** The one data element of a rendered page: its opening tag and its content. */
function dataOf(html: string): { tag: string; content: string } {
  const found = [...html.matchAll(/(<script[^>]*id="forge-data"[^>]*>)([^]*?)<\/script>/g)];
  expect(found).toHaveLength(1);
  return { tag: found[0]![1]!, content: found[0]![2]! };
}

describe('the report page data', () => {
  it('embeds a large report gzipped in base64, which inflates to exactly the JSON, with nothing that can close the script', async () => {
    const page = longLoop(await fixtureReport(), 2000);
    const json = JSON.stringify(page);
    expect(json.length).toBeGreaterThan(COMPRESS_FROM_BYTES);
    const { tag, content } = dataOf(await renderReportHtml(page));
    expect(tag).toBe('<script type="application/octet-stream" id="forge-data" data-encoding="gzip+base64">');
    expect(content).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(content).not.toContain('<');
    expect(gunzipSync(Buffer.from(content, 'base64')).toString('utf8')).toBe(json);
    // The page a person mails is a fraction of the JSON it carries.
    expect(content.length).toBeLessThan(json.length / 4);
  });

  it('keeps a small report plain JSON, escaped as before, so its source reads as data', async () => {
    const page: ReportPage = { report: await fixtureReport(), live: null };
    const { tag, content } = dataOf(await renderReportHtml(page));
    expect(tag).toBe('<script type="application/json" id="forge-data">');
    expect(content).toBe(jsonForScript(page));
    expect(content).not.toContain('<');
    expect(JSON.parse(content)).toEqual(page);
  });

  it('compresses from the threshold on: one byte of JSON below it stays plain', async () => {
    const report = await fixtureReport();
    const sized = (bytes: number): ReportPage => {
      const page: ReportPage = { report: { ...report, retrospective: '' }, live: null };
      const pad = bytes - Buffer.byteLength(JSON.stringify(page), 'utf8');
      return { report: { ...report, retrospective: 'x'.repeat(pad) }, live: null };
    };
    const below = sized(COMPRESS_FROM_BYTES - 1);
    const at = sized(COMPRESS_FROM_BYTES);
    expect(Buffer.byteLength(JSON.stringify(below), 'utf8')).toBe(COMPRESS_FROM_BYTES - 1);
    expect(dataElement(below)).toBe(
      `<script type="application/json" id="forge-data">${jsonForScript(below)}</script>`,
    );
    expect(dataElement(at)).toContain('data-encoding="gzip+base64"');
  });
});
