// Which loose objects an agent wrote during its run: new ones and old ones rewritten, not those a gc
// packed away.
import { chmod, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  commitGraphFiles,
  looseObjects,
  packFiles,
  removeWrittenGraph,
  watchLooseObjects,
  writtenObjects,
  writtenPacks,
} from '../../src/infra/loose-objects.js';
import { ForgedObjectError } from '../../src/infra/git-command.js';
import { forgePack } from '../support/forge-pack.js';
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
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
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

describe('the packs', () => {
  it('an honest gc writes a pack that verifies; a forged one is named, and the watch stops on it', async () => {
    const repo = await createTempRepo({ 'weight.txt': '1' });
    const gitDir = join(repo.dir, '.git');
    const before = packFiles(gitDir);
    repo.run('gc', '-q');
    const packed = writtenPacks(before, packFiles(gitDir));
    expect(packed).toHaveLength(1);
    expect(await repo.git.forgedPacks!(packed)).toEqual([]);

    const fresh = await createTempRepo({ 'weight.txt': '1' });
    const watch = await watchLooseObjects(fresh.git, 'the doer');
    const claim = fresh.run('rev-parse', 'HEAD:weight.txt').trim();
    const real = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: fresh.dir, input: '10' })
      .toString()
      .trim();
    const index = join(fresh.dir, forgePack(fresh.dir, claim, real));
    // What the forgery does: git reads the committed weight from the pack.
    expect(fresh.run('show', 'HEAD:weight.txt')).toBe('10');
    expect(await fresh.git.forgedPacks!([index])).toEqual([index]);
    const stopped = await watch.check().catch((error: unknown) => error);
    expect(stopped).toBeInstanceOf(ForgedObjectError);
    expect((stopped as Error).message).toMatch(
      /a pack the doer wrote \(pack-[0-9a-f]{12} holds other objects/,
    );
  });

  it('names the index of a pack made, or written to another size, not one removed or whose times alone moved', () => {
    // Identities as the fingerprint takes them: mode, size, inode, mtime, ctime.
    const before = new Map([
      ['/g/objects/pack/pack-a.idx', '33188:100:1:10:10'],
      ['/g/objects/pack/pack-a.pack', '33188:900:2:10:10'],
      ['/g/objects/pack/pack-b.idx', '33188:100:3:10:10'],
      ['/g/objects/pack/pack-b.pack', '33188:900:4:10:10'],
      ['/g/objects/pack/pack-d.idx', '33188:100:5:10:10'],
      ['/g/objects/pack/pack-d.pack', '33188:900:6:10:10'],
    ]);
    const after = new Map([
      ['/g/objects/pack/pack-a.idx', '33188:100:1:10:10'],
      ['/g/objects/pack/pack-a.pack', '33188:950:2:20:20'],
      ['/g/objects/pack/pack-c.idx', '33188:100:7:20:20'],
      ['/g/objects/pack/pack-c.pack', '33188:900:8:20:20'],
      // Freshened by a commit that wrote objects it holds: git set its times, nothing else.
      ['/g/objects/pack/pack-d.idx', '33188:100:5:10:10'],
      ['/g/objects/pack/pack-d.pack', '33188:900:6:20:20'],
    ]);
    expect(writtenPacks(before, after)).toEqual(['/g/objects/pack/pack-a.idx', '/g/objects/pack/pack-c.idx']);
  });

  it('does not take a pack a commit freshened for one written', async () => {
    const repo = await createTempRepo({ 'a/x.txt': '1\n', 'b/y.txt': '2\n' });
    const gitDir = join(repo.dir, '.git');
    repo.run('gc', '-q');
    const before = packFiles(gitDir);
    // Set back, so that git's freshening is seen whatever the clock's resolution.
    const pack = [...before.keys()].find((path) => path.endsWith('.pack'))!;
    await utimes(pack, new Date(2020, 0, 1), new Date(2020, 0, 1));
    const set = packFiles(gitDir);
    await repo.write('a/x.txt', '3\n');
    repo.commitAll('two');
    // Git freshens the pack when the commit writes an object it holds (an unchanged tree), which it
    // skips when the index's cached trees spare it the write (seen once under load): freshened here as
    // git does, with utime, so the times move either way.
    await utimes(pack, new Date(), new Date());
    const after = packFiles(gitDir);
    expect(after.get(pack)).not.toBe(set.get(pack));
    expect(writtenPacks(set, after)).toEqual([]);
  });
});
