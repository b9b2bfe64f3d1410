// What agent CLIs load from the user's home on every run: instructions (Claude Code's CLAUDE.md and
// rules, Gemini's GEMINI.md, opencode's and Codex's AGENTS.md), settings with hooks that run commands
// in every session, and folders of agents, skills, commands and plugins. An agent with a shell can
// write them, and every later run (a judge's included) would read its words or run its commands: the
// runner puts them back after each run and names what it put back.
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { READ_FLAGS, writeFileAtomic } from './atomic-file.js';
import { makeDir, removePath } from './fs-ops.js';

/** The files and folders one agent run must leave as it found them. */
export interface HomeConfig {
  files: string[];
  /** Every file under each, at any depth. */
  dirs: string[];
  /** The home `~/` means in the paths these files name (namedFiles). */
  home?: string;
}

// What opencode loads from each of its config folders: its config, and folders of agents, commands,
// modes, plugins (code it runs in-process) and skills (offered to the model, a judge's included).
const OPENCODE_FILES = ['opencode.json', 'opencode.jsonc'];
const OPENCODE_DIRS = ['agent', 'agents', 'command', 'commands', 'mode', 'modes', 'plugin', 'plugins'];
const OPENCODE_SKILLS = ['skill', 'skills'];

/**
 * Where each known CLI reads its configuration for the environment the agent runs in: the user's
 * (under HOME, or where the user's env moves it) and the machine's (`etc`, /etc by default), which an
 * agent running as root (in a container, as README suggests) can write as well.
 */
export function homeAgentConfig(env: Readonly<Record<string, string | undefined>>, etc = '/etc'): HomeConfig {
  const under = (dir: string, names: readonly string[]) => names.map((name) => join(dir, name));
  const given = (value: string | undefined) => (value === undefined || value === '' ? [] : [value]);
  // The machine's, read whoever runs (opencode's managed config, Claude Code's managed settings,
  // memory and MCP servers, Codex's system config, Gemini CLI's system settings and defaults).
  const system: HomeConfig = {
    files: [
      ...under(join(etc, 'opencode'), OPENCODE_FILES),
      ...under(join(etc, 'claude-code'), ['managed-settings.json', 'managed-mcp.json', 'CLAUDE.md']),
      ...under(join(etc, 'codex'), ['config.toml', 'managed_config.toml', 'requirements.toml']),
      env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || join(etc, 'gemini-cli', 'settings.json'),
      env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH || join(etc, 'gemini-cli', 'system-defaults.json'),
    ],
    dirs: [join(etc, 'claude-code', 'managed-settings.d')],
  };
  const home = env.HOME;
  if (home === undefined || home === '') return system;
  const claude = env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
  const gemini = join(home, '.gemini');
  const opencode = join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'opencode');
  // opencode also loads ~/.opencode and OPENCODE_CONFIG_DIR as config folders, with or without a
  // project's config (seen in 1.18.33: a read-only judge took `instructions` from ~/.opencode).
  const opencodeFolders = [join(home, '.opencode'), ...given(env.OPENCODE_CONFIG_DIR)];
  const codex = env.CODEX_HOME ?? join(home, '.codex');
  return {
    home,
    files: [
      ...system.files,
      ...under(claude, ['CLAUDE.md', 'settings.json']),
      // Not ~/.gemini/settings.json: Gemini CLI 0.61 rewrites it itself during a run (seen). A
      // read-only run takes nothing from it that starts a command (agents/gemini-settings.ts).
      ...under(gemini, ['GEMINI.md']),
      // `config` (TOML) is turned into config.json by the next opencode to start.
      ...under(opencode, ['AGENTS.md', ...OPENCODE_FILES, 'config.json', 'config']),
      ...opencodeFolders.flatMap((folder) => under(folder, OPENCODE_FILES)),
      ...given(env.OPENCODE_CONFIG),
      // config.toml can name a `notify` command run after every turn, and MCP servers.
      ...under(codex, ['AGENTS.md', 'AGENTS.override.md', 'config.toml']),
    ],
    dirs: [
      ...system.dirs,
      ...under(claude, ['rules', 'agents', 'skills', 'commands', 'output-styles', 'hooks']),
      // policies: rules that allow a tool (a write in a read-only run) or deny one.
      ...under(gemini, ['extensions', 'commands', 'skills', 'agents', 'policies']),
      ...[opencode, ...opencodeFolders].flatMap((folder) =>
        under(folder, [...OPENCODE_DIRS, ...OPENCODE_SKILLS]),
      ),
      // rules/: Codex's exec policy (`*.rules`), which can let commands run without asking.
      ...under(codex, ['prompts', 'skills', 'rules']),
      // Skills every agent CLI that follows the shared layout loads (opencode, Codex, Gemini CLI).
      join(home, '.agents', 'skills'),
    ],
  };
}

