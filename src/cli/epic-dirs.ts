// Where an epic's run files live: its autoresearch workspace when it has one, else .forge/epics/<epic>.
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { readFileIfExists } from '../infra/atomic-file.js';
import { createRunDir, type RunDir } from '../infra/run-dir.js';
import { parseConfigText } from './forge-config.js';

export const LOOPS_REGISTRY_PATH = join('.forge', 'loops.json');

const registrySchema = z.record(
  z.string(),
  z.strictObject({ workspace: z.string().min(1), subject: z.string().optional() }),
);
export type LoopsRegistry = z.infer<typeof registrySchema>;

export async function readLoopsRegistry(cwd: string): Promise<LoopsRegistry> {
  const text = await readFileIfExists(join(cwd, LOOPS_REGISTRY_PATH));
  return text === undefined ? {} : parseConfigText(LOOPS_REGISTRY_PATH, text, registrySchema);
}

/** The autoresearch workspace registered for this epic, as an absolute path, if any. */
export async function findLoopWorkspace(cwd: string, epicId: string): Promise<string | undefined> {
  const entry = (await readLoopsRegistry(cwd))[epicId];
  return entry === undefined ? undefined : resolve(cwd, entry.workspace);
}

export async function runDirFor(cwd: string, epicId: string): Promise<RunDir> {
  const workspace = await findLoopWorkspace(cwd, epicId);
  return createRunDir(workspace ?? join(cwd, '.forge', 'epics', epicId.replace(/[^A-Za-z0-9._-]/g, '_')));
}
