// Looks at the machine Forge runs on: executables on PATH, their versions, git, and the Node version.
import { delimiter, join } from 'node:path';
import { findExecutable as findOnPath } from '../infra/executables.js';
import { runProcess } from '../infra/process.js';
import { AGENT_CLIS } from './agent-clis.js';

export { AGENT_CLIS } from './agent-clis.js';
export type { AgentCliName } from './agent-clis.js';

/** The oldest Node Forge supports (package.json `engines`). */
export const MIN_NODE: readonly [number, number] = [20, 11];

export interface ProbeOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** How long one version call may take before it is killed (default 10 s). */
  timeoutMs?: number;
}

export interface ExecutableProbe {
  name: string;
  /** Absolute path found on PATH; undefined when there is none. */
  path?: string | undefined;
  /** `x.y.z` from its version output, when it printed one. */
  version?: string | undefined;
  /** Why the version could not be read (timed out, crashed, printed nothing). */
  problem?: string | undefined;
}

/** The first executable file called `name` on `env.PATH` (or `name` itself when it is a path). */
export async function findExecutable(
  name: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<string | undefined> {
  return findOnPath(name, env.PATH ?? '', cwd);
}

/** Finds `name` and runs it with `args` (e.g. `--version`) under a timeout; never throws. */
export async function probeExecutable(
  name: string,
  args: readonly string[],
  options: ProbeOptions,
): Promise<ExecutableProbe> {
  const path = await findExecutable(name, options.env, options.cwd);
  if (path === undefined) return { name };
  const result = await runProcess(
    { file: path, args },
    { cwd: options.cwd, env: options.env, timeoutMs: options.timeoutMs ?? 10_000, killGraceMs: 500 },
  );
  if (result.spawnError !== undefined)
    return { name, path, problem: `could not start: ${result.spawnError}` };
  if (result.timedOut) {
    return {
      name,
      path,
      problem: `\`${name} ${args.join(' ')}\` did not answer within ${result.durationMs} ms`,
    };
  }
  const version = parseVersion(`${result.stdout}\n${result.stderr}`);
  if (result.exitCode !== 0) {
    return {
      name,
      path,
      version,
      problem: `\`${name} ${args.join(' ')}\` exited with ${result.exitCode ?? result.signal ?? 'an error'}`,
    };
  }
  if (version === undefined) return { name, path, problem: 'printed no version number' };
  return { name, path, version };
}

export function parseVersion(text: string): string | undefined {
  return /(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)/.exec(text)?.[1];
}

/**
 * Every agent CLI Forge knows, looked up in parallel on PATH and then in the project's
 * node_modules/.bin (where a devDependency puts it).
 */
export function probeAgentClis(options: ProbeOptions): Promise<ExecutableProbe[]> {
  const env = { ...options.env, PATH: withProjectBin(options.env.PATH, options.cwd) };
  return Promise.all(
    AGENT_CLIS.map((cli) => probeExecutable(cli.name, cli.versionArgs, { ...options, env })),
  );
}

/** PATH with `<cwd>/node_modules/.bin` last, so what the user put on PATH wins. */
export function withProjectBin(path: string | undefined, cwd: string): string {
  const bin = join(cwd, 'node_modules', '.bin');
  return path === undefined || path === '' ? bin : `${path}${delimiter}${bin}`;
}

export type GitProbe =
  | { ok: true; version: string; topLevel: string; hasCommit: boolean }
  | { ok: false; reason: 'git-missing' | 'not-a-repo'; version?: string; detail: string };

/** Is git installed, and is `cwd` inside a working tree (and where is its top)? */
export async function probeGit(options: ProbeOptions): Promise<GitProbe> {
  const git = await probeExecutable('git', ['--version'], options);
  if (git.path === undefined || git.version === undefined) {
    return { ok: false, reason: 'git-missing', detail: git.problem ?? 'git is not on PATH' };
  }
  const top = await runProcess(
    { file: git.path, args: ['rev-parse', '--show-toplevel'] },
    { cwd: options.cwd, env: options.env, timeoutMs: options.timeoutMs ?? 10_000 },
  );
  if (top.exitCode !== 0 || top.stdout.trim() === '') {
    return {
      ok: false,
      reason: 'not-a-repo',
      version: git.version,
      detail: top.stderr.trim().split('\n')[0] ?? 'not a git repository',
    };
  }
  const head = await runProcess(
    { file: git.path, args: ['rev-parse', '--verify', '--quiet', 'HEAD'] },
    { cwd: options.cwd, env: options.env, timeoutMs: options.timeoutMs ?? 10_000 },
  );
  return { ok: true, version: git.version, topLevel: top.stdout.trim(), hasCommit: head.exitCode === 0 };
}

/** True when `version` (`20.11.0`, `v22.1.0`) is at least MIN_NODE. */
export function nodeIsSupported(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(version);
  if (match === null) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}
