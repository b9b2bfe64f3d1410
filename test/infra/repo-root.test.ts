// Which repository a command started somewhere works on, and the one an agent in a worktree Forge
// made inside `.git/` reaches: the repository around that directory, not the worktree.
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createAgentExecutor } from '../../src/loop/agent-executor.js';
import { findRepoRoot, projectOfGitDir } from '../../src/infra/repo-root.js';
import type { AgentRequest } from '../../src/agents/types.js';
import type { Bead } from '../../src/beads/types.js';
import { okAgentResult } from '../support/agent-result.js';

async function repo(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'forge-root-')));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, '.git', 'forge', 'worktrees', 'bd-1', 'bd-2-1', 'src'), { recursive: true });
  await mkdir(join(dir, '.beads'));
  await mkdir(join(dir, 'pkg', 'deep'), { recursive: true });
  // A linked worktree has a `.git` file, and holds the tracked `.forge/` of the repository.
  const worktree = join(dir, '.git', 'forge', 'worktrees', 'bd-1', 'bd-2-1');
  await writeFile(join(worktree, '.git'), 'gitdir: ../../../../worktrees/bd-2-1\n');
  await mkdir(join(worktree, '.forge'));
  return dir;
}

describe('findRepoRoot', () => {
  it('finds the nearest .beads/ or .forge/ upwards, and inside git`s own directory the repository around it', async () => {
    const dir = await repo();
    expect(findRepoRoot(join(dir, 'pkg', 'deep'))).toBe(dir);
    const worktree = join(dir, '.git', 'forge', 'worktrees', 'bd-1', 'bd-2-1');
    expect(findRepoRoot(worktree)).toBe(dir);
    expect(findRepoRoot(join(worktree, 'src'))).toBe(dir);
  });

  it('names the repository whose .git/ holds a path', () => {
    expect(projectOfGitDir('/r/.git/forge/worktrees/e/b-1')).toBe('/r');
    expect(projectOfGitDir('/r/.git')).toBeUndefined();
    expect(projectOfGitDir('/r/src/.gitignore')).toBeUndefined();
    expect(projectOfGitDir('/r/src')).toBeUndefined();
  });
});

describe('an agent in an attempt worktree', () => {
  it('is pointed at the repository`s bead store; in the repository itself nothing is added', async () => {
    const dir = await repo();
    const seen: AgentRequest[] = [];
    const executor = createAgentExecutor({
      kind: 'agent',
      mode: 'full',
      env: { PATH: '/bin' },
      agents: () => ({
        name: 'fake',
        run: (request) => {
          seen.push(request);
          return Promise.resolve(okAgentResult());
        },
      }),
    });
    const bead: Bead = {
      id: 'bd-2',
      title: 'T',
      status: 'in_progress',
      priority: 2,
      issue_type: 'task',
      created_at: '2026-11-23T00:00:00Z',
      updated_at: '2026-11-23T00:00:00Z',
      labels: [],
    };
    const run = (cwd: string) =>
      executor.execute({
        bead,
        epicId: 'bd-1',
        role: 'worker',
        agentSpec: 'fake',
        agentFromLabel: false,
        attempt: 1,
        cwd,
        signal: new AbortController().signal,
        timeoutMs: 1000,
        transcriptPath: join(dir, 't.log'),
      });
    await run(join(dir, '.git', 'forge', 'worktrees', 'bd-1', 'bd-2-1', 'src'));
    await run(join(dir, 'pkg'));
    expect(seen.map((request) => request.env.BEADS_DIR)).toEqual([join(dir, '.beads'), undefined]);
  });
});
