// The answer probe's throwaway checkout (src/infra/stubbed-checkout.ts): the files given are replaced
// (their mode kept), nothing of the repository changes, and the checkout is gone after; one that a
// Forge killed mid-probe left behind, folder and worktree entry, goes with the next probe.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempPrefixFor } from '../../src/infra/left-temp.js';
import { inStubbedCheckout } from '../../src/infra/stubbed-checkout.js';
import { createTempRepo } from '../support/git-repo.js';
import { deadPid } from '../support/pids.js';

function worktrees(dir: string): string[] {
  return execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: dir, encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith('worktree '));
}

describe('a stubbed checkout', () => {
  it('holds the texts given, with the modes the files had, and leaves nothing behind', async () => {
    const repo = await createTempRepo({ 'bin/run.py': 'print(1)\n', 'src/a.js': 'module.exports = 1;\n' });
    await chmod(join(repo.dir, 'bin/run.py'), 0o755);
    repo.commitAll('an executable');
    let seen: { text: string; mode: number; cwd: string } | undefined;
    await inStubbedCheckout(
      repo.dir,
      repo.git,
      new Map([
        ['bin/run.py', 'print(2)\n'],
        ['src/a.js', 'module.exports = 2;\n'],
      ]),
      async (cwd) => {
        seen = {
          text: await readFile(join(cwd, 'src/a.js'), 'utf8'),
          mode: (await stat(join(cwd, 'bin/run.py'))).mode & 0o777,
          cwd,
        };
      },
    );
    expect(seen?.text).toBe('module.exports = 2;\n');
    expect(seen?.mode).toBe(0o755);
    await expect(stat(seen?.cwd ?? '')).rejects.toThrow(/ENOENT/);
    expect(await repo.read('src/a.js')).toBe('module.exports = 1;\n');
    expect(worktrees(repo.dir)).toHaveLength(1);
  });

  it('removes the checkout a killed Forge left, and its worktree entry', async () => {
    const repo = await createTempRepo({ 'src/a.js': 'module.exports = 1;\n' });
    const left = join(tmpdir(), `${tempPrefixFor('forge-probe-', deadPid())}Ab3dE9`);
    await mkdir(left);
    repo.run('worktree', 'add', '--quiet', '--detach', join(left, 'tree'), 'HEAD');
    expect(worktrees(repo.dir)).toHaveLength(2);
    await inStubbedCheckout(repo.dir, repo.git, new Map([['src/a.js', '']]), async () => undefined);
    await expect(stat(left)).rejects.toThrow(/ENOENT/);
    expect(worktrees(repo.dir)).toHaveLength(1);
  });
});