/**
 * What a watched path holds that is not a regular file: a FIFO (an agent's `mkfifo` there blocked
 * every read of it, and the runner with it), a device, a folder. Never read; put back like a change.
 */
export const NOT_A_FILE = Symbol('not a regular file');

/** A watched file's content: its text, NOT_A_FILE, or undefined when nothing is there. */
export type HeldContent = string | typeof NOT_A_FILE | undefined;

/** Each file's content, and the files each folder held. */
export interface FileContents {
  files: ReadonlyMap<string, HeldContent>;
  dirs: ReadonlyMap<string, ReadonlySet<string>>;
}

/** A folder with more files than this is not watched past them (a bound, not a limit users meet). */
const MAX_FILES_PER_DIR = 2000;

/**
 * The files under `dir` (symbolic links to folders are not followed); none when it is not there. Read
 * in place, as the files are (contentOf).
 */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (found.length >= MAX_FILES_PER_DIR) return;
      const child = join(path, entry.name);
      if (entry.isDirectory()) walk(child);
      else found.push(child);
    }
  };
  walk(dir);
  return found;
}

/**
 * Whether anything is at `path`, asked synchronously. Most of these paths are missing (the CLIs a user
 * does not have): a stat answers at once without the Error a failed open would make (it was through
 * the promise API, with a thread-pool round trip besides). With an empty home that was ~3 ms of the runner's
 * CPU per bead (snapshot and restore), a quarter of its own time per bead.
 */
const present = (path: string): boolean => existsSync(path);

/**
 * A file's content; NOT_A_FILE for anything else there; undefined when there is none or it is
 * unreadable. Read in place: each is read before and after every agent run, and a user with a few
 * dozen skills installed in three folders has hundreds. Through the promise API (several thread-pool
 * trips a file) 623 files took 306 ms of a bead, before and after together; in place, 20 ms (bench
 * figure 13). Opened without blocking and read only when it is a regular file (atomic-file.ts), so a
 * FIFO is never waited on.
 */
function contentOf(path: string): HeldContent {
  if (!present(path)) return undefined;
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd, 'utf8') : NOT_A_FILE;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

export async function readContents(config: HomeConfig): Promise<FileContents> {
  const files = new Map<string, HeldContent>();
  const dirs = new Map<string, ReadonlySet<string>>();
  const read = (path: string) => files.set(path, contentOf(path));
  for (const path of config.files) read(path);
  for (const dir of config.dirs) {
    const held = present(dir) ? filesUnder(dir) : [];
    dirs.set(dir, new Set(held));
    for (const path of held) read(path);
  }
  // What the instruction and config files name for their CLI to read as well is read as they are
  // (one level deep; not what files in the folders mention, such as a skill naming `@scope/package`).
  for (const path of config.files) {
    const content = files.get(path);
    if (typeof content !== 'string') continue;
    for (const named of namedFiles(path, content, config.home))
      if (!files.has(named) && !isUnder(named, dirs.keys())) read(named);
  }
  return { files, dirs };
}

/** Whether `path` lies in one of `dirs`. */
function isUnder(path: string, dirs: Iterable<string>): boolean {
  for (const dir of dirs) if (path.startsWith(`${dir}${sep}`)) return true;
  return false;
}

