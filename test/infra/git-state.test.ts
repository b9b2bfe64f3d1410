// What a run leaves in git's own store (git-state.ts), on a real repository: refs of Forge's shapes
// stay only while another Forge runner is at work, and the runner's own kept copies always.
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createGit } from '../../src/infra/git.js';
import { otherGitAtWork, otherRunnerLive, watchGitState } from '../../src/infra/git-state.js';
import { createTempRepo } from '../support/git-repo.js';
import { tempTree } from '../support/temp-tree.js';

describe('watchGitState', () => {
  it('deletes refs the run made, the runner’s own kept copies and the loop’s branch aside', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const watch = await watchGitState(repo.git);
    repo.run('tag', 'made');
    repo.run('update-ref', 'refs/forge/not-a-shape-of-forge', 'HEAD');
    repo.run('update-ref', 'refs/forge/undone/20261203-1/files/a.txt', 'HEAD:a.txt');
    repo.run('commit', '-q', '--allow-empty', '-m', 'on the loop branch');
    const undo = await watch!.undo('main', ['refs/forge/undone/20261203-1']);
    expect(undo.removedRefs.map((r) => r.ref)).toEqual(['refs/forge/not-a-shape-of-forge', 'refs/tags/made']);
    const left = repo.run('for-each-ref', '--format=%(refname)');
    expect(left).toContain('refs/forge/undone/20261203-1/files/a.txt');
    expect(left).toContain('refs/heads/main');
  });

  it('leaves what the user does meanwhile in another worktree: a branch checked out there, a stash made there', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const loop = join(repo.dir, '.forge', 'worktrees', 'e');
    await repo.git.worktreeAdd(loop, { branch: 'ralph-loop/e' });
    const inLoop = createGit({ cwd: loop, env: repo.env });
    const watch = await watchGitState(inLoop);
    // The user, in the main checkout: a new branch with a commit, and a stash.
    repo.run('switch', '-q', '-c', 'fix');
    await repo.write('a.txt', 'fixed\n');
    const fix = repo.commitAll('the user’s fix');
    await repo.write('a.txt', 'half done\n');
    repo.run('stash', 'push', '-q', '-m', 'the user’s');
    // The doer, in the loop's worktree: a tag.
    execFileSync('git', ['tag', 'flag'], { cwd: loop, env: repo.env });
    const undo = await watch!.undo('ralph-loop/e');
    expect(undo.removedRefs.map((r) => r.ref)).toEqual(['refs/tags/flag']);
    expect(undo.restoredRefs).toEqual([]);
    expect(repo.run('rev-parse', 'fix').trim()).toBe(fix);
    expect(repo.run('cat-file', '-t', fix).trim()).toBe('commit');
    expect(repo.run('stash', 'list')).toContain('the user’s');
    repo.run('stash', 'pop', '-q');
    expect(await repo.read('a.txt')).toBe('half done\n');
  });

  it('removes an object nothing reaches, but not while someone else’s git is at work in the repository', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const blob = () =>
      execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo.dir, input: `${Math.random()}` })
        .toString()
        .trim();
    const first = await watchGitState(repo.git);
    const lone = blob();
    expect((await first!.undo('main')).objects).toEqual([lone]);
    expect(() => repo.run('cat-file', '-e', lone)).toThrow();
    // An editor's git at work here (it may have written objects it has not named yet): nothing goes.
    const editor = spawn('git', ['cat-file', '--batch'], {
      cwd: repo.dir,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    onTestFinished(() => void editor.kill('SIGKILL'));
    await new Promise((done) => editor.once('spawn', done));
    const second = await watchGitState(repo.git);
    const kept = blob();
    expect((await second!.undo('main')).objects).toEqual([]);
    expect(repo.run('cat-file', '-t', kept).trim()).toBe('blob');
    expect(otherGitAtWork([repo.dir])).toBe(true);
    expect(otherGitAtWork([await tempTree({}, 'forge-nobody-')])).toBe(false);
  });

  it('sees another runner at work: a process whose command line names ralph-loop', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', 'ralph-loop'], {
      stdio: 'ignore',
    });
    onTestFinished(() => void other.kill('SIGKILL'));
    await new Promise((done) => other.once('spawn', done));
    expect(otherRunnerLive()).toBe(true);
  });
});
