// Bench plumbing: where things are, temp dirs, a clean child environment, timed child processes.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = {
  ralphLoop: join(ROOT, 'bin', 'ralph-loop.js'),
  forgePack: join(ROOT, 'bin', 'forge-pack.js'),
};
export const NODE = process.execPath;

/** Dirs of the usual system binaries (git, sh); never node_modules/.bin, never the caller's PATH extras. */
export const SYSTEM_PATH = [dirname(NODE), '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter);

export const GIT_IDENTITY = {
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Forge Bench',
  GIT_AUTHOR_EMAIL: 'bench@forge.invalid',
  GIT_COMMITTER_NAME: 'Forge Bench',
  GIT_COMMITTER_EMAIL: 'bench@forge.invalid',
};

/**
 * The whole environment of a measured child: nothing inherited. The caller's environment can carry
 * costs that are not Forge's (NODE_EXTRA_CA_CERTS alone adds ~120 ms to every Node start here) or
 * change behaviour (NODE_OPTIONS), and a benchmark must not depend on who runs it.
 */
export function cleanEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: SYSTEM_PATH, HOME: home, LANG: 'C.UTF-8', NO_COLOR: '1', ...GIT_IDENTITY, ...extra };
}

/** Variables of the caller's environment that the clean one drops and that slow down Node starts. */
export function droppedCostlyEnv(): string[] {
  return ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS'].filter((name) => (process.env[name] ?? '') !== '');
}

export interface TempDir {
  path: string;
  remove(): Promise<void>;
}

/** A fresh directory under `base` (default: the system temp dir). */
export async function tempDir(prefix: string, base = tmpdir()): Promise<TempDir> {
  const path = await mkdtemp(join(base, `forge-bench-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export interface Timed {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Spawn to exit, as `time` would report it. */
  ms: number;
  /** Date.now() just before the spawn, to line the child's own timestamps up with. */
  startedAt: number;
}

export interface TimedOptions {
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, which is then closed; without it stdin is ignored. */
  input?: string;
  timeoutMs?: number;
}

/** Runs a command to completion with node's own spawn (no wrapper cost in the measurement). */
export function runTimed(file: string, args: readonly string[], options: TimedOptions): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const t0 = performance.now();
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      if (timer !== undefined) clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      if (timer !== undefined) clearTimeout(timer);
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: performance.now() - t0,
        startedAt,
      });
    });
    if (options.input !== undefined && child.stdin !== null) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
  });
}

/** Throws with the child's output when it did not exit 0. */
export function expectSuccess(result: Timed, what: string): Timed {
  if (result.exitCode !== 0) {
    throw new Error(
      `${what} exited ${String(result.exitCode ?? result.signal)}:\n${result.stderr.slice(-2000)}\n${result.stdout.slice(-1000)}`,
    );
  }
  return result;
}

/** A no-op agent: reads the prompt it is given on stdin, prints nothing, exits 0. */
const NOOP_AGENT = `// Forge bench: a no-op agent. Reads its prompt, does nothing, exits 0.
process.stdin.on('data', () => undefined);
process.stdin.on('end', () => undefined);
`;

export async function writeNoopAgent(dir: string): Promise<string> {
  const path = join(dir, 'noop-agent.mjs');
  await writeFile(path, NOOP_AGENT);
  return path;
}

/** `--agent` text for the no-op agent: node and the script, quoted for Forge's command-line splitter. */
export function noopAgentSpec(script: string): string {
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  return `${quote(NODE)} ${quote(script)}`;
}

export async function initGitRepo(dir: string, home: string): Promise<void> {
  const env = cleanEnv(home);
  const git = async (...args: string[]) =>
    expectSuccess(await runTimed('git', args, { cwd: dir, env }), `git ${args.join(' ')}`);
  await git('init', '-q', '-b', 'main');
  await git('config', 'commit.gpgSign', 'false');
  await writeFile(join(dir, '.gitignore'), '.forge/\n.beads/\n.autoresearch/\n');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'bench: initial');
}

/** The build the bench measures (`npm run bench` builds first; `npm test` does too). */
export const BUILT_MAIN = join(ROOT, 'dist', 'cli', 'main.js');
