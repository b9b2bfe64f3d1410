// A repository whose checkout converts line endings (a `.gitattributes` that asks for CRLF, or
// `core.autocrlf`): the bytes in the tree are not the bytes git stores. Forge's snapshots keep the
// tree's bytes and its commits go through git's own filters, so a kept change, a revert and the user's
// own files must all come out as a checkout would leave them, with nothing shown as changed.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLedger } from '../../src/autoresearch/ledger.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { createLoopFixture, doerWrites, type LoopFixture } from '../support/loop-fixture.js';

/** One iteration: the doer writes `value`, the judge scores it, the arbiter decides. */
async function iteration(f: LoopFixture, iter: number, value: string): Promise<string> {
  f.full.behaviour = doerWrites(f, value);
  expect((await f.run('doer', iter)).outcome).toBe('ok');
  expect((await f.run('judge', iter)).outcome).toBe('ok');
  return (await f.run('arbiter', iter)).message;
}

/**
 * The baseline (10), a keep (11) and a revert (9), none of them a tamper; then the value is the kept
 * one as a checkout writes it (`checkedOut`), git holds it with LF and nothing shows as changed.
 */
async function keepThenRevert(f: LoopFixture, checkedOut: string): Promise<void> {
  await f.baseline();
  expect(await iteration(f, 1, '11')).toMatch(/^keep/);
  expect(await iteration(f, 2, '9')).toMatch(/^revert/);
  const lines = (await readLedger(diskLoopFiles(), join(f.workspace, 'research-log.jsonl'))).lines;
  expect(lines.map((l) => [l.iter, l.decision, l.tamper !== undefined])).toEqual([
    [0, 'baseline', false],
    [1, 'keep', false],
    [2, 'revert', false],
  ]);
  expect(await f.repo.read('src/value.txt')).toBe(checkedOut);
  expect(f.repo.run('show', 'HEAD:src/value.txt')).toBe('11\n');
  expect(f.repo.run('status', '--porcelain')).toBe('');
}

describe('a repository that converts line endings on checkout', () => {
  it('with `text eol=crlf` in .gitattributes: a keep and a revert leave CRLF in the tree and nothing changed', async () => {
    const f = await createLoopFixture();
    await f.repo.write('.gitattributes', '*.txt text eol=crlf\n*.md text eol=crlf\n');
    f.repo.commitAll('line endings');
    // Checked out again, as a clone would be: every .txt and .md now ends its lines with CRLF.
    f.repo.run('rm', '-q', '-r', '--cached', '.');
    f.repo.run('reset', '-q', '--hard');
    expect(await f.repo.read('src/value.txt')).toBe('10\r\n');
    await keepThenRevert(f, '11\r\n');
    expect(await f.repo.read('notes.md')).toBe('user notes\r\n');
  });

  it('with core.autocrlf: the user’s CRLF file is left as it is, and the loop goes on as anywhere', async () => {
    const f = await createLoopFixture();
    f.repo.run('config', 'core.autocrlf', 'true');
    await f.repo.write('notes.md', 'user notes\r\nline two\r\n');
    f.repo.commitAll('notes with CRLF');
    // The revert checks the kept value out again, and a checkout under autocrlf writes CRLF.
    await keepThenRevert(f, '11\r\n');
    expect(await f.repo.read('notes.md')).toBe('user notes\r\nline two\r\n');
  });
});
