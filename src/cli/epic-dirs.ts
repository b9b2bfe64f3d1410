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
  const workspace = await findLoopWorkspace(cwd, epicId);
  return createRunDir(
    workspace ?? join(cwd, '.forge', 'epics', epicId.replace(/[^A-Za-z0-9._-]/g, '_')),
    cwd,
  );
}
