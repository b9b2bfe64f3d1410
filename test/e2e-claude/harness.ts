// A temp repo wired to the real agent binaries (Claude Code; Codex, opencode, Gemini CLI when installed) and a scripted model
// server: env, PATH, CLIs, and views of beads, events and transcripts.
import { execa } from 'execa';
import { constants } from 'node:fs';
import { access, chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { BIN, ROOT, runCliInProcess, type CliResult } from '../support/cli.js';
import { startModelServer, type ModelServer, type Rule } from '../support/model-server/index.js';
import {
  GEMINI_BIN,
  OPENCODE_BIN,
  askVersion,
  checkedOnce,
  isExecutable,
  otherCliEnv,
  writeOtherCliConfig,
} from './cli-setup.js';

export const CLAUDE_BIN = join(ROOT, 'node_modules', '.bin', 'claude');
export const CODEX_BIN = join(ROOT, 'node_modules', '.bin', 'codex');

/**
 * Fails (never skips) when the devDependency is missing: an e2e suite that quietly does nothing would
 * report green on a machine where the agent path was never exercised. Returns `claude --version`.
 */
export function requireClaude(): Promise<string> {
  return checkedOnce(CLAUDE_BIN, checkClaude);
}

async function checkClaude(): Promise<string> {
  try {
    await access(CLAUDE_BIN, constants.X_OK);
  } catch {
    throw new Error(
      `The real Claude Code binary is missing at ${CLAUDE_BIN}. It is a devDependency ` +
        '(@anthropic-ai/claude-code): run `npm ci`. Its native binary comes from the platform package ' +
        '(@anthropic-ai/claude-code-<os>-<arch>); if npm skipped optional dependencies, reinstall without --omit=optional.',
    );
  }
  const version = await askVersion(CLAUDE_BIN, { PATH: systemPath(), DISABLE_AUTOUPDATER: '1' });
  if (version.exitCode !== 0) {
    throw new Error(
      `${CLAUDE_BIN} --version failed (exit ${version.exitCode}): ${version.stderr || version.stdout}. ` +
        'If the package postinstall (node install.cjs) did not run, bin/claude.exe is still a placeholder: ' +
        'run `npm rebuild @anthropic-ai/claude-code`.',
    );
  }
  return version.stdout.trim();
}

/** Fails (never skips) when Codex is not installed; returns `codex --version`. */
export function requireCodex(): Promise<string> {
  return checkedOnce(CODEX_BIN, checkCodex);
}

async function checkCodex(): Promise<string> {
  try {
    await access(CODEX_BIN, constants.X_OK);
  } catch {
    throw new Error(
      `The real Codex CLI is missing at ${CODEX_BIN}: add it as a devDependency (npm install --save-dev @openai/codex).`,
    );
  }
  const version = await askVersion(CODEX_BIN, { PATH: systemPath() });
  if (version.exitCode !== 0) {
    throw new Error(`${CODEX_BIN} --version failed (exit ${version.exitCode}): ${version.stderr}`);
  }
  return version.stdout.trim();
}

export interface BeadView {
  id: string;
  title: string;
  status: string;
  labels?: string[];
  comments?: { text: string }[];
}

export interface LoopEventView {
  type: string;
  bead?: string;
  role?: string;
  agent?: string;
  model?: string;
  outcome?: string;
  exit?: number;
  input_tokens?: number;
  output_tokens?: number;
  cost_usd?: number;
  message?: string;
  why?: string;
  summary?: { reason: string; message: string; costUsd: number };
}

export interface AgentWorld {
  /** The git repository the loop works in. */
  repo: string;
  /** HOME for every process: Claude Code's settings and sessions land here, not in the real home. */
  home: string;
  /** Temp bin dir first on PATH: `claude`, `forge-pack`, `ralph-loop`. */
  bin: string;
  /** TMPDIR for every process: empty to begin with. */
  tmp: string;
  server: ModelServer;
  /** The env given to the CLIs (and through them to claude); nothing is inherited from process.env. */
  env: Record<string, string>;
  forge(args: string[], timeoutMs?: number): Promise<CliResult>;
  ralph(args: string[], timeoutMs?: number): Promise<CliResult>;
  git(...args: string[]): Promise<string>;
  createEpic(title: string): Promise<string>;
  createBead(
    epic: string,
    title: string,
    options?: { description?: string; labels?: string[]; deps?: string[] },
  ): Promise<string>;
  show(id: string): Promise<BeadView>;
  /** Events of the latest run, read through `ralph-loop logs <epic> --json`. */
  events(epic: string): Promise<LoopEventView[]>;
  /** A bead's transcript, read through `ralph-loop logs <epic> <bead>`. */
  transcript(epic: string, bead: string): Promise<string>;
  /** What to print when an assertion fails: the runner's exit and stderr, and the last requests. */
  explain(run?: CliResult, what?: string): string;
}

export interface AgentWorldOptions {
  rules?: Rule[];
  /** Added to (or overriding) the env given to the CLIs. */
  env?: Record<string, string>;
  /** Files committed in the first commit. */
  files?: Record<string, string>;
}

const GIT_IDENTITY = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Forge E2E',
  GIT_AUTHOR_EMAIL: 'e2e@forge.test',
  GIT_COMMITTER_NAME: 'Forge E2E',
  GIT_COMMITTER_EMAIL: 'e2e@forge.test',
};

