// Each agent run gets a temp directory of its own, removed when the run and everything it started are
// gone. Agent CLIs leave files in TMPDIR on every run (seen here: opencode 1.18.33 extracts a 5.5 MB
// native library into it at each start and never deletes it; Claude Code leaves `claude-<uid>/` probe
// directories; Codex a lock file), so a night of runs would fill /tmp, which is memory where /tmp is a
// tmpfs. And no run finds what an earlier one left there.
import { mkdtempSync, rmdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ownTempPrefix, removeLeftTempsOnce } from '../infra/left-temp.js';

type Env = Readonly<Record<string, string | undefined>>;

/** `forge-agent-<pid>-<random>`: a run's directory, by the pid of the Forge process that made it. */
const AGENT_TEMP_PREFIX = 'forge-agent-';

export interface AgentTemp {
  /**
   * The run's env: TMPDIR (and TMP / TEMP, where the env sets them) name the run's directory; when none
   * could be made, the env it was given.
   */
  env: Record<string, string | undefined>;
  /** Why no directory was made, or why it could not be removed (for the transcript). */
  problem: string | undefined;
  /** Removes the directory with whatever the run left in it; says what went wrong, if anything. */
  remove(): Promise<string | undefined>;
}

/**
 * Makes `forge-agent-<pid>-XXXXXX` in the temp directory the run was given (its TMPDIR, else this
 * process's) and points the run at it. The first run in a temp directory first removes what runs of a
 * Forge that was killed left there. A directory that cannot be made is not a reason to fail the run.
 */
export async function makeAgentTemp(env: Env): Promise<AgentTemp> {
  // Absolute: the agent's working directory is not this process's (a judge works in its checkout).
  const base = resolve(env.TMPDIR !== undefined && env.TMPDIR !== '' ? env.TMPDIR : tmpdir());
  await removeLeftTempsOnce(base, AGENT_TEMP_PREFIX);
  let dir: string;
  try {
    // In place, like the transcript's directory: a trip to the thread pool would stand between the
    // runner and the agent's start on every bead.
    dir = mkdtempSync(join(base, ownTempPrefix(AGENT_TEMP_PREFIX)));
  } catch (error) {
    return {
      env: { ...env },
      problem: `no temp directory of its own under ${base}: ${messageOf(error)}`,
      remove: () => Promise.resolve(undefined),
    };
  }
  const own: Record<string, string | undefined> = { ...env, TMPDIR: dir };
  for (const key of ['TMP', 'TEMP']) if (env[key] !== undefined) own[key] = dir;
  return {
    env: own,
    problem: undefined,
    remove: () =>
      removeDir(dir).then(
        () => undefined,
        (error: unknown) => `its temp directory ${dir} was not removed: ${messageOf(error)}`,
      ),
  };
}

/**
 * Removes `dir` and what is in it. An agent mostly leaves its temp directory empty: one rmdir in place
 * then does it, where the recursive removal makes several trips to the thread pool (~0.4 ms) between
 * the agent's exit and the bead's close.
 */
async function removeDir(dir: string): Promise<void> {
  try {
    rmdirSync(dir);
    return;
  } catch {
    // Not empty (or already gone, or not removable as it is): the recursive removal decides.
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 2 });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
