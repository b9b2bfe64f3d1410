// A throwaway checkout of the repository's HEAD with some files' texts replaced, for a command to run in
// and be gone after: the answer probe (answer-probe.ts) runs the metric there on code that answers
// nothing. The user's tree, index and branches are not touched; the checkout is a linked worktree
// beside them, detached, removed with its folder however the command ends; one a killed Forge left is
// removed by the next probe on the host, whose own removal prunes its stale worktree entry.
import { chmod, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { fileStat, makeTempDir } from './fs-ops.js';
import type { Git } from './git-port.js';
import { ownTempPrefix, removeLeftTemps } from './left-temp.js';

const PROBE_PREFIX = 'forge-probe-';

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
  // Each time, not once a process: a probe is rare, and a long-lived caller (a test run) makes many.
  await removeLeftTemps(tmpdir(), PROBE_PREFIX).catch(() => undefined);
  const parent = await makeTempDir(ownTempPrefix(PROBE_PREFIX));
  const tree = join(parent, 'tree');
  try {
    await git.worktreeAdd(tree, { base: 'HEAD' });
    try {
      for (const name of DEPENDENCY_DIRS) {
        const there = join(repo, name);
        if ((await fileStat(join(tree, name))) === undefined && (await fileStat(there)) !== undefined)
          await symlink(there, join(tree, name));
      }
      for (const [path, text] of texts) {
        // The stub keeps the file's mode: a program the metric runs by its path stays one it can run.
        const mode = (await stat(join(tree, path)).catch(() => undefined))?.mode;
        await writeFileAtomic(join(tree, path), text, { durable: false });
        if (mode !== undefined) await chmod(join(tree, path), mode & 0o7777);
      }
      return await run(tree);
    } finally {
      await git.worktreeRemove(tree);
    }
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}
