// What agent CLIs load from the user's home on every run: instructions (Claude Code's CLAUDE.md and
// rules, Gemini's GEMINI.md, opencode's and Codex's AGENTS.md), settings with hooks that run commands
// in every session, and folders of agents, skills, commands and plugins. An agent with a shell can
// write them, and every later run (a judge's included) would read its words or run its commands: the
// runner puts them back after each run and names what it put back.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readFileIfExists, writeFileAtomic } from './atomic-file.js';
import { listEntries, makeDir, removePath } from './fs-ops.js';

/** The files and folders one agent run must leave as it found them. */
export interface HomeConfig {
  files: string[];
  /** Every file under each, at any depth. */
  dirs: string[];
}

/** Where each known CLI reads its user-level configuration, for the environment the agent runs in. */
export function homeAgentConfig(env: Readonly<Record<string, string | undefined>>): HomeConfig {
  const home = env.HOME;
  if (home === undefined || home === '') return { files: [], dirs: [] };
  const claude = env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
  const gemini = join(home, '.gemini');
  const opencode = join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'opencode');
  const codex = env.CODEX_HOME ?? join(home, '.codex');
  const under = (dir: string, names: readonly string[]) => names.map((name) => join(dir, name));
  return {
    files: [
      ...under(claude, ['CLAUDE.md', 'settings.json']),
      // Not ~/.gemini/settings.json: Gemini CLI 0.61 rewrites it itself during a run (seen).
      ...under(gemini, ['GEMINI.md']),
      ...under(opencode, ['AGENTS.md', 'opencode.json', 'opencode.jsonc', 'config.json']),
      // config.toml can name a `notify` command run after every turn, and MCP servers.
      ...under(codex, ['AGENTS.md', 'AGENTS.override.md', 'config.toml']),
    ],
    dirs: [
      ...under(claude, ['rules', 'agents', 'skills', 'commands', 'output-styles', 'hooks']),
      ...under(gemini, ['extensions', 'commands']),
      ...under(opencode, ['agent', 'agents', 'command', 'commands', 'plugin', 'plugins', 'mode', 'modes']),
      ...under(codex, ['prompts', 'skills']),
    ],
  };
}

/** Each file's content (undefined: there is none), and the files each folder held. */
export interface FileContents {
  files: ReadonlyMap<string, string | undefined>;
  dirs: ReadonlyMap<string, ReadonlySet<string>>;
}

/** A folder with more files than this is not watched past them (a bound, not a limit users meet). */
const MAX_FILES_PER_DIR = 2000;

/** The files under `dir` (symbolic links to folders are not followed); none when it is not there. */
async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string): Promise<void> => {
    for (const entry of await listEntries(path)) {
      if (found.length >= MAX_FILES_PER_DIR) return;
      const child = join(path, entry.name);
      if (entry.kind === 'dir') await walk(child);
      else found.push(child);
    }
  };
  await walk(dir);
  return found;
}

/**
 * Whether anything is at `path`, asked synchronously. Most of these paths are missing (the CLIs a user
 * does not have): a stat answers at once, where reading or walking a missing path through the promise
 * API costs a thread-pool round trip and an Error. With an empty home that was ~3 ms of the runner's
 * CPU per bead (snapshot and restore), a quarter of its own time per bead.
 */
const present = (path: string): boolean => existsSync(path);

/** A file's content; undefined when there is none (or it is not a readable file). */
async function contentOf(path: string): Promise<string | undefined> {
  return present(path) ? await readFileIfExists(path).catch(() => undefined) : undefined;
}

export async function readContents(config: HomeConfig): Promise<FileContents> {
  const files = new Map<string, string | undefined>();
  const dirs = new Map<string, ReadonlySet<string>>();
  const read = async (path: string) => files.set(path, await contentOf(path));
  for (const path of config.files) await read(path);
  for (const dir of config.dirs) {
    const held = present(dir) ? await filesUnder(dir) : [];
    dirs.set(dir, new Set(held));
    for (const path of held) await read(path);
  }
  return { files, dirs };
}

/** Writes `content` at `path`, whatever took its place (a folder) or went from above it. */
async function putBack(path: string, content: string): Promise<void> {
  await removePath(path, { recursive: true });
  await makeDir(dirname(path));
  await writeFileAtomic(path, content);
}

/**
 * Puts back every file that differs from `before` (removing one that was not there, a new file in a
 * watched folder too); names them.
 */
export async function restoreChanged(before: FileContents): Promise<string[]> {
  const restored: string[] = [];
  for (const [path, content] of before.files) {
    const now = await contentOf(path);
    if (now === content) continue;
    if (content === undefined) await removePath(path);
    else await putBack(path, content);
    restored.push(path);
  }
  for (const [dir, held] of before.dirs) {
    if (!present(dir)) continue;
    for (const path of await filesUnder(dir)) {
      if (held.has(path) || before.files.has(path)) continue;
      await removePath(path);
      restored.push(path);
    }
  }
  return restored;
}
