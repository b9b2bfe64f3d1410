// opencode and Gemini CLI in the e2e world: where their real binaries are, and the config that points
// each at the scripted model server and keeps it off the network.
import { execa } from 'execa';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../support/cli.js';

export const OPENCODE_BIN = join(ROOT, 'node_modules', '.bin', 'opencode');
export const GEMINI_BIN = join(ROOT, 'node_modules', '.bin', 'gemini');

/** The model each CLI is given by its config when the agent spec names none. */
export const OPENCODE_MODEL = 'anthropic/claude-sonnet-4-5';
export const GEMINI_MODEL = 'gemini-2.5-flash';

const versions = new Map<string, Promise<string>>();

/**
 * `check` once per test process for `bin`: a worker runs many files (isolate: false), and each asked
 * again for the same `--version` (up to 0.7 s of CPU a time for opencode and Gemini CLI).
 */
export function checkedOnce(bin: string, check: () => Promise<string>): Promise<string> {
  let version = versions.get(bin);
  if (version === undefined) {
    version = check();
    versions.set(bin, version);
    // A failed check is asked again by the next file, which then reports it too.
    version.catch(() => versions.delete(bin));
  }
  return version;
}

/** Fails (never skips) when the devDependency is missing; returns `<bin> --version`. */
export function requireCli(bin: string, pkg: string): Promise<string> {
  return checkedOnce(bin, () => checkCli(bin, pkg));
}

async function checkCli(bin: string, pkg: string): Promise<string> {
  try {
    await access(bin, constants.X_OK);
  } catch {
    throw new Error(`The real CLI is missing at ${bin}: it is a devDependency (${pkg}); run \`npm ci\`.`);
  }
  // Gemini CLI otherwise starts a second Node process to print its version (0.7 s of CPU more); Forge
  // never has it relaunch either (src/agents/gemini.ts). Other CLIs do not read the variable.
  const version = await askVersion(bin, {
    PATH: `${join(process.execPath, '..')}:/usr/bin:/bin`,
    GEMINI_CLI_NO_RELAUNCH: 'true',
  });
  if (version.exitCode !== 0) {
    throw new Error(`${bin} --version failed (exit ${version.exitCode}): ${version.stderr}`);
  }
  return version.stdout.trim();
}

/**
 * `<bin> --version` with a HOME and TMPDIR of its own, removed afterwards: a CLI writes its config,
 * caches and temp files there even to print its version, and the run's temp directory is not theirs.
 */
export async function askVersion(
  bin: string,
  env: Record<string, string>,
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }> {
  const home = await mkdtemp(join(tmpdir(), 'forge-cli-version-'));
  try {
    const result = await execa(bin, ['--version'], {
      env: { HOME: home, TMPDIR: home, ...env },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** Env for both CLIs: keys (never real), the Gemini base URL, no model catalogue download. */
export function otherCliEnv(url: string): Record<string, string> {
  return {
    GEMINI_API_KEY: 'test-key',
    GOOGLE_GEMINI_BASE_URL: url,
    // opencode would fetch its model catalogue from models.dev; its built-in snapshot knows Anthropic.
    OPENCODE_DISABLE_MODELS_FETCH: '1',
  };
}

/**
 * opencode: its Anthropic provider with the server as baseURL, in the user config under HOME (so
 * nothing lands in the repo). Gemini CLI: the API-key auth type chosen in settings, because with
 * GOOGLE_GEMINI_BASE_URL set 0.61 otherwise picks the `gateway` type its own check rejects
 * ("Invalid auth method selected"); usage statistics and telemetry off. No setting about what the agent
 * is shown: the adapter enforces that itself on every run, and the tests check it does.
 */
export async function writeOtherCliConfig(home: string, url: string): Promise<void> {
  await mkdir(join(home, '.config', 'opencode'), { recursive: true });
  await seedOpencodeDependencies(join(home, '.config', 'opencode'));
  const opencode = {
    $schema: 'https://opencode.ai/config.json',
    model: OPENCODE_MODEL,
    autoupdate: false,
    share: 'disabled',
    provider: { anthropic: { options: { baseURL: `${url}/v1`, apiKey: 'test-key' } } },
  };
  await writeFile(
    join(home, '.config', 'opencode', 'opencode.json'),
    `${JSON.stringify(opencode, null, 2)}\n`,
  );
  await mkdir(join(home, '.gemini'), { recursive: true });
  const gemini = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    model: { name: GEMINI_MODEL },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  };
  await writeFile(join(home, '.gemini', 'settings.json'), `${JSON.stringify(gemini, null, 2)}\n`);
}

/**
 * opencode installs its plugin SDK (`@opencode-ai/plugin`, from the npm registry) into its config
 * directory the first time it runs under a HOME: a registry fetch and up to ~3.6 s of CPU, which a user
 * pays once and a world, with a HOME of its own, paid on every opencode run (opencode-gemini.test.ts
 * alone took 11 s more CPU with it).
 * It skips the install when the directory already names its own version in package.json with a lock
 * file and node_modules beside it, so each world starts as a user's HOME does after that first run.
 * Should a later opencode check differ, it installs again: slower and online, never a different test.
 */
async function seedOpencodeDependencies(dir: string): Promise<void> {
  const dependencies = { '@opencode-ai/plugin': await opencodeVersion() };
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ dependencies })}\n`);
  const lock = { lockfileVersion: 3, packages: { '': { dependencies } } };
  await writeFile(join(dir, 'package-lock.json'), `${JSON.stringify(lock)}\n`);
}

/** The installed opencode's version, from its package (the same as its `--version`, without a run). */
async function opencodeVersion(): Promise<string> {
  const manifest = JSON.parse(
    await readFile(join(ROOT, 'node_modules', 'opencode-ai', 'package.json'), 'utf8'),
  ) as { version: string };
  return manifest.version;
}

export async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}
