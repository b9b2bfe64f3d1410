// The LoopFiles contract, run against the disk implementation and the in-memory one.
import { appendFile, mkdtemp, open, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { diskLoopFiles, rememberingScans } from '../../src/infra/loop-files.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';
import { defineLoopFilesContract } from './loop-files.contract.js';

defineLoopFilesContract('disk', async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'forge-loop-files-')));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  return { files: diskLoopFiles(), root };
});

defineLoopFilesContract('disk, remembering scans', async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'forge-loop-files-')));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  return { files: rememberingScans(diskLoopFiles()), root };
});

defineLoopFilesContract('memory', async () => {
  const files = createMemoryLoopFiles();
  await files.mkdir('/work/loop');
  return { files, root: '/work/loop' };
});

describe('rememberingScans', () => {
  it('gives the disk scans that go on from where the last stopped, and leaves any other store as it is', async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'forge-loop-files-')));
    onTestFinished(() => rm(root, { recursive: true, force: true }));
    const log = join(root, 'r.jsonl');
    const query = { needle: '"end"' };
    const plain = diskLoopFiles();
    const remembering = rememberingScans(plain);
    await writeFile(log, `{"type":"end"}\n${'{"type":"activity"}\n'.repeat(30)}`);
    expect((await remembering.scanLog(log, query))?.matches).toEqual(['{"type":"end"}']);
    // Changed in place far before where that scan stopped: only a scan from the start sees it.
    const handle = await open(log, 'r+');
    await handle.write(Buffer.from('{"type":"and"}'), 0, undefined, 0);
    await handle.close();
    await appendFile(log, '{"type":"end","n":2}\n');
    expect((await remembering.scanLog(log, query))?.matches).toEqual([
      '{"type":"end"}',
      '{"type":"end","n":2}',
    ]);
    expect((await plain.scanLog(log, query))?.matches).toEqual(['{"type":"end","n":2}']);
    // Already remembering: the same files, and so the same memory.
    expect(rememberingScans(remembering)).toBe(remembering);
    const memory = createMemoryLoopFiles();
    expect(rememberingScans(memory)).toBe(memory);
  });
});
