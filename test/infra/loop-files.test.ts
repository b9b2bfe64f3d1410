// The LoopFiles contract, run against the disk implementation and the in-memory one.
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';
import { defineLoopFilesContract } from './loop-files.contract.js';

defineLoopFilesContract('disk', async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'forge-loop-files-')));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  return { files: diskLoopFiles(), root };
});

defineLoopFilesContract('memory', async () => {
  const files = createMemoryLoopFiles();
  await files.mkdir('/work/loop');
  return { files, root: '/work/loop' };
});
