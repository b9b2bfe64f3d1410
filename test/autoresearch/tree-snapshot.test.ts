// The read-only step's snapshot and put-back (tree-snapshot.ts) on real temp repositories: what a step
// changed comes back, what it did not is left alone, and the git calls it takes to find out.
import { describe, expect, it } from 'vitest';
import { restoreTree, snapshotTree } from '../../src/autoresearch/tree-snapshot.js';
import { countedMethods } from '../support/counted-git.js';
import { createTempRepo } from '../support/git-repo.js';

describe('restoreTree', () => {
  it('puts back a step that renamed the branch it was on: the branch is there again, at its commit', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n' });
    const base = repo.head();
    const before = await snapshotTree(repo.git, []);
    repo.run('branch', '-m', 'main', 'renamed');
    await repo.write('src/a.ts', 'changed\n');
    repo.commitAll('the step’s commit');
    const change = await restoreTree(repo.git, before, []);
    expect(change.headMoved).toBe(true);
    expect(repo.run('symbolic-ref', '--short', 'HEAD').trim()).toBe('main');
    expect(repo.head()).toBe(base);
    expect(await repo.read('src/a.ts')).toBe('a\n');
  });

  it('puts back a step that committed on another branch, edited a tracked file and left a new one', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n', 'metric.sh': 'echo 1\n' });
    await repo.write('notes.md', 'the user’s, uncommitted\n');
    const base = repo.head();
    const before = await snapshotTree(repo.git, ['metric.sh']);

    repo.run('switch', '-q', '-c', 'elsewhere');
    await repo.write('src/a.ts', 'changed by the step\n');
    const moved = repo.commitAll('the step’s commit');
    await repo.write('metric.sh', 'echo 99\n');
    await repo.write('left.txt', 'new\n');
    await repo.write('notes.md', 'overwritten by the step\n');

    const change = await restoreTree(repo.git, before, []);
    expect(change).toEqual({
      keptUnder: expect.stringMatching(/^refs\/forge\/undone\//),
      paths: ['left.txt', 'metric.sh', 'notes.md', 'src/a.ts'],
      headMoved: true,
      movedTo: { sha: moved, branch: 'elsewhere' },
      // Its commit staged what it committed: with HEAD back at the base, the index still held that.
      indexChanged: true,
    });
    // What was undone is kept where gc keeps it, not only in the reflog: the commit, and each file as it
    // was left (a user's commit or edit made while an agent ran would be in it).
    const kept = change.keptUnder!;
    expect(repo.run('rev-parse', `${kept}/head`).trim()).toBe(moved);
    expect(repo.run('cat-file', 'blob', `${kept}/files/notes.md`)).toBe('overwritten by the step\n');
    expect(repo.run('cat-file', 'blob', `${kept}/files/left.txt`)).toBe('new\n');
    expect(repo.head()).toBe(base);
    expect(repo.run('symbolic-ref', '--short', 'HEAD').trim()).toBe('main');
    expect(await repo.read('src/a.ts')).toBe('a\n');
    expect(await repo.read('metric.sh')).toBe('echo 1\n');
    expect(await repo.read('notes.md')).toBe('the user’s, uncommitted\n');
    expect(await repo.exists('left.txt')).toBe(false);
    expect(repo.run('status', '--porcelain').trim()).toBe('?? notes.md');
  });

  it('pins what it saved while the step runs: a `git gc --prune=now` meanwhile loses nothing', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n' });
    await repo.write('notes.md', 'the user’s, uncommitted\n');
    await repo.write('src/a.ts', 'staged by the user\n');
    repo.run('add', 'src/a.ts');
    await repo.write('src/a.ts', 'and edited again\n');
    const before = await snapshotTree(repo.git);
    expect(before.pin).toMatch(/^refs\/forge\/saved\/step-/);

    await repo.write('notes.md', 'the step’s\n');
    repo.run('reset', '-q');
    await repo.write('src/a.ts', 'the step’s\n');
    repo.run('gc', '-q', '--prune=now');

    const change = await restoreTree(repo.git, before, []);
    expect(change.paths).toEqual(['notes.md', 'src/a.ts']);
    expect(change.indexChanged).toBe(true);
    expect(await repo.read('notes.md')).toBe('the user’s, uncommitted\n');
    expect(await repo.read('src/a.ts')).toBe('and edited again\n');
    expect(repo.run('show', ':src/a.ts')).toBe('staged by the user\n');
    // Dropped once put back; what was undone stays kept.
    expect(repo.run('for-each-ref', 'refs/forge/saved/')).toBe('');
    expect(repo.run('cat-file', 'blob', `${change.keptUnder}/files/notes.md`)).toBe('the step’s\n');
  });

  it('asks git once for HEAD and the status together, again for the status only after putting HEAD back', async () => {
    const repo = await createTempRepo({ 'src/a.ts': 'a\n' });
    await repo.write('notes.md', 'dirty\n');
    const counted = countedMethods(repo.git);
    const before = await snapshotTree(counted.git);
    expect(counted.calls.get('statusWithHead')).toBe(1);
    await repo.write('notes.md', 'the step wrote this\n');

    const { git, calls } = countedMethods(repo.git);
    const change = await restoreTree(git, before, []);
    expect(change.paths).toEqual(['notes.md']);
    expect(await repo.read('notes.md')).toBe('dirty\n');
    expect(calls.get('statusWithHead')).toBe(1);
    for (const method of ['headState', 'statusPorcelain', 'headSha']) expect(calls.get(method) ?? 0).toBe(0);

    // A step that committed: its commit undone first, then what is dirty is asked against HEAD.
    const again = await snapshotTree(repo.git);
    await repo.write('notes.md', 'committed by the step\n');
    repo.commitAll('the step');
    const moved = countedMethods(repo.git);
    const undone = await restoreTree(moved.git, again, []);
    expect(undone.headMoved).toBe(true);
    expect(undone.paths).toEqual(['notes.md']);
    expect(await repo.read('notes.md')).toBe('dirty\n');
    expect(moved.calls.get('statusPorcelain')).toBe(1);
  });
});
