// Each agent run gets a temp directory of its own, removed when the run and everything it started are
// gone. Agent CLIs leave files in TMPDIR on every run (seen here: opencode 1.18.33 extracts a 5.5 MB
// native library into it at each start and never deletes it; Claude Code leaves `claude-<uid>/` probe
// directories; Codex a lock file), so a night of runs would fill /tmp, which is memory where /tmp is a
// tmpfs. And no run finds what an earlier one left there.
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listDirIfExists } from '../infra/fs-ops.js';
import { isGoneMaker } from '../infra/pid.js';

type Env = Readonly<Record<string, string | undefined>>;

const PREFIX = 'forge-agent-';
/** `forge-agent-<pid>-<random>`: a run's directory, by the pid of the Forge process that made it. */
const LEFT = /^forge-agent-(\d+)-[A-Za-z0-9]{6}$/;
/** The temp directories whose leftovers this process has already removed (once each). */
const cleared = new Set<string>();

export interface AgentTemp {
  /** The run's env: TMPDIR (and TMP / TEMP, where the env sets them) name the run's directory. */
  env: Record<string, string | undefined>;
  /** The run's directory; undefined when none could be made, and the run has the env it was given. */
  dir: string | undefined;
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
  const base = env.TMPDIR !== undefined && env.TMPDIR !== '' ? env.TMPDIR : tmpdir();
  if (!cleared.has(base)) {
    cleared.add(base);
    await removeLeftAgentTemps(base);
  }
  let dir: string;
  try {
    // In place, like the transcript's directory: a trip to the thread pool would stand between the
    // runner and the agent's start on every bead.
    dir = mkdtempSync(join(base, `${PREFIX}${process.pid}-`));
  } catch (error) {
    return {
      env: { ...env },
      dir: undefined,
      problem: `no temp directory of its own under ${base}: ${messageOf(error)}`,
      remove: () => Promise.resolve(undefined),
    };
  }
  const own: Record<string, string | undefined> = { ...env, TMPDIR: dir };
  for (const key of ['TMP', 'TEMP']) if (env[key] !== undefined) own[key] = dir;
  return {
    env: own,
    dir,
    problem: undefined,
    remove: () =>
      rm(dir, { recursive: true, force: true, maxRetries: 2 }).then(
        () => undefined,
        (error: unknown) => `its temp directory ${dir} was not removed: ${messageOf(error)}`,
      ),
  };
}

/** Removes the run directories under `base` whose Forge process is gone; returns their paths. */
export async function removeLeftAgentTemps(base: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of (await listDirIfExists(base)) ?? []) {
    const pid = LEFT.exec(name)?.[1];
    if (pid === undefined || !isGoneMaker(Number(pid))) continue;
    const path = join(base, name);
    await rm(path, { recursive: true, force: true }).catch(() => undefined);
    removed.push(path);
  }
  return removed;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
