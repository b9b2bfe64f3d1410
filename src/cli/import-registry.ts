// `.forge/imports.json`: which imported beads write their item back as done when they close (--sync-back).
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../infra/atomic-file.js';
import { readJsonFile } from '../infra/json-file.js';
import { IMPORT_FORMATS } from '../beads/import/types.js';
import { IMPORTS_PATH } from './import-paths.js';

export { IMPORTS_PATH } from './import-paths.js';

const entrySchema = z
  .object({
    format: z.enum(IMPORT_FORMATS),
    /** The item's file, relative to the repository root. */
    file: z.string().min(1),
    item: z.string(),
  })
  .strict();
const registrySchema = z
  .object({ version: z.literal(1), sync_back: z.record(z.string(), entrySchema) })
  .strict();

export type SyncBackEntry = z.infer<typeof entrySchema>;
export type ImportsRegistry = z.infer<typeof registrySchema>;

export async function readImportsRegistry(repo: string): Promise<ImportsRegistry> {
  const registry = await readJsonFile(join(repo, IMPORTS_PATH), registrySchema, {
    file: IMPORTS_PATH,
    hint: `Fix or delete ${IMPORTS_PATH}; importing again with --sync-back rewrites it.`,
  });
  return registry ?? { version: 1, sync_back: {} };
}

/** Adds (or replaces) entries, written atomically. */
export async function recordSyncBack(
  repo: string,
  entries: Readonly<Record<string, SyncBackEntry>>,
): Promise<void> {
  const registry = await readImportsRegistry(repo);
  const sync_back = { ...registry.sync_back, ...entries };
  const sorted = Object.fromEntries(
    Object.entries(sync_back).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  await writeJsonAtomic(join(repo, IMPORTS_PATH), { version: 1, sync_back: sorted });
}
