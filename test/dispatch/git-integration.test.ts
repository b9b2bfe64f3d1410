// Landing an attempt's commit on the integration branch: one commit per bead with the attempt's
// message and author, and a conflict that never touches the work tree (so a kill mid-landing leaves
// no merge or cherry-pick for a person to abort).
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createGitIntegration } from '../../src/dispatch/attempt-git.js';
import { commandPath } from '../support/command-path.js';
import { createTempRepo } from '../support/git-repo.js';

async function repoWithAttempt() {
  const repo = await createTempRepo({ 'notes.txt': 'one\n', 'README.md': 'hello\n' });
  const base = repo.head();
  repo.run('checkout', '-q', '-b', 'forge/attempts/bd-1/bd-2-1');
  await repo.write('notes.txt', 'one\nfrom the attempt\n');
  await repo.write('added.txt', 'new\n');
  repo.run('add', '-A');
  repo.run(
    '-c',
    'user.name=Attempt Author',
    'commit',
    '-q',
    '-m',
    'ralph-loop: bd-2 add notes\n\nForge-Bead: bd-2\nForge-Attempt: r1.bd-2.1',
  );
  const attempt = repo.head();
  repo.run('checkout', '-q', 'main');
  return { repo, base, attempt, integration: createGitIntegration(repo.dir, repo.env) };
}

describe('git integration', () => {
  it('lands an attempt as one commit on the head, with its message, trailers and author', async () => {
    const { repo, base, attempt, integration } = await repoWithAttempt();
    await repo.write('README.md', 'hello again\n');
    const moved = repo.commitAll('another bead landed first');
    const landed = await integration.apply(attempt);
    expect(landed.ok).toBe(true);
    if (!landed.ok) return;
    expect(landed.sha).toBe(repo.head());
    expect(repo.run('rev-parse', `${landed.sha}^`).trim()).toBe(moved);
    expect(await repo.read('notes.txt')).toBe('one\nfrom the attempt\n');
    expect(await repo.read('README.md')).toBe('hello again\n');
    expect(repo.run('log', '-1', '--format=%an|%s').trim()).toBe('Attempt Author|ralph-loop: bd-2 add notes');
    expect(await integration.landed('bd-2', ['r1'])).toBe(landed.sha);
    // Only the named run's attempts: another run's, or an id that merely starts the same, are not it.
    expect(await integration.landed('bd-2', ['r0'])).toBeUndefined();
    expect(await integration.landed('bd-2', ['r'])).toBeUndefined();
    // Any of the runs named: the line of runs whose work a run took on.
    expect(await integration.landed('bd-2', ['r0', 'r1'])).toBe(landed.sha);
    expect(await integration.landed('bd-2', [])).toBeUndefined();
    expect(repo.run('status', '--porcelain').trim()).toBe('');
    expect(base).not.toBe(landed.sha);
  });

  it('a conflict names the file and leaves branch, index and work tree untouched', async () => {
    const { repo, attempt, integration } = await repoWithAttempt();
    await repo.write('notes.txt', 'one\nfrom another bead\n');
    const head = repo.commitAll('a conflicting bead landed first');
    const before = await stat(join(repo.dir, 'notes.txt'));
    const landed = await integration.apply(attempt);
    expect(landed).toMatchObject({ ok: false });
    if (landed.ok) return;
    expect(landed.conflict).toContain('Merge conflict in notes.txt');
    expect(repo.head()).toBe(head);
    expect(repo.run('status', '--porcelain').trim()).toBe('');
    // Never written, not even for a moment: a kill then would have left conflict markers behind.
    const after = await stat(join(repo.dir, 'notes.txt'));
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
    expect(await repo.exists('added.txt')).toBe(false);
  });

  it('a git too old for merge-tree --write-tree is named, with the version that works', async () => {
    const { repo, attempt } = await repoWithAttempt();
    // git 2.37 and older answer the unknown mode with usage (exit 129).
    // Outside the working tree: Forge never runs a git a PATH entry inside the tree holds.
    const bin = await mkdtemp(join(tmpdir(), 'forge-old-git-'));
    onTestFinished(() => rm(bin, { recursive: true, force: true }));
    const real = commandPath('git');
    await writeFile(
      join(bin, 'git'),
      `#!/bin/sh\ncase " $* " in *" merge-tree "*) exit 129 ;; esac\nexec ${real} "$@"\n`,
    );
    await chmod(join(bin, 'git'), 0o755);
    const old = createGitIntegration(repo.dir, { ...repo.env, PATH: `${bin}:${repo.env.PATH ?? ''}` });
    await expect(old.apply(attempt)).rejects.toMatchObject({
      message: expect.stringContaining('git merge-tree --write-tree') as unknown,
      hint: 'Install git 2.38 or newer, or run without --parallel.',
    });
  });
});
