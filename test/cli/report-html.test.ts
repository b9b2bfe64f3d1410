// The report page's data elements (the head it draws from, the older rows it reads when asked): a large
// one's JSON gzipped and base64-encoded so the page stays small, a small one's left plain so a person
// reading the source sees it.
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LoopReport } from '../../src/autoresearch/report-model.js';
import {
  COMPRESS_FROM_BYTES,
  dataElements,
  jsonForScript,
  renderReportHtml,
  type ReportPage,
} from '../../src/cli/report-html.js';
import { pageParts, type PageParts } from '../../src/cli/report-page.js';
import { INJECTION, lengthenedReport, readFixtureReport } from '../support/report-fixture.js';

/** The fixture's iterations repeated `count` times over, each hypothesis still the one that tries to break out. */
function longLoop(report: LoopReport, count: number): ReportPage {
  return { report: lengthenedReport(report, count, (k) => `${INJECTION} \u2028 \u2029 ${k}`), live: null };
}

/** The data element `id` of a rendered page (there is one of each): its opening tag and its content. */
function dataOf(html: string, id: 'forge-data' | 'forge-older'): { tag: string; content: string } {
  const found = [...html.matchAll(new RegExp(`(<script[^>]*id="${id}"[^>]*>)([^]*?)</script>`, 'g'))];
  expect(found).toHaveLength(1);
  return { tag: found[0]![1]!, content: found[0]![2]! };
}

const PACKED = (id: string) =>
  `<script type="application/octet-stream" id="${id}" data-encoding="gzip+base64">`;

describe('the report page data', () => {
  it('embeds a long loop’s head and older rows gzipped in base64, each inflating to exactly its JSON, with nothing that can close the script', async () => {
    const page = longLoop(await readFixtureReport(), 2000);
    const parts = pageParts(page);
    const html = await renderReportHtml(page);
    for (const [id, value] of [
      ['forge-data', parts.head],
      ['forge-older', parts.older],
    ] as const) {
      const json = JSON.stringify(value);
      const { tag, content } = dataOf(html, id);
      expect(tag).toBe(PACKED(id));
      expect(content).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(content).not.toContain('<');
      expect(gunzipSync(Buffer.from(content, 'base64')).toString('utf8')).toBe(json);
      // The page a person mails is a fraction of the JSON it carries.
      expect(content.length, id).toBeLessThan(json.length / 4);
    }
    // What the page reads before drawing is a fraction of the report.
    expect(JSON.stringify(parts.head).length).toBeLessThan(JSON.stringify(page).length / 4);
  });

  it('leaves the older rows out of a dashboard’s page, which reads them from its server', async () => {
    const page = longLoop(await readFixtureReport(), 2000);
    const html = await renderReportHtml(page, { api: '/api/epic/x/page', full: '/api/epic/x' });
    const head = dataOf(html, 'forge-data');
    expect(gunzipSync(Buffer.from(head.content, 'base64')).toString('utf8')).toBe(
      JSON.stringify(pageParts(page).head),
    );
    const older = dataOf(html, 'forge-older');
    expect(gunzipSync(Buffer.from(older.content, 'base64')).toString('utf8')).toBe('[]');
    expect(html).toContain('"full":"/api/epic/x"');
  });

  it('keeps a small report plain JSON, escaped as before, so its source reads as data', async () => {
    const page: ReportPage = { report: await readFixtureReport(), live: null };
    const html = await renderReportHtml(page);
    const head = dataOf(html, 'forge-data');
    expect(head.tag).toBe('<script type="application/json" id="forge-data">');
    expect(head.content).toBe(jsonForScript(pageParts(page).head));
    expect(head.content).not.toContain('<');
    expect(JSON.parse(head.content)).toEqual(pageParts(page).head);
    expect(dataOf(html, 'forge-older')).toEqual({
      tag: '<script type="application/json" id="forge-older">',
      content: '[]',
    });
  });

  it('compresses from the threshold on, both elements by their JSON together: one byte below it stays plain', async () => {
    const report = await readFixtureReport();
    const sized = (bytes: number): PageParts => {
      const parts = pageParts({ report: { ...report, retrospective: '' }, live: null });
      const pad = bytes - Buffer.byteLength(JSON.stringify(parts.head) + JSON.stringify(parts.older), 'utf8');
      return pageParts({ report: { ...report, retrospective: 'x'.repeat(pad) }, live: null });
    };
    const below = sized(COMPRESS_FROM_BYTES - 1);
    const at = sized(COMPRESS_FROM_BYTES);
    expect(dataElements(below)).toBe(
      `<script type="application/json" id="forge-data">${jsonForScript(below.head)}</script>\n` +
        `<script type="application/json" id="forge-older">[]</script>`,
    );
    const packed = (value: unknown) => gzipSync(JSON.stringify(value), { level: 1 }).toString('base64');
    expect(dataElements(at)).toBe(
      `${PACKED('forge-data')}${packed(at.head)}</script>\n${PACKED('forge-older')}${packed([])}</script>`,
    );
  });
});
