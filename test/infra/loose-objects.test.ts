// Which loose objects an agent wrote during its run: new ones and old ones rewritten, not those a gc
// packed away.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { looseObjects, writtenObjects } from '../../src/infra/loose-objects.js';
import { createTempRepo } from '../support/git-repo.js';

describe('looseObjects', () => {
  it('names each loose object, and tells the written and rewritten ones from the rest', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const gitDir = join(repo.dir, '.git');
    const blob = repo.run('rev-parse', 'HEAD:a.txt').trim();
    const before = looseObjects(gitDir);
    expect(before.has(blob)).toBe(true);
    expect(before.has(repo.head())).toBe(true);
    expect(writtenObjects(before, looseObjects(gitDir))).toEqual([]);

    await repo.write('b.txt', 'b\n');
    const head = repo.commitAll('b');
    const newBlob = repo.run('rev-parse', 'HEAD:b.txt').trim();
    const path = join(gitDir, 'objects', blob.slice(0, 2), blob.slice(2));
    await chmod(path, 0o644);
    await writeFile(path, 'rewritten');
    const written = writtenObjects(before, looseObjects(gitDir));
    expect(written).toEqual([blob, head, newBlob, repo.run('rev-parse', 'HEAD^{tree}').trim()].sort());

    // Packed away by a gc: removed, not written.
    const packed = await createTempRepo({ 'a.txt': 'a\n' });
    const packedBefore = looseObjects(join(packed.dir, '.git'));
    packed.run('gc', '-q');
    expect(looseObjects(join(packed.dir, '.git')).size).toBe(0);
    expect(writtenObjects(packedBefore, looseObjects(join(packed.dir, '.git')))).toEqual([]);
  });

  it('finds none where there is no object directory', () => {
    expect(looseObjects('/nonexistent/forge/.git').size).toBe(0);
  });
});
