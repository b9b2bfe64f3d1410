// Gemini CLI run by anyone but root, which never reads a system settings file it does not find owned by
// root: Forge's settings go in at the user layer instead, through a home of Forge's that mirrors the
// user's `~/.gemini` (credentials, history, extensions) entry by entry, with a settings file of its own.
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readlink, rm, symlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isNotFound, writeFileAtomic } from '../infra/atomic-file.js';
import { listDirIfExists } from '../infra/fs-ops.js';
import { forgeGeminiDir, readSettingsFile, withForgeSettings } from './gemini-settings.js';
import type { AgentMode } from './types.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Points GEMINI_CLI_HOME (seen, 0.61: where Gemini CLI looks for `.gemini/` and `.env` instead of the
 * home directory) at `$HOME/.cache/forge/gemini/home-<hash of the real home>-<mode>`: its `.gemini/settings.json`
 * is the user's with Forge's keys over them; every other entry of the real `.gemini`, and `~/.env`, is a
 * symlink to the real one. Workspace settings (`.gemini/settings.json` in the tree) still rank above the
 * user layer; system settings above both.
 */
export async function geminiHomeEnv(env: Env, mode: AgentMode): Promise<Record<string, string | undefined>> {
  const realHome = env.GEMINI_CLI_HOME ?? env.HOME ?? homedir();
  const realGemini = join(realHome, '.gemini');
  const user = await readSettingsFile(join(realGemini, 'settings.json'), "Gemini CLI's user settings");
  const content = `${JSON.stringify(withForgeSettings(user, mode), null, 2)}\n`;

  const hash = createHash('sha256').update(realHome).digest('hex').slice(0, 20);
  // One per mode: a read-only run's settings differ, and runs of both modes may run at once.
  const home = join(await forgeGeminiDir(env), `home-${hash}-${mode}`);
  const gemini = join(home, '.gemini');
  await mkdir(gemini, { recursive: true, mode: 0o700 });
  for (const name of (await listDirIfExists(realGemini)) ?? []) {
    if (name !== 'settings.json') await mirror(join(gemini, name), join(realGemini, name));
  }
  if ((await listDirIfExists(realHome))?.includes('.env'))
    await mirror(join(home, '.env'), join(realHome, '.env'));
  const settings = join(gemini, 'settings.json');
  await writeFileAtomic(settings, content);
  await chmod(settings, 0o600);
  return { ...env, GEMINI_CLI_HOME: home };
}

/**
 * Makes `path` a symlink to `target`. A file or symlink Gemini CLI left there (it writes some files by
 * replacing them) gives way to the real one; a directory it made before the real one existed is kept.
 */
async function mirror(path: string, target: string): Promise<void> {
  const found = await lstat(path).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
  if (found?.isDirectory()) return;
  if (found?.isSymbolicLink() && (await readlink(path)) === target) return;
  if (found !== undefined) await rm(path, { force: true });
  try {
    await symlink(target, path);
  } catch (error) {
    // Another run made the same link in the meantime.
    if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
  }
}
