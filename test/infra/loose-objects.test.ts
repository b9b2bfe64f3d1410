// Which loose objects an agent wrote during its run: new ones and old ones rewritten, not those a gc
// packed away.
import { chmod, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  commitGraphFiles,
  looseObjects,
  removeWrittenGraph,
  writtenObjects,
} from '../../src/infra/loose-objects.js';
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

describe('the commit-graph', () => {
  it('is removed whole when written or rewritten since, a single file or a chain, and left when not', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const gitDir = join(repo.dir, '.git');
    const info = join(gitDir, 'objects', 'info');
    const none = commitGraphFiles(gitDir);
    expect(none.size).toBe(0);
    expect(await removeWrittenGraph(gitDir, none)).toEqual([]);

    repo.run('commit-graph', 'write', '--reachable');
    const single = commitGraphFiles(gitDir);
    expect([...single.keys()]).toEqual([join(info, 'commit-graph')]);
    // Not written since: left, as git wrote it.
    expect(await removeWrittenGraph(gitDir, single)).toEqual([]);
    expect(await readdir(info)).toContain('commit-graph');

    // Rewritten in place (a forged tree in it), with its size and name the same.
    const path = join(info, 'commit-graph');
    const bytes = await readFile(path);
    bytes[bytes.length - 1] ^= 0xff;
    await chmod(path, 0o644);
    await writeFile(path, bytes);
    expect(await removeWrittenGraph(gitDir, single)).toEqual([path]);
    expect(await readdir(info)).not.toContain('commit-graph');

    // A chain (split graphs), made where there was none: every file of it goes.
    repo.run('commit-graph', 'write', '--reachable', '--split');
    const chain = [...commitGraphFiles(gitDir).keys()];
    expect(chain.some((file) => file.endsWith('commit-graph-chain'))).toBe(true);
    expect(await removeWrittenGraph(gitDir, new Map())).toEqual(chain.sort());
    expect(await readdir(info)).toEqual([]);
    expect(repo.run('log', '--format=%s')).toContain('initial');
  });
});
