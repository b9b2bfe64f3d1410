// A throwaway checkout of the repository's HEAD with some files' texts replaced, for a command to run in
// and be gone after: the answer probe (answer-probe.ts) runs the metric there on code that answers
// nothing. The user's tree, index and branches are not touched; the checkout is a linked worktree
// beside them, detached, removed with its folder however the command ends.
import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { fileStat, makeTempDir } from './fs-ops.js';
import type { Git } from './git-port.js';

/**
 * What a checkout of HEAD lacks that a metric needs to run: the installed dependencies git ignores.
 * Linked from the repository, never copied (the metric reads them; nothing in a probe writes there).
 */
const DEPENDENCY_DIRS = ['node_modules', '.venv', 'venv'];

export async function inStubbedCheckout<T>(
  repo: string,
  git: Pick<Git, 'worktreeAdd' | 'worktreeRemove'>,
  texts: ReadonlyMap<string, string>,
  run: (cwd: string) => Promise<T>,
): Promise<T> {
  const parent = await makeTempDir('forge-probe-');
  const tree = join(parent, 'tree');
  try {
    await git.worktreeAdd(tree, { base: 'HEAD' });
    try {
      for (const name of DEPENDENCY_DIRS) {
        const there = join(repo, name);
        if ((await fileStat(join(tree, name))) === undefined && (await fileStat(there)) !== undefined)
          await symlink(there, join(tree, name));
      }
      for (const [path, text] of texts) await writeFileAtomic(join(tree, path), text, { durable: false });
      return await run(tree);
    } finally {
      await git.worktreeRemove(tree);
    }
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}
