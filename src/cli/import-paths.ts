// Where `forge-pack import --sync-back` records what each imported bead came from (no zod here: every
// run asks whether the file exists, and loads its reader only when it does).
import { join } from 'node:path';

export const IMPORTS_PATH = join('.forge', 'imports.json');
