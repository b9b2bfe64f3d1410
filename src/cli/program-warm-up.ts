// The build's warm-up of the program (scripts/build.mjs, through writeProgramCache in program.ts): one
// small run of the program's own commands, in a directory of its own, before V8's code cache is taken.
// V8 compiles a function when it is first called, and a cache holds only what was compiled by the time
// it is made: taken after loading main.js alone, it left every function a run calls on its way to the
// first bead (the store, validation, the lock, the runner, an agent's start, the close) to be compiled
// again by every run, on the critical path of its first bead. Taken after this run, it holds them too.
// Only the build runs this; a command never does, and never writes the cache.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Program } from './program.js';

/** How long the warm-up may take; past it, the cache holds what was compiled so far. */
const WARM_UP_TIMEOUT_MS = 30_000;

export interface WarmUpOutcome {
  ok: boolean;
  /** What ran, or why it stopped: for the build's output and program.json. */
  detail: string;
}

/**
 * Runs, on the embedded store in a temp directory: `forge-pack beads init`, an epic with two beads,
 * then `ralph-loop` over it with a no-op agent (this Node, `-e 0`). What the commands print is kept
 * for the error of one that fails, and nothing outside the directory is touched: HOME, the config
 * directories and TMPDIR point into it, so no user config, hook or agent home is read or run. Never
 * throws.
 */
export async function warmUpProgram(
  program: Program,
  { timeoutMs = WARM_UP_TIMEOUT_MS }: { timeoutMs?: number } = {},
): Promise<WarmUpOutcome> {
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), 'forge-warm-up-'));
  } catch (error) {
    return {
      ok: false,
      detail: `no directory to run in: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const restoreEnv = isolateEnv(dir);
  const exitCode = process.exitCode;
  let timer: NodeJS.Timeout | undefined;
  try {
    const repo = join(dir, 'repo');
    const run = runAll(program, repo);
    const timeout = new Promise<WarmUpOutcome>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, detail: `stopped after ${timeoutMs / 1000} s` }),
        timeoutMs,
      );
    });
    return await Promise.race([run, timeout]);
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    restoreEnv();
    process.exitCode = exitCode;
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/**
 * Points HOME, the XDG config and data folders and TMPDIR into `dir`, so a warm-up reads or runs
 * nothing outside it (no user config, hook or agent home); returns what puts the environment back.
 * Process-wide: parts of a run read the environment as well as their deps (the containment setting,
 * os.homedir()). A warm-up's process is the build's own and ends after the cache is written.
 */
export function isolateEnv(dir: string): () => void {
  const saved = { ...process.env };
  const home = join(dir, 'home');
  Object.assign(process.env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    TMPDIR: dir,
  });
  return () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  };
}

async function runAll(program: Program, repo: string): Promise<WarmUpOutcome> {
  mkdirSync(repo, { recursive: true });
  const out: string[] = [];
  const err: string[] = [];
  const overrides = {
    cwd: repo,
    env: process.env,
    stdout: { write: (text: string) => void out.push(text) },
    stderr: { write: (text: string) => void err.push(text) },
    stderrIsTTY: false,
    prompter: null,
  };
  /** Runs one command; its stdout, or an error naming what it said when it did not exit 0. */
  const step = async (what: string, run: () => Promise<void>): Promise<string> => {
    out.length = 0;
    err.length = 0;
    process.exitCode = 0;
    await run();
    if (process.exitCode !== 0) {
      const said = (err.join('') || out.join('')).trim().slice(-300);
      throw new Error(`${what} exited ${String(process.exitCode)}: ${said}`);
    }
    return out.join('').trim();
  };
  const pack = (args: string[]) => program.runForgePack(['node', 'forge-pack', ...args], overrides);
  await step('beads init', () => pack(['--store', 'embedded', 'beads', 'init']));
  const epic = await step('create the epic', () =>
    pack(['--store', 'embedded', 'beads', 'create', 'Warm-up', '-t', 'epic']),
  );
  for (const title of ['First', 'Second']) {
    await step('create a bead', () =>
      pack(['--store', 'embedded', 'beads', 'create', title, '--parent', epic, '-d', 'Nothing to do.']),
    );
  }
  const agent = `'${process.execPath.replace(/'/g, `'\\''`)}' -e 0`;
  await step('ralph-loop', () =>
    program.runRalphLoop(
      ['node', 'ralph-loop', '--store', 'embedded', epic, '--agent', agent, '--max-attempts', '1'],
      overrides,
    ),
  );
  return { ok: true, detail: `ran ${epic} (2 beads) on the embedded store` };
}
