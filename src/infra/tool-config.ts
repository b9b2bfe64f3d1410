// Files the commands a loop runs (its metric, guards and tracks) read besides the tree they measure,
// usually untracked or ignored, so no `git status` shows a change to them: npm's and yarn's settings
// (`node-options` preloads a script into every `npm run`, `yarnPath` swaps yarn itself), bun's
// `preload`, the `.env` files dotenv loads, Python's `sitecustomize.py`, and the version files that
// pick the interpreter a version manager's shim runs. An agent with a shell can write any of them.
import { join } from 'node:path';

/** Read from the project directory. */
const PROJECT_FILES = [
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pnpmfile.cjs',
  'bunfig.toml',
  '.env',
  '.env.local',
  'sitecustomize.py',
  'usercustomize.py',
  '.nvmrc',
  '.node-version',
  '.python-version',
  '.tool-versions',
];

/** Read from the user's home. */
const HOME_FILES = ['.npmrc', '.yarnrc', '.yarnrc.yml', '.bunfig.toml', '.tool-versions'];

/** The files read from a project directory `dir` (the repository, a worktree an agent works in). */
export function projectToolFiles(dir: string): string[] {
  return PROJECT_FILES.map((name) => join(dir, name));
}

/** The files read from the user's home, and npm's user config wherever `env` puts it. */
export function homeToolFiles(env: Readonly<Record<string, string | undefined>>): string[] {
  const home = env.HOME === undefined || env.HOME === '' ? undefined : env.HOME;
  const userconfig = env.npm_config_userconfig ?? env.NPM_CONFIG_USERCONFIG;
  return [
    ...(home === undefined ? [] : HOME_FILES.map((name) => join(home, name))),
    ...(userconfig === undefined || userconfig === '' ? [] : [userconfig]),
  ];
}
