// Tailing a file another process appends to: missing files, torn lines, rewrites, split characters.
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createFileTail, parseEventLines } from '../../src/infra/file-tail.js';

async function tempFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-tail-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'run.jsonl');
}

describe('createFileTail', () => {
  it('reads nothing until the file exists, then only what was appended, a torn line once it is whole', async () => {
    const path = await tempFile();
    const tail = createFileTail(path);
    expect(await tail.readLines()).toEqual([]);
    await writeFile(path, '{"type":"run_started"}\n{"type":"bead_st');
    expect(await tail.readLines()).toEqual(['{"type":"run_started"}']);
    expect(tail.rest()).toBe('{"type":"bead_st');
    expect(await tail.readLines()).toEqual([]);
    await appendFile(path, 'arted"}\n');
    expect(await tail.readLines()).toEqual(['{"type":"bead_started"}']);
    expect(tail.rest()).toBe('');
  });

  it('starts at an offset, and reads a file that shrank from its start', async () => {
    const path = await tempFile();
    await writeFile(path, 'old line\n');
    const tail = createFileTail(path, Buffer.byteLength('old line\n'));
    await appendFile(path, 'new line\n');
    expect(await tail.readLines()).toEqual(['new line']);
    await writeFile(path, 'again\n');
    expect(await tail.readLines()).toEqual(['again']);
  });

  it('keeps a character split across two appends whole', async () => {
    const path = await tempFile();
    const tail = createFileTail(path);
    const bytes = Buffer.from('✓ done\n');
    await writeFile(path, bytes.subarray(0, 1));
    expect(await tail.readLines()).toEqual([]);
    await appendFile(path, bytes.subarray(1));
    expect(await tail.readLines()).toEqual(['✓ done']);
  });
});

describe('parseEventLines', () => {
  it('keeps objects and counts what is not one', () => {
    expect(parseEventLines(['{"type":"a"}', '', 'not json', '[1]', '{"type":"b"}'])).toEqual({
      events: [{ type: 'a' }, { type: 'b' }],
      skipped: 2,
    });
  });
});
