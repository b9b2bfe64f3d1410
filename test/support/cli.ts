// Runs the built CLIs as a user would: a real process, argv, a temp repo, exit code and output.
import { execa, type ResultPromise } from 'execa';
import { access } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = {
  'ralph-loop': join(ROOT, 'bin', 'ralph-loop.js'),
  'forge-pack': join(ROOT, 'bin', 'forge-pack.js'),
};

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Fails clearly when the CLI has not been built (npm test builds first; plain vitest does not). */
export async function assertBuilt(): Promise<void> {
  try {
    await access(join(ROOT, 'dist', 'bundle', 'meta.json'));
  } catch {
    throw new Error('dist/ is missing: run `npm run build` (npm test does it for you).');
  }
}

export async function runCli(
  program: keyof typeof BIN,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number | undefined },
): Promise<CliResult> {
  const result = await execa(process.execPath, [BIN[program], ...args], {
    cwd: options.cwd,
    env: { NO_COLOR: '1', ...options.env },
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs ?? 60_000,
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/**
 * Runs a CLI command inside the test's own process, through the program the executable builds
 * (commander, config, the stores, the agents it starts as processes): what most tests of a command's
 * behaviour use, where a process per call costs Node's start and the bundle's load and proves nothing
 * more. What only a process shows runs with `runCli` or `startCli`: exit codes through the executable,
 * signals, kill -9, stdout as a pipe, a timeout; each command keeps such tests of its own.
 *
 * The program takes no signals here and cannot end the test's process: a command that would exit at
 * once (a second Ctrl-C) throws instead.
 */
export async function runCliInProcess(
  program: keyof typeof BIN,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; extendEnv?: boolean },
): Promise<CliResult> {
  const [{ runProgram }, create] = await Promise.all([
    import('../../src/cli/main.js'),
    program === 'forge-pack'
      ? import('../../src/cli/forge-pack.js').then((module) => module.createForgePackProgram)
      : import('../../src/cli/ralph-loop.js').then((module) => module.createRalphLoopProgram),
  ]);
  let stdout = '';
  let stderr = '';
  const exitCode = await runProgram(program, create, ['node', program, ...args], {
    cwd: options.cwd,
    env: { ...(options.extendEnv === false ? {} : process.env), NO_COLOR: '1', ...options.env },
    stdout: { write: (text) => void (stdout += text) },
    stderr: { write: (text) => void (stderr += text) },
    stderrIsTTY: false,
    onInterrupt: () => () => undefined,
    exitNow: (code) => {
      throw new Error(`the program asked to exit at once (code ${code}): run this test as a process`);
    },
  });
  return { exitCode, stdout, stderr };
}

interface StartOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  reject: false;
  stdin: 'ignore';
}

/** Starts a CLI in the background (for kill -9, SIGINT and two-runner tests). */
export function startCli(
  program: keyof typeof BIN,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): ResultPromise<StartOptions> {
  const start: StartOptions = {
    cwd: options.cwd,
    env: { NO_COLOR: '1', ...options.env },
    reject: false,
    stdin: 'ignore',
  };
  return execa(process.execPath, [BIN[program], ...args], start);
}

/** Polls until `check` returns a value, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
