// Where an epic's run files live: its autoresearch workspace when it has one, else .forge/epics/<epic>.
import { join } from 'node:path';
import { findLoopWorkspace } from '../autoresearch/workspace.js';
import { createRunDir, type RunDir } from '../infra/run-dir.js';

export {
  findLoopWorkspace,
  LOOPS_REGISTRY_PATH,
  readLoopsRegistry,
  type LoopsRegistry,
} from '../autoresearch/workspace.js';

export async function runDirFor(cwd: string, epicId: string): Promise<RunDir> {
  return epicRunDir(cwd, epicId, await findLoopWorkspace(cwd, epicId));
}

/** runDirFor when the epic's loop workspace is known already (undefined: the epic has none). */
export function epicRunDir(cwd: string, epicId: string, workspace: string | undefined): RunDir {
  return createRunDir(
    workspace ?? join(cwd, '.forge', 'epics', epicId.replace(/[^A-Za-z0-9._-]/g, '_')),
    cwd,
  );
}
