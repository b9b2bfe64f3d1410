// Each Gemini CLI run gets a home of its own: a `.gemini` that mirrors the user's (credentials,
// extensions, settings) entry by entry, but with an empty `tmp`, where Gemini CLI keeps a project's
// chats and its "private project memory" (`tmp/<project>/memory/MEMORY.md`, loaded into every run in
// that directory, with no setting to turn it off, 0.61). The home is removed when the run ends, so no
// run sees notes an earlier one left. For anyone but root, who cannot write a system settings file
// Gemini CLI accepts, Forge's settings also go in here, at the user layer.
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readBytesIfExists, writeFileAtomic } from '../infra/atomic-file.js';
import { fileStat, listDirIfExists } from '../infra/fs-ops.js';
import { isGoneMaker } from '../infra/pid.js';
import { forgeGeminiDir, forReadOnly, readSettingsFile, withForgeSettings } from './gemini-settings.js';
import type { AgentMode } from './types.js';

type Env = Readonly<Record<string, string | undefined>>;

/** `run-<hash>-<mode>-<pid>-<random>`: a run home, by the pid of the Forge process that made it. */
const RUN_HOME = /^run-[0-9a-f]{20}-[a-z-]+?-(\d+)-[A-Za-z0-9]{6}$/;
/** A home of an earlier Forge, named without its maker's pid: removed once this old. */
const UNNAMED_HOME_MS = 24 * 3600_000;

/**
 * Removes the run homes a killed Forge left (a home goes when its run ends, unless the process that
 * made it died first): those whose maker is gone, and old ones from before homes named their maker.
 * What a killed doer's Gemini wrote there (its chats, its memory) is not kept around. Best effort.
 */
export async function removeLeftHomes(dir: string, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of (await listDirIfExists(dir)) ?? []) {
    if (!name.startsWith('run-')) continue;
    const pid = RUN_HOME.exec(name)?.[1];
    const path = join(dir, name);
    let left: boolean;
    if (pid !== undefined) left = isGoneMaker(Number(pid));
    else left = now - ((await fileStat(path))?.mtimeMs ?? now) > UNNAMED_HOME_MS;
    if (!left) continue;
    await rm(path, { recursive: true, force: true }).catch(() => undefined);
    removed.push(path);
  }
  return removed;
}

const GLOBAL_MEMORY = 'GEMINI.md';

export interface GeminiRunHome {
  /** The env with GEMINI_CLI_HOME pointing at the run's home. */
  env: Record<string, string | undefined>;
  /** Removes the home (its links only, never what they point at). */
  remove(): Promise<void>;
}

/**
 * Makes `$HOME/.cache/forge/gemini/run-<hash of the real home>-<mode>-<random>` and points
 * GEMINI_CLI_HOME (seen, 0.61: where Gemini CLI looks for `.gemini/` and `.env` instead of the home
 * directory) at it. Every entry of the real `.gemini` but `tmp`, and `~/.env`, is a symlink to the real
 * one; `tmp` is a fresh directory holding only a link to the real `tmp/bin` (tools Gemini CLI fetched
 * once). With `forgeSettings`, `.gemini/settings.json` is instead the user's with Forge's keys over them,
 * and for a read-only run always a copy of the user's without what such a run must not take;
 * workspace settings (`.gemini/settings.json` in the tree) still rank above the user layer, system
 * settings above both.
 */
export async function geminiRunHome(
  env: Env,
  mode: AgentMode,
  forgeSettings: boolean,
): Promise<GeminiRunHome> {
  const realHome = env.GEMINI_CLI_HOME ?? env.HOME ?? homedir();
  const realGemini = join(realHome, '.gemini');
  // Read before anything is made: settings Forge cannot parse leave nothing behind. A read-only run
  // gets a copy of the user's without what it must not take, even when Forge's own are elsewhere.
  const user =
    forgeSettings || mode === 'read-only'
      ? await readSettingsFile(join(realGemini, 'settings.json'), "Gemini CLI's user settings")
      : undefined;
  const settings =
    user === undefined ? undefined : forgeSettings ? withForgeSettings(user, mode) : forReadOnly(user);
  const content = settings === undefined ? undefined : `${JSON.stringify(settings, null, 2)}\n`;

  const hash = createHash('sha256').update(realHome).digest('hex').slice(0, 20);
  const dir = await forgeGeminiDir(env);
  await removeLeftHomes(dir);
  // Named by the process that made it, so a later run can tell a home whose maker was killed.
  const home = await mkdtemp(join(dir, `run-${hash}-${mode}-${process.pid}-`));
  const remove = (): Promise<void> => rm(home, { recursive: true, force: true });
  try {
    const gemini = join(home, '.gemini');
    await mkdir(join(gemini, 'tmp'), { recursive: true, mode: 0o700 });
    for (const name of (await listDirIfExists(realGemini)) ?? []) {
      if (name === 'tmp' || (content !== undefined && name === 'settings.json')) continue;
      // The "global personal memory" Gemini CLI offers to write to and loads into every run: the run
      // reads the user's, and what it writes there stays in its home.
      // Read as a regular file only: a FIFO put there is left out, never waited on.
      if (name === GLOBAL_MEMORY) {
        const memory = await readBytesIfExists(join(realGemini, name)).catch(() => undefined);
        if (memory !== undefined) await writeFileAtomic(join(gemini, name), memory);
      } else await symlink(join(realGemini, name), join(gemini, name));
    }
    if ((await listDirIfExists(join(realGemini, 'tmp')))?.includes('bin'))
      await symlink(join(realGemini, 'tmp', 'bin'), join(gemini, 'tmp', 'bin'));
    if ((await listDirIfExists(realHome))?.includes('.env'))
      await symlink(join(realHome, '.env'), join(home, '.env'));
    if (content !== undefined) {
      const settings = join(gemini, 'settings.json');
      await writeFileAtomic(settings, content);
      await chmod(settings, 0o600);
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { env: { ...env, GEMINI_CLI_HOME: home }, remove };
}