/** Keeps Claude Code on 127.0.0.1: no updater, telemetry, error reports or other non-essential calls. */
export const CLAUDE_OFFLINE_ENV = {
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_BUG_COMMAND: '1',
};

/**
 * Where worlds are made: not under the temp directory. Gemini CLI ignores a system settings file when any
 * directory above it is writable by others (as /tmp is), and its adapter writes one under HOME on every
 * run, which a world under /tmp would turn into a refused run rather than a proof that it works.
 */
export async function worldsRoot(): Promise<string> {
  const root = join(homedir(), '.cache', 'forge-e2e');
  await mkdir(root, { recursive: true, mode: 0o700 });
  await chmod(root, 0o700);
  return root;
}

export async function createAgentWorld(options: AgentWorldOptions = {}): Promise<AgentWorld> {
  const root = await mkdtemp(join(await worldsRoot(), 'world-'));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  const server = await startModelServer({ rules: options.rules ?? [] });
  onTestFinished(() => server.close());

  const home = join(root, 'home');
  const bin = join(root, 'bin');
  const repo = join(root, 'repo');
  await Promise.all([mkdir(home), mkdir(bin), mkdir(repo)]);
  // The world's own, in the run's temp directory (in memory where there is room: vitest.config.ts).
  const tmp = await mkdtemp(join(tmpdir(), 'world-tmp-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  await symlink(await realpath(CLAUDE_BIN), join(bin, 'claude'));
  for (const [name, path] of [
    ['codex', CODEX_BIN],
    ['opencode', OPENCODE_BIN],
    ['gemini', GEMINI_BIN],
  ] as const) {
    if (await isExecutable(path)) await symlink(await realpath(path), join(bin, name));
  }
  await writeCodexConfig(home, server.url);
  await writeOtherCliConfig(home, server.url);
  for (const program of ['forge-pack', 'ralph-loop'] as const) {
    // A shim, so an agent's Bash tool can run the CLI under test by name.
    await writeFile(
      join(bin, program),
      `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(BIN[program])} "$@"\n`,
    );
    await chmod(join(bin, program), 0o755);
  }

  await writeFile(join(home, '.gitconfig'), '');
  const env: Record<string, string> = {
    PATH: [bin, systemPath()].join(delimiter),
    HOME: home,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    ...GIT_IDENTITY,
    // A file of the world's own, not /dev/null: a git config written through /dev/null (by anything the
    // agent runs) replaces the machine's /dev/null with a file (seen: a whole test run failing after).
    GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'test-key',
    OPENAI_API_KEY: 'test-key',
    // Root in CI: Claude Code refuses --dangerously-skip-permissions as root unless told it is sandboxed.
    IS_SANDBOX: '1',
    ...CLAUDE_OFFLINE_ENV,
    ...otherCliEnv(server.url),
    ...options.env,
  };

  const git = async (...args: string[]): Promise<string> => {
    const result = await execa('git', args, { cwd: repo, env, extendEnv: false, stdin: 'ignore' });
    return String(result.stdout);
  };
  await git('init', '-q', '-b', 'main');
  await git('config', 'commit.gpgSign', 'false');
  const files = { 'README.md': '# e2e repo\n', ...options.files };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  await git('add', '-A');
  await git('commit', '-q', '-m', 'initial');

  const run = async (program: keyof typeof BIN, args: string[], timeoutMs = 120_000): Promise<CliResult> => {
    const result = await execa(process.execPath, [BIN[program], ...args], {
      cwd: repo,
      env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: timeoutMs,
    });
    return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
  };
  // Making beads and reading the store and the logs back: the same programs in this process. What the
  // tests prove (runs, agents, stamps) runs as processes through `run`.
  const here = (program: keyof typeof BIN, args: string[]): Promise<CliResult> =>
    runCliInProcess(program, ['--store', 'embedded', ...args], { cwd: repo, env, extendEnv: false });

  const world: AgentWorld = {
    repo,
    home,
    bin,
    tmp,
    server,
    env,
    forge: (args, timeoutMs) => run('forge-pack', ['--store', 'embedded', ...args], timeoutMs),
    ralph: (args, timeoutMs) => run('ralph-loop', ['--store', 'embedded', ...args], timeoutMs),
    git,
    async createEpic(title) {
      const created = await here('forge-pack', ['beads', 'create', title, '-t', 'epic', '--json']);
      expect(created.exitCode, created.stderr).toBe(0);
      return (JSON.parse(created.stdout) as { id: string }).id;
    },
    async createBead(epic, title, bead = {}) {
      const args = ['beads', 'create', title, '--parent', epic, '--json'];
      if (bead.description !== undefined) args.push('-d', bead.description);
      for (const label of bead.labels ?? []) args.push('-l', label);
      if (bead.deps !== undefined && bead.deps.length > 0) args.push('--deps', bead.deps.join(','));
      const created = await here('forge-pack', args);
      expect(created.exitCode, created.stderr).toBe(0);
      return (JSON.parse(created.stdout) as { id: string }).id;
    },
    async show(id) {
      const shown = await here('forge-pack', ['beads', 'show', id, '--json']);
      expect(shown.exitCode, shown.stderr).toBe(0);
      return (JSON.parse(shown.stdout) as BeadView[])[0]!;
    },
    async events(epic) {
      const logs = await here('ralph-loop', ['logs', epic, '--json']);
      expect(logs.exitCode, logs.stderr).toBe(0);
      return logs.stdout
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as LoopEventView);
    },
    async transcript(epic, bead) {
      const logs = await here('ralph-loop', ['logs', epic, bead]);
      expect(logs.exitCode, logs.stderr).toBe(0);
      return logs.stdout;
    },
    explain(result, what) {
      const parts: string[] = [];
      if (what !== undefined) parts.push(what);
      if (result !== undefined) {
        parts.push(
          `exit ${result.exitCode}; stderr (last 3000 chars):\n${result.stderr.slice(-3000)}`,
          `stdout (last 1000 chars):\n${result.stdout.slice(-1000)}`,
        );
      }
      parts.push(server.describe());
      return parts.join('\n---\n');
    },
  };
  const init = await here('forge-pack', ['beads', 'init']);
  expect(init.exitCode, init.stderr).toBe(0);
  return world;
}

/** Claude's result object (the last `type:"result"` line) from a transcript. */
export function resultOf(transcript: string): Record<string, unknown> | undefined {
  let found: Record<string, unknown> | undefined;
  for (const line of transcript.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const value = JSON.parse(line) as Record<string, unknown>;
      if (value.type === 'result') found = value;
    } catch {
      // A partial line at a kill: not ours to judge here.
    }
  }
  return found;
}

/**
 * Codex 0.169 ignores OPENAI_BASE_URL (it went to api.openai.com): a provider of its own in
 * $HOME/.codex/config.toml points it here, over HTTP only (it tries a WebSocket first otherwise), with no
 * retries of its own (the runner does the waiting), and nothing else on the network (checked with strace).
 */
async function writeCodexConfig(home: string, url: string): Promise<void> {
  await mkdir(join(home, '.codex'));
  const config = [
    'model_provider = "scripted"',
    'model = "gpt-scripted"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    // Without this Codex 0.169 syncs curated plugins from github.com and chatgpt.com at start.
    '[features]',
    'plugins = false',
    '',
    '[model_providers.scripted]',
    'name = "scripted model server"',
    `base_url = "${url}/v1"`,
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    'supports_websockets = false',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
  await writeFile(join(home, '.codex', 'config.toml'), config);
}

/** PATH without any node_modules/.bin (npm puts the repo's own there; claude must come from our bin dir). */
function systemPath(): string {
  const entries = (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin')
    .split(delimiter)
    .filter((entry) => entry !== '' && !entry.includes('node_modules'));
  return [dirname(process.execPath), ...entries].join(delimiter);
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
