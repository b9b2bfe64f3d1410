// The loop's recorded HEAD per working tree: written after every commit Forge makes; a tree that is
// gone (a population candidate's worktree) leaves the record, so it does not grow with every candidate.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { recordHead } from '../../src/autoresearch/loop-head.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';

async function tempTree(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-tree-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const gitAt = (top: string, head: string) => ({
  topLevel: async () => top,
  headState: async () => ({ sha: head, branch: 'main' }),
});

describe('recordHead', () => {
  it('keeps the trees that exist and forgets the ones that are gone', async () => {
    const files = createMemoryLoopFiles();
    const main = await tempTree();
    const candidate = await tempTree();
    const workspace = '/repo/.autoresearch';
    await recordHead(files, workspace, gitAt(main, 'a'.repeat(40)));
    await recordHead(files, workspace, gitAt(candidate, 'b'.repeat(40)));
    await recordHead(files, workspace, gitAt(join(candidate, 'gone-1'), 'c'.repeat(40)));
    await rm(candidate, { recursive: true });
    await recordHead(files, workspace, gitAt(main, 'd'.repeat(40)));
    const record = JSON.parse((await files.readIfExists(join(workspace, 'head.json'))) ?? '{}') as {
      trees: Record<string, { head: string }>;
    };
    expect(record.trees).toEqual({ [main]: { branch: 'main', head: 'd'.repeat(40) } });
  });
});
