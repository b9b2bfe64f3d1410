// `.forge/imports.json`: which imported beads write their item back as done when they close (--sync-back).
import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeJsonAtomic } from '../infra/atomic-file.js';
import { ConfigError } from '../infra/errors.js';
import { IMPORT_FORMATS } from '../beads/import/types.js';

export const IMPORTS_PATH = join('.forge', 'imports.json');

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
  const text = await readFileIfExists(join(repo, IMPORTS_PATH));
  if (text === undefined) return { version: 1, sync_back: {} };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${IMPORTS_PATH}: not valid JSON (${(error as Error).message}).`, {
      hint: `Fix or delete ${IMPORTS_PATH}; importing again with --sync-back rewrites it.`,
    });
  }
  const parsed = registrySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${IMPORTS_PATH}: ${issue.path.join('.') || '(root)'}: ${issue.message}.`, {
      hint: `Fix or delete ${IMPORTS_PATH}; importing again with --sync-back rewrites it.`,
    });
  }
  return parsed.data;
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
