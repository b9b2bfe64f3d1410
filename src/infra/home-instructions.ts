// The instruction files agent CLIs load from the user's home on every run (Claude Code's CLAUDE.md,
// Gemini's GEMINI.md, opencode's and Codex's AGENTS.md). An agent with a shell can write them, and
// every later run (a judge's included) would read its words: the runner puts them back after each run.
import { join } from 'node:path';
import { readFileIfExists, writeFileAtomic } from './atomic-file.js';
import { removePath } from './fs-ops.js';

/** Where each known CLI reads its user-level instructions, for the environment the agent runs in. */
export function homeInstructionFiles(env: Readonly<Record<string, string | undefined>>): string[] {
  const home = env.HOME;
  if (home === undefined || home === '') return [];
  const config = env.XDG_CONFIG_HOME ?? join(home, '.config');
  return [
    join(env.CLAUDE_CONFIG_DIR ?? join(home, '.claude'), 'CLAUDE.md'),
    join(home, '.gemini', 'GEMINI.md'),
    join(config, 'opencode', 'AGENTS.md'),
    join(env.CODEX_HOME ?? join(home, '.codex'), 'AGENTS.md'),
  ];
}

/** Each file's content (undefined: there is none). */
export type FileContents = ReadonlyMap<string, string | undefined>;

export async function readContents(paths: readonly string[]): Promise<FileContents> {
  const contents = new Map<string, string | undefined>();
  for (const path of paths) contents.set(path, await readFileIfExists(path).catch(() => undefined));
  return contents;
}

/** Puts back every file that differs from `before` (removing one that was not there); names them. */
export async function restoreChanged(before: FileContents): Promise<string[]> {
  const restored: string[] = [];
  for (const [path, content] of before) {
    const now = await readFileIfExists(path).catch(() => undefined);
    if (now === content) continue;
    if (content === undefined) await removePath(path);
    else await writeFileAtomic(path, content);
    restored.push(path);
  }
  return restored;
}
