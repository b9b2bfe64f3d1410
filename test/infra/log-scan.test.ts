import { appendFile, mkdtemp, open, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLogScans,
  MAX_SCANNED_LINE_BYTES,
  scanLog,
  scanLogText,
  type LogQuery,
} from '../../src/infra/log-scan.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'forge-log-scan-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const NEEDLE = '"type":"attempt_finished"';
const startsJson = (line: string): boolean => line.startsWith('{');

/** A small deterministic generator, so a failing case can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const PIECES = [
  '',
  ' ',
  '\t ',
  '\r',
  '{"type":"activity","text":"é — 💡"}',
  `{"ts":"2026-12-04T00:00:00Z",${NEEDLE},"role":"doer"}`,
  `${NEEDLE}`,
  '"type":"attempt_fin',
  'ished"',
  'plain text',
  '\uFEFF',
  '\u00A0',
];

function randomLog(next: () => number): string {
  const lines: string[] = [];
  const count = Math.floor(next() * 12);
  for (let i = 0; i < count; i += 1) {
    let line = '';
    const parts = Math.floor(next() * 3);
    for (let p = 0; p < parts; p += 1) line += PIECES[Math.floor(next() * PIECES.length)];
    lines.push(line);
  }
  let text = lines.join('\n');
  if (next() < 0.6) text += '\n';
  if (next() < 0.15) text = `\uFEFF${text}`;
  return text;
}

async function onDisk(name: string, text: string | Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('scanLog', () => {
  it('finds what reading the whole text finds, wherever the reads split the file', async () => {
    const next = random(20261204);
    let compared = 0;
    for (let round = 0; round < 400; round += 1) {
      const text = randomLog(next);
      const path = await onDisk(`random-${round}.jsonl`, text);
      const query: LogQuery = {
        needle: next() < 0.5 ? NEEDLE : '"attempt_finished"',
        ...(next() < 0.7 ? { first: startsJson } : {}),
        last: Math.floor(next() * 4),
      };
      const expected = scanLogText(text, query);
      for (const chunk of [1, 2, 3, 5, 8, 13, 64, 256 * 1024]) {
        expect(
          await scanLog(path, query, chunk),
          `round ${round}, chunk ${chunk}: ${JSON.stringify(text)}`,
        ).toEqual(expected);
        compared += 1;
      }
    }
    expect(compared).toBe(3200);
  });

  it('returns the matching lines, the first line the test takes and the last non-blank lines', async () => {
    const text = [
      'not json',
      '{"ts":"a"}',
      `{${NEEDLE},"n":1}\r`,
      '{"type":"activity"}',
      `{${NEEDLE},"n":2}`,
      '',
      '  ',
      '{"type":"run_finished"}',
      '',
    ].join('\n');
    const path = await onDisk('plain.jsonl', text);
    expect(await scanLog(path, { needle: NEEDLE, first: startsJson, last: 2 }, 7)).toEqual({
      matches: [`{${NEEDLE},"n":1}`, `{${NEEDLE},"n":2}`],
      first: '{"ts":"a"}',
      last: [`{${NEEDLE},"n":2}`, '{"type":"run_finished"}'],
    });
    expect(await scanLog(path, { needle: 'absent' })).toEqual({ matches: [], first: undefined, last: [] });
  });

  it('counts an unterminated last line, and drops a byte-order mark before the first', async () => {
    const path = await onDisk(
      'torn.jsonl',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"ts":1}\n{${NEEDLE}`)]),
    );
    expect(await scanLog(path, { needle: NEEDLE, first: startsJson, last: 1 }, 4)).toEqual({
      matches: [`{${NEEDLE}`],
      first: '{"ts":1}',
      last: [`{${NEEDLE}`],
    });
  });

  it('passes over a line past the bound, however it is read, and keeps one at the bound', async () => {
    const atBound = `{${NEEDLE},"pad":"${'x'.repeat(MAX_SCANNED_LINE_BYTES - NEEDLE.length - 11)}"}`;
    expect(Buffer.byteLength(atBound)).toBe(MAX_SCANNED_LINE_BYTES);
    const past = `${atBound}y`;
    const text = [`{${NEEDLE},"n":1}`, past, atBound, past, ''].join('\n');
    const path = await onDisk('long.jsonl', text);
    const query: LogQuery = { needle: NEEDLE, first: (line) => line.length > 100, last: 3 };
    const expected = {
      matches: [`{${NEEDLE},"n":1}`, atBound],
      first: atBound,
      last: [`{${NEEDLE},"n":1}`, atBound],
    };
    expect(scanLogText(text, query)).toEqual(expected);
    for (const chunk of [1000, 64 * 1024, 4 * 1024 * 1024])
      expect(await scanLog(path, query, chunk)).toEqual(expected);
  });

  it('is undefined for a missing file and refuses a needle that could span lines', async () => {
    expect(await scanLog(join(dir, 'none.jsonl'), { needle: NEEDLE })).toBeUndefined();
    const path = await onDisk('any.jsonl', 'x\n');
    await expect(scanLog(path, { needle: 'a\nb' })).rejects.toThrow(/one line/);
    await expect(scanLog(path, { needle: '' })).rejects.toThrow(/non-empty/);
  });
});

describe('createLogScans', () => {
  const query: LogQuery = { needle: NEEDLE, first: startsJson, last: 2 };

  it('finds what a whole scan finds after each append, however the appends cut lines and characters', async () => {
    const next = random(42);
    let compared = 0;
    for (let round = 0; round < 60; round += 1) {
      const whole = Buffer.from(Array.from({ length: 4 }, () => randomLog(next)).join('\n'));
      const path = await onDisk(`grown-${round}.jsonl`, '');
      const scans = createLogScans();
      for (let at = 0; at < whole.length;) {
        const to = Math.min(whole.length, at + 1 + Math.floor(next() * 40));
        await appendFile(path, whole.subarray(at, to));
        at = to;
        const expected = scanLogText(whole.subarray(0, to).toString('utf8'), query);
        expect(await scans.scan(path, query, 1 + Math.floor(next() * 16)), `round ${round} at ${to}`).toEqual(
          expected,
        );
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(500);
  });

  it('goes on from where it stopped: earlier lines are not read again', async () => {
    const first = `{${NEEDLE},"n":1}\n${'{"type":"activity"}\n'.repeat(40)}`;
    const path = await onDisk('resumed.jsonl', first);
    const scans = createLogScans();
    expect((await scans.scan(path, query))?.matches).toEqual([`{${NEEDLE},"n":1}`]);
    // Changed in place, far before where the scan stopped: a scan going on from there does not see it.
    const handle = await open(path, 'r+');
    await handle.write(Buffer.from('{"type":"changed_finished"'), 0, undefined, 1);
    await handle.close();
    await appendFile(path, `{${NEEDLE},"n":2}\n`);
    expect((await scans.scan(path, query))?.matches).toEqual([`{${NEEDLE},"n":1}`, `{${NEEDLE},"n":2}`]);
    expect((await scanLog(path, query))?.matches).toEqual([`{${NEEDLE},"n":2}`]);
  });

  it('answers scans of one log at the same time each whole', async () => {
    const path = await onDisk('together.jsonl', `{${NEEDLE},"n":1}\n`);
    const scans = createLogScans();
    await scans.scan(path, query);
    await appendFile(path, `{${NEEDLE},"n":2}\n{${NEEDLE},"n":3}\n`);
    const whole = await scanLog(path, query);
    expect(whole?.matches).toHaveLength(3);
    expect(await Promise.all([scans.scan(path, query, 8), scans.scan(path, query, 8)])).toEqual([
      whole,
      whole,
    ]);
    expect(await scans.scan(path, query)).toEqual(whole);
  });

  it('scans again from the start a log that was replaced, shrank, or changed just before where it stopped', async () => {
    const path = await onDisk('changed.jsonl', `{${NEEDLE},"n":1}\n{"ts":1}\n`);
    const scans = createLogScans();
    const check = async (): Promise<void> => {
      const whole = await scanLog(path, query);
      expect(await scans.scan(path, query)).toEqual(whole);
    };
    await check();
    // Replaced by a rename (another file), longer than before.
    const other = await onDisk('other.jsonl', `{"ts":2}\n{${NEEDLE},"n":3}\n{"ts":4}\n`);
    await rename(other, path);
    await check();
    expect((await scans.scan(path, query))?.matches).toEqual([`{${NEEDLE},"n":3}`]);
    // Shrank.
    await truncate(path, 9);
    await check();
    expect((await scans.scan(path, query))?.matches).toEqual([]);
    // Rewritten in place, the same length and then longer: the bytes before the stop differ.
    await writeFile(path, `{"ts":2}\n{${NEEDLE},"n":5}\n{"ts":6}\n`);
    await check();
    const handle = await open(path, 'r+');
    await handle.write(Buffer.from('{"tz":'), 0, undefined, 0);
    await handle.close();
    await appendFile(path, '{"ts":7}\n');
    await check();
    expect((await scans.scan(path, query))?.last).toEqual(['{"ts":6}', '{"ts":7}']);
    expect((await scans.scan(path, query))?.first).toBe('{"tz":2}');
    // Replaced by another file whose last bytes before the stop are the same: its earlier ones are not.
    const activity = '{"type":"activity"}\n'.repeat(20);
    await writeFile(path, `{${NEEDLE},"n":8}\n${activity}`);
    await check();
    const replaced = await onDisk(
      'replaced.jsonl',
      `{${NEEDLE.replace('attempt', 'attemXt')},"n":8}\n${activity}{"ts":9}\n`,
    );
    await rename(replaced, path);
    await check();
    expect((await scans.scan(path, query))?.matches).toEqual([]);
    // Nothing complete when it stopped, then a byte-order mark: it is dropped as at any start.
    await writeFile(path, '{"ts"');
    await check();
    await writeFile(path, '\uFEFF{"ts":10}\n');
    await check();
    expect((await scans.scan(path, query))?.first).toBe('{"ts":10}');
    await rm(path);
    expect(await scans.scan(path, query)).toBeUndefined();
  });
});
