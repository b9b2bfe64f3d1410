// The journal beside the seal: every write the loop's files make is announced first, so what a killed
// runner left is told from what somebody else changed.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkSeal, takeSnapshot, writeSeal, type SealedVault } from '../../src/infra/file-vault.js';
import { journaledLoopFiles } from '../../src/infra/journaled-loop-files.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

async function sealedTree() {
  const repo = await mkdtemp(join(tmpdir(), 'forge-journal-'));
  onTestFinished(() => rm(repo, { recursive: true, force: true }));
  const ws = join(repo, 'ws');
  const vault: SealedVault = { dir: join(repo, 'vault'), layout: { repo, dirs: [ws], files: [] } };
  const files = journaledLoopFiles(diskLoopFiles(), { dir: vault.dir, repo });
  await diskLoopFiles().writeText(join(ws, 'log.jsonl'), '{"a":1}\n');
  await diskLoopFiles().writeText(join(ws, 'gone', 'x.json'), '{}\n');
  await diskLoopFiles().writeText(join(ws, 'old.json'), '{"old":true}\n');
  await writeSeal(vault, await takeSnapshot(vault.layout));
  const check = async () => checkSeal(vault, await takeSnapshot(vault.layout));
  return { ws, vault, files, check };
}

describe('journaled loop files', () => {
  it('every kind of write the runner makes is known for its own after a crash before the seal', async () => {
    const { ws, files, check } = await sealedTree();
    await files.writeJson(join(ws, 'iterations', 'iter-1.json'), { iter: 1, base_sha: 'abc' });
    await files.appendJsonLine(join(ws, 'log.jsonl'), { b: 2 });
    await files.rename(join(ws, 'old.json'), join(ws, 'new.json'));
    await files.remove(join(ws, 'gone'));
    expect(await check()).toEqual({
      changed: [],
      fresh: false,
      journaled: [
        'ws/gone/x.json',
        'ws/iterations/iter-1.json',
        'ws/log.jsonl',
        'ws/new.json',
        'ws/old.json',
      ],
    });
  });

  it('an append after a torn last line is announced as the append leaves the file', async () => {
    const { ws, files, check } = await sealedTree();
    await writeFile(join(ws, 'log.jsonl'), '{"a":1}\n{"torn');
    await files.appendJsonLine(join(ws, 'log.jsonl'), { b: 2 });
    expect((await check()).journaled).toEqual(['ws/log.jsonl']);
  });

  it('anything else is a change: another content, an older announcement, and nothing once sealed', async () => {
    const { ws, vault, files, check } = await sealedTree();
    const state = join(ws, 'iterations', 'iter-1.json');
    await files.writeJson(state, { iter: 1 });
    await files.writeJson(state, { iter: 1, base_sha: 'abc' });
    await files.writeJson(state, { iter: 1, base_sha: 'abc', doer_head: 'def' });
    // The last announcement, and the one before (its write may never have happened), are the runner's.
    await writeFile(state, `${JSON.stringify({ iter: 1, base_sha: 'abc' }, null, 2)}\n`);
    expect((await check()).changed).toEqual([]);
    // An older one is not: the runner had moved past it.
    await writeFile(state, `${JSON.stringify({ iter: 1 }, null, 2)}\n`);
    expect((await check()).changed).toEqual(['ws/iterations/iter-1.json']);
    await writeFile(state, '{"iter":1,"base_sha":"forged"}\n');
    expect((await check()).changed).toEqual(['ws/iterations/iter-1.json']);
    // A seal takes in what the runner wrote and starts the journal afresh.
    await files.writeJson(state, { iter: 1, base_sha: 'abc' });
    await writeSeal(vault, await takeSnapshot(vault.layout));
    await writeFile(state, `${JSON.stringify({ iter: 1, base_sha: 'abc', doer_head: 'def' }, null, 2)}\n`);
    expect(await check()).toEqual({ changed: ['ws/iterations/iter-1.json'], fresh: false, journaled: [] });
  });

  it('an append the kill cut short belongs to the runner; a line nobody announced is not', async () => {
    const { ws, files, check } = await sealedTree();
    const log = join(ws, 'log.jsonl');
    await files.appendJsonLine(log, { b: 2 });
    // Announced and then torn by a kill partway through writing it.
    await files.appendJsonLine(log, { c: 3, note: 'long enough to tear' });
    await writeFile(log, '{"a":1}\n{"b":2}\n{"c":3,"no');
    expect((await check()).journaled).toEqual(['ws/log.jsonl']);
    // Announced, never started.
    await writeFile(log, '{"a":1}\n{"b":2}\n');
    expect((await check()).journaled).toEqual(['ws/log.jsonl']);
    // A tail that is not the start of the announced line: somebody else wrote it.
    await writeFile(log, '{"a":1}\n{"b":2}\n{"c":9');
    expect((await check()).changed).toEqual(['ws/log.jsonl']);
    // A line slipped in between two announced ones.
    await writeFile(log, '{"a":1}\n{"b":2}\n{"score":1}\n{"c":3,"note":"long enough to tear"}\n');
    expect((await check()).changed).toEqual(['ws/log.jsonl']);
    // An announced line swapped for another of the same length.
    await writeFile(log, '{"a":1}\n{"b":3}\n{"c":3,"note":"long enough to tear"}\n');
    expect((await check()).changed).toEqual(['ws/log.jsonl']);
    // An earlier line rewritten under the announced appends.
    await writeFile(log, '{"a":0}\n{"b":2}\n{"c":3,"note":"long enough to tear"}\n');
    expect((await check()).changed).toEqual(['ws/log.jsonl']);
    await writeFile(log, '{"a":1}\n{"b":2}\n{"c":3,"note":"long enough to tear"}\n');
    expect(await check()).toEqual({ changed: [], fresh: false, journaled: ['ws/log.jsonl'] });
  });

  it('appends after a whole write stand on that write', async () => {
    const { ws, files, check } = await sealedTree();
    const log = join(ws, 'log.jsonl');
    await files.writeText(log, '{"fresh":true}\n');
    await files.appendJsonLine(log, { b: 2 });
    expect((await check()).journaled).toEqual(['ws/log.jsonl']);
    await writeFile(log, '{"fresh":false}\n{"b":2}\n');
    expect((await check()).changed).toEqual(['ws/log.jsonl']);
  });

  it('announcing an append reads nothing of the file, however long it is', async () => {
    const { ws, vault } = await sealedTree();
    const inner = diskLoopFiles();
    const files = journaledLoopFiles(
      {
        ...inner,
        readIfExists: () => Promise.reject(new Error('the journal read the file')),
        openRange: () => Promise.reject(new Error('the journal read the file')),
      },
      { dir: vault.dir, repo: join(ws, '..') },
    );
    await files.appendJsonLine(join(ws, 'log.jsonl'), { b: 2 });
    expect(await inner.readIfExists(join(ws, 'log.jsonl'))).toBe('{"a":1}\n{"b":2}\n');
  });
});