/** Most paths an instruction file imports in one run: a bound, not a limit users meet. */
const MAX_NAMED_FILES = 50;

/**
 * The files an instruction or config file names for its CLI to read on every run: the `instructions`
 * of an opencode config (`~/`, absolute, or beside the config; globs and URLs left out) and the
 * `@path` imports of a CLAUDE.md, GEMINI.md or AGENTS.md (`~/`, absolute, or beside the file). A user's
 * CLAUDE.md that imports `@~/notes/style.md` makes that file an instruction too.
 */
export function namedFiles(path: string, content: string, home: string | undefined): string[] {
  const name = basename(path);
  const beside = dirname(path);
  const resolved = (ref: string): string | undefined => {
    if (ref.includes('*') || /^[a-z]+:\/\//i.test(ref)) return undefined;
    if (ref.startsWith('~/')) return home === undefined ? undefined : join(home, ref.slice(2));
    return isAbsolute(ref) ? normalize(ref) : join(beside, ref);
  };
  let refs: string[] = [];
  if (/^(opencode\.jsonc?|config\.json)$/.test(name)) {
    const list = /"instructions"\s*:\s*\[([^\]]*)\]/.exec(content)?.[1] ?? '';
    refs = [...list.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!);
  } else if (/\.md$/i.test(name)) {
    refs = [...content.matchAll(/(?:^|\s)@((?:~\/|\/|\.{1,2}\/)?[\w.\-/~]+)/g)]
      // A sentence's full stop after a path is not part of it.
      .map((match) => match[1]!.replace(/\.+$/, ''))
      .filter((ref) => ref.includes('/') || /\.md$/i.test(ref));
  }
  const paths = refs.map(resolved).filter((ref): ref is string => ref !== undefined && ref !== path);
  return [...new Set(paths)].slice(0, MAX_NAMED_FILES);
}

/** Writes `content` at `path`, whatever took its place (a folder) or went from above it. */
async function putBack(path: string, content: string): Promise<void> {
  await removePath(path, { recursive: true });
  await makeDir(dirname(path));
  await writeFileAtomic(path, content);
}

/** What opencode writes as its global config when it finds none (1.18.33): a schema and nothing else. */
const OPENCODE_SCHEMA = 'https://opencode.ai/config.json';

/**
 * A file a CLI makes by itself on its first run, holding nothing that changes a later run: opencode's
 * `opencode.jsonc` with only its `$schema`. Left in place, it is not tamper (every first opencode run
 * under a home without its config would otherwise be).
 */
function isOwnStub(path: string, content: string): boolean {
  if (!/[\\/]opencode[\\/]opencode\.jsonc?$|[\\/]opencode[\\/]config\.json$/.test(path)) return false;
  try {
    const parsed: unknown = JSON.parse(content);
    return (
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      Object.keys(parsed).length === 1 &&
      (parsed as { $schema?: unknown }).$schema === OPENCODE_SCHEMA
    );
  } catch {
    return false;
  }
}

/**
 * Puts back every file that differs from `before` (removing one that was not there, a new file in a
 * watched folder too); names them.
 */
export async function restoreChanged(before: FileContents): Promise<string[]> {
  const restored: string[] = [];
  for (const [path, content] of before.files) {
    const now = contentOf(path);
    if (now === content) continue;
    if (content === undefined && typeof now === 'string' && isOwnStub(path, now)) continue;
    // A FIFO or folder put where a file was, or where none was, goes too (a folder with what it holds).
    if (typeof content === 'string') await putBack(path, content);
    else if (now !== undefined) await removePath(path, { recursive: now === NOT_A_FILE });
    // What was there was no file (a link to a user's skill folder) and is gone: nothing to put back.
    else continue;
    restored.push(path);
  }
  for (const [dir, held] of before.dirs) {
    if (!present(dir)) continue;
    for (const path of filesUnder(dir)) {
      if (held.has(path) || before.files.has(path)) continue;
      await removePath(path);
      restored.push(path);
    }
  }
  return restored;
}
