// The settings Forge holds Gemini CLI to on every run, whatever the user's own settings say: a per-run
// system settings file (the layer that wins over user and workspace settings), passed by env variable.
import { createHash } from 'node:crypto';
import { chmod, mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { isNotFound, readFileIfExists, writeFileAtomic } from '../infra/atomic-file.js';
import type { AgentMode } from './types.js';

/** Where Gemini CLI reads its system settings from, absent GEMINI_CLI_SYSTEM_SETTINGS_PATH (Linux). */
export const GEMINI_DEFAULT_SYSTEM_SETTINGS = '/etc/gemini-cli/settings.json';

/**
 * Seen with 0.61: without these, the first request lists the working directory's tree (a loop's metric
 * script, other candidates' files), and GEMINI.md files are loaded from every directory between the
 * working directory and the first one above it holding `.git`: for a judge's copy in a temp directory
 * inside a repository, the directories of that repository.
 */
export const GEMINI_FORCED_SETTINGS = {
  context: { includeDirectoryTree: false, memoryBoundaryMarkers: [] as string[] },
};

/**
 * Left out of a read-only run's tools. `exit_plan_mode` is plan mode's way out, which headless Gemini CLI
 * approves by itself (seen, 0.61: "Plan approved. Switching to YOLO mode", then the judge's write_file
 * and shell command ran in the tree); `invoke_agent` starts sub-agents, which a judge has no use for;
 * the web tools go as they go for opencode's and Claude Code's judges (plan mode still offers a search).
 */
export const GEMINI_READ_ONLY_EXCLUDED_TOOLS = [
  'exit_plan_mode',
  'invoke_agent',
  'google_web_search',
  'web_fetch',
];

/**
 * What a read-only run takes from no settings layer (0.61's names): whatever starts a command in its
 * session (MCP servers, hooks, a tool discovery or call command), pre-approves tools, or widens what it
 * reads (more directories, other memory file names). A doer with a shell can write the user's
 * settings, and Gemini CLI rewrites that file itself during a run, so it cannot be put back like the
 * other files agents read from home: a judge is held apart from it instead.
 */
export const GEMINI_READ_ONLY_DROPPED: Readonly<Record<string, readonly string[] | true>> = {
  mcpServers: true,
  hooks: true,
  hooksConfig: true,
  tools: ['discoveryCommand', 'callCommand', 'allowed'],
  context: ['includeDirectories', 'loadMemoryFromIncludeDirectories', 'fileName'],
};

/** `settings` without what a read-only run must not take (GEMINI_READ_ONLY_DROPPED). */
export function forReadOnly(settings: SettingsObject): SettingsObject {
  const kept: SettingsObject = {};
  for (const [key, value] of Object.entries(settings)) {
    const dropped = GEMINI_READ_ONLY_DROPPED[key];
    if (dropped === true) continue;
    const object = settingsObject.safeParse(value);
    if (dropped === undefined || !object.success) kept[key] = value;
    else
      kept[key] = Object.fromEntries(Object.entries(object.data).filter(([name]) => !dropped.includes(name)));
  }
  return kept;
}

/**
 * `base` with Forge's keys over it. A read-only run's excluded tools are added to any already
 * excluded, and what it must not take is left out (forReadOnly).
 */
export function withForgeSettings(base: SettingsObject, mode: AgentMode): SettingsObject {
  if (mode !== 'read-only') return mergeSettings(base, GEMINI_FORCED_SETTINGS);
  const merged = mergeSettings(forReadOnly(base), GEMINI_FORCED_SETTINGS);
  const tools = settingsObject.safeParse(merged.tools);
  const toolsObject = tools.success ? tools.data : {};
  const excluded = z.array(z.string()).safeParse(toolsObject.exclude);
  const exclude = [
    ...new Set([...(excluded.success ? excluded.data : []), ...GEMINI_READ_ONLY_EXCLUDED_TOOLS]),
  ];
  return { ...merged, tools: { ...toolsObject, exclude } };
}

/** What Gemini CLI prints on stderr when it will not use a system settings file (seen, 0.61). */
const SKIPPED_SETTINGS = /^Security Warning: Skipping system settings file '([^']+)'/;

const settingsObject = z.record(z.string(), z.unknown());
export type SettingsObject = z.infer<typeof settingsObject>;

export class GeminiSettingsError extends Error {}

/** Forge's settings dir, `$HOME/.cache/forge/gemini`, made 0700 (Gemini refuses a writable parent). */
export async function forgeGeminiDir(env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const forge = join(env.HOME ?? homedir(), '.cache', 'forge');
  const dir = join(forge, 'gemini');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // A directory that already existed keeps its mode through mkdir.
  await chmod(forge, 0o700);
  await chmod(dir, 0o700);
  return dir;
}

/**
 * Writes the merged settings (the system settings already in force, then Forge's keys over them) to
 * `$HOME/.cache/forge/gemini/<hash>.json` and returns the env that points Gemini CLI at it. Gemini CLI
 * ignores a system settings file if it or any directory above it is not owned by root or is writable by
 * group or others, hence a home directory and not the temp directory; the file is named by its content,
 * so runs with the same settings share it and concurrent writes are identical.
 */
export async function systemSettingsEnv(
  env: Readonly<Record<string, string | undefined>>,
  mode: AgentMode,
): Promise<Record<string, string | undefined>> {
  const existingPath = env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? GEMINI_DEFAULT_SYSTEM_SETTINGS;
  const existing = await readSettingsFile(existingPath, "Gemini CLI's system settings");
  const merged = withForgeSettings(existing, mode);
  const content = `${JSON.stringify(merged, null, 2)}\n`;
  const hash = createHash('sha256').update(content).digest('hex').slice(0, 20);
  const path = join(await forgeGeminiDir(env), `${hash}.json`);
  await writeFileAtomic(path, content);
  await chmod(path, 0o600);
  return { ...env, GEMINI_CLI_SYSTEM_SETTINGS_PATH: path };
}

/** The path Gemini CLI said it skipped, when a stderr line says so. */
export function skippedSettingsPath(line: string): string | undefined {
  return SKIPPED_SETTINGS.exec(line)?.[1];
}

/** A settings file as an object; `{}` when there is none. `what` names it in errors. */
export async function readSettingsFile(path: string, what: string): Promise<SettingsObject> {
  let text: string;
  try {
    // Never waits on a FIFO put there: that is an error like any unreadable file.
    const read = await readFileIfExists(path);
    if (read === undefined) return {};
    text = read;
  } catch (error) {
    if (isNotFound(error)) return {};
    throw new GeminiSettingsError(`Cannot read ${what} ${path}: ${String(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new GeminiSettingsError(
      `${what} ${path} are not plain JSON (${String(error)}); Forge merges its own keys into them and will not guess.`,
    );
  }
  const checked = settingsObject.safeParse(parsed);
  if (!checked.success) throw new GeminiSettingsError(`${what} ${path} are not an object.`);
  return checked.data;
}

/** `over` on top of `base`: objects merge key by key, anything else in `over` replaces. */
export function mergeSettings(base: SettingsObject, over: Readonly<Record<string, unknown>>): SettingsObject {
  const merged: SettingsObject = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const below = settingsObject.safeParse(merged[key]);
    const above = settingsObject.safeParse(value);
    merged[key] =
      below.success && above.success && !Array.isArray(value) && !Array.isArray(merged[key])
        ? mergeSettings(below.data, above.data)
        : value;
  }
  return merged;
}
