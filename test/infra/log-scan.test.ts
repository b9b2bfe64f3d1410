import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SCANNED_LINE_BYTES, scanLog, scanLogText, type LogQuery } from '../../src/infra/log-scan.js';

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
