// Archiving a workspace's loop so a new one can start there (`forge-pack loop --force`).
import { join, relative } from 'node:path';
import type { LoopFiles } from '../infra/loop-files.js';
import { configEpicId, readLoopsRegistry, registerLoop, type WorkspacePaths } from './workspace.js';

export const ARCHIVE_DIR = 'archive';
/** Workspace entries that belong to the workspace, not to one loop: kept when a loop is archived. */
const KEPT_ON_ARCHIVE = new Set(['templates', ARCHIVE_DIR]);

/**
 * Moves every file of the old loop into `archive/<time>/` (user templates stay), and points the old
 * epic's registry entry there, so its status and history stay readable.
 */
export async function archiveLoop(
  files: LoopFiles,
  repo: string,
  paths: WorkspacePaths,
  now: number,
): Promise<string> {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  const target = join(paths.root, ARCHIVE_DIR, stamp);
  const oldEpic = await configEpicId(paths.root);
  await files.mkdir(target);
  for (const name of (await files.list(paths.root)) ?? []) {
    if (!KEPT_ON_ARCHIVE.has(name)) await files.rename(join(paths.root, name), join(target, name));
  }
  if (oldEpic !== undefined && (await readLoopsRegistry(repo))[oldEpic] !== undefined) {
    const entry = (await readLoopsRegistry(repo))[oldEpic];
    await registerLoop(repo, oldEpic, {
      workspace: relative(repo, target).split('\\').join('/'),
      subject: entry?.subject,
      store: entry?.store,
    });
  }
  return target;
}
