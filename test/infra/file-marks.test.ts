// Files over SAVED_MAX_BYTES are saved as marks, not copies: an untouched one needs nothing written
// back, a changed one cannot be, and writing saved files says so before it writes anything.
import { execFileSync } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMark, NoCopyError, SAVED_MAX_BYTES } from '../../src/infra/file-marks.js';
import { createTempRepo } from '../support/git-repo.js';

describe('saved files too large to copy', () => {
  it('are marks, not objects: untouched they write nothing, changed they stop the write whole', async () => {
    const repo = await createTempRepo({ 'README.md': 'hello\n' });
    execFileSync('truncate', ['-s', String(SAVED_MAX_BYTES + 1), join(repo.dir, 'big.bin')]);
    await repo.write('notes.txt', 'mine\n');
    const saved = await repo.git.saveFiles(['big.bin', 'notes.txt']);
    expect(isMark(saved.get('big.bin')?.blob)).toBe(true);
    expect(isMark(saved.get('notes.txt')?.blob)).toBe(false);
    expect(repo.run('cat-file', '--batch-all-objects', '--batch-check=%(objectsize)')).not.toContain(
      String(SAVED_MAX_BYTES + 1),
    );

    await repo.write('notes.txt', 'changed\n');
    await repo.git.writeSavedFiles(saved); // the mark untouched: only notes.txt is written back
    expect(await repo.read('notes.txt')).toBe('mine\n');

    await repo.write('notes.txt', 'changed again\n');
    execFileSync('truncate', ['-s', String(SAVED_MAX_BYTES + 2), join(repo.dir, 'big.bin')]);
    const error = await repo.git.writeSavedFiles(saved).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoCopyError);
    expect((error as NoCopyError).paths).toEqual(['big.bin']);
    expect((error as NoCopyError).exitCode).toBe(3);
    expect((error as Error).message).toContain('over 100 MiB');
    // Nothing written: the other file is as it was left.
    expect(await repo.read('notes.txt')).toBe('changed again\n');
    expect((await stat(join(repo.dir, 'big.bin'))).size).toBe(SAVED_MAX_BYTES + 2);
  });
});
