// The runner's copy of an append-only log (src/infra/append-witness.ts), on real files: appends are
// copied as the file system reports them, without being asked; a log cut short or rewritten at its
// start after that is reported cut, with what was seen kept; one only appended to is not.
import { appendFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { witnessAppends } from '../../src/infra/append-witness.js';
import { tempTree } from '../support/temp-tree.js';

async function witnessed(start: string) {
  const dir = await tempTree({ 'log.jsonl': start }, 'forge-witness-');
  const path = join(dir, 'log.jsonl');
  const witness = witnessAppends(path, 1_000);
  onTestFinished(() => witness.close());
  return { path, witness };
}

describe('the copy of an append-only log', () => {
  it('copies each append as it comes, so that a record cut out after it is still there', async () => {
    const { path, witness } = await witnessed('{"a":1}\n');
    await appendFile(path, '{"read":"metric/cases.json"}\n');
    // Nobody asks: the file system's report of the append is what makes the copy.
    await vi.waitFor(() => expect(witness.copied()).toBe(37), { timeout: 10_000, interval: 5 });
    await truncate(path, 8);
    await appendFile(path, '{"b":2}\n');
    expect(await witness.settle()).toEqual({
      text: '{"a":1}\n{"read":"metric/cases.json"}\n\n{"a":1}\n{"b":2}\n',
      cut: true,
    });
  });

  it('says a log whose start was rewritten in place, at the same length, was cut', async () => {
    const { path, witness } = await witnessed('{"a":1}\n');
    expect(await witness.settle()).toEqual({ text: '{"a":1}\n', cut: false });
    await writeFile(path, '{"x":1}\n');
    expect((await witness.settle())?.cut).toBe(true);
  });

  it('reads a log only appended to as it is, and a log that is gone as gone', async () => {
    const { path, witness } = await witnessed('');
    for (const n of [1, 2, 3]) await appendFile(path, `{"n":${n}}\n`);
    expect(await witness.settle()).toEqual({ text: '{"n":1}\n{"n":2}\n{"n":3}\n', cut: false });
    await rm(path);
    expect(await witness.settle()).toBeUndefined();
  });

  it('copies no more than it was told to, and still reads the whole log', async () => {
    const dir = await tempTree({ 'log.jsonl': '' }, 'forge-witness-');
    const path = join(dir, 'log.jsonl');
    const witness = witnessAppends(path, 4);
    onTestFinished(() => witness.close());
    await appendFile(path, '0123456789\n');
    expect(await witness.settle()).toEqual({ text: '0123456789\n', cut: false });
    expect(witness.copied()).toBe(4);
  });
});
