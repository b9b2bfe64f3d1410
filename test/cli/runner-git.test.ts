// The runner's git port on a real temp repository: a mechanical commit holds what the bead changed and
// never Forge's own folders, at the top of the tree or in the folder a project sits in.
import { describe, expect, it } from 'vitest';
import { createRunnerGit } from '../../src/cli/runner-git.js';
import { createTempRepo } from '../support/git-repo.js';

describe('runner git commits', () => {
  it("leaves out Forge's folders wherever the project sits in the tree", async () => {
    const repo = await createTempRepo({ 'README.md': 'hello\n', 'pkg/index.js': 'export {};\n' });
    const git = await createRunnerGit({ cwd: `${repo.dir}/pkg`, env: repo.env });
    if (git === undefined) throw new Error('not a git repository');
    const before = await git.dirtyPaths();
    await repo.write('pkg/index.js', 'export const answer = 42;\n');
    await repo.write('pkg/.forge/epics/bd-1/runs/run.jsonl', '{}\n');
    await repo.write('pkg/.beads/issues.jsonl', '{}\n');
    await repo.write('pkg/.autoresearch/research-log.jsonl', '{}\n');
    await repo.write('.forge/config.json', '{}\n');
    const { sha } = await git.commitChanges('ralph-loop: bd-1.1 change', before);
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.run('show', '--name-only', '--format=', 'HEAD').trim()).toBe('pkg/index.js');
  });
});
