// What a run leaves in git's own store (git-state.ts), on a real repository: refs of Forge's shapes
// stay only while another Forge runner is at work, and the runner's own kept copies always.
import { spawn } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { otherRunnerLive, watchGitState } from '../../src/infra/git-state.js';
import { createTempRepo } from '../support/git-repo.js';

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

  it('sees another runner at work: a process whose command line names ralph-loop', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', 'ralph-loop'], {
      stdio: 'ignore',
    });
    onTestFinished(() => void other.kill('SIGKILL'));
    await new Promise((done) => other.once('spawn', done));
    expect(otherRunnerLive()).toBe(true);
  });
});
