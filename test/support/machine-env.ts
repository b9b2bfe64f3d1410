// What a test child that reaches the internet (npm, to its registry) needs from this machine's
// environment, which vitest.config.ts takes NODE_EXTRA_CA_CERTS out of for every other child; the
// temp dir in memory the run's files go to; and the PATH without a version manager's shims.
import { mkdtempSync, statfsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where vitest.config.ts keeps NODE_EXTRA_CA_CERTS for the children that need it. */
export const KEPT_EXTRA_CA = 'FORGE_TEST_NODE_EXTRA_CA_CERTS';

/** Moves NODE_EXTRA_CA_CERTS out of `env` (the children it starts will not see it) to KEPT_EXTRA_CA. */
export function setAsideExtraCa(env: NodeJS.ProcessEnv): void {
  const extraCa = env.NODE_EXTRA_CA_CERTS;
  if (extraCa === undefined) return;
  env[KEPT_EXTRA_CA] = extraCa;
  delete env.NODE_EXTRA_CA_CERTS;
}

/** The machine's TLS trust and proxy, as environment variables (only those set). */
export function networkEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  const extraCa = process.env[KEPT_EXTRA_CA] ?? process.env.NODE_EXTRA_CA_CERTS;
  if (extraCa !== undefined && extraCa !== '') env.NODE_EXTRA_CA_CERTS = extraCa;
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy']) {
    const value = process.env[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return env;
}

/** Set by vitest.config.ts to the temp dir it made for the run (removed by test/support/global-temp.ts). */
export const RUN_TEMP = 'FORGE_TEST_RUN_TEMP';

/**
 * What `shm` must have free to take the run: a container's default 64 MB would fill up mid-run (the
 * whole suite held 68 MB at its peak here, sampled every 2 s).
 */
export const MEMORY_TEMP_MIN_FREE = 2 * 1024 ** 3;

/**
 * Points TMPDIR at a fresh directory in memory (`shm`, /dev/shm where it exists) for the whole run:
 * every temp repository, store and agent HOME the tests make lands there. On this machine /tmp is a
 * virtual disk, and the tests' fsyncs, renames and ~15,000 git calls paid for it. A TMPDIR the caller
 * set is theirs and is kept; without a writable `shm` with `minFree` bytes free nothing changes.
 * Returns the directory made.
 */
export function useMemoryTemp(
  env: NodeJS.ProcessEnv,
  shm = '/dev/shm',
  minFree = MEMORY_TEMP_MIN_FREE,
): string | undefined {
  if (env.TMPDIR !== undefined && env.TMPDIR !== '') return undefined;
  let dir: string;
  try {
    if (!statSync(shm).isDirectory()) return undefined;
    const space = statfsSync(shm);
    if (space.bavail * space.bsize < minFree) return undefined;
    dir = mkdtempSync(join(shm, 'forge-tests-'));
  } catch {
    return undefined;
  }
  env.TMPDIR = dir;
  env[RUN_TEMP] = dir;
  return dir;
}

/**
 * A version manager's directories on PATH: its shims and its plugins' (each a shell script that asks the
 * manager which interpreter to run, ~25 processes and 70-100 ms of CPU a call), and its own commands.
 * Not an interpreter's own bin directory (`~/.pyenv/versions/3.11.7/bin`): that is a plain program.
 */
const VERSION_MANAGER_DIR =
  /(?:^|\/)(?:\.(?:pyenv|rbenv|nodenv|goenv|jenv|plenv|phpenv|asdf)\/(?:plugins\/[^/]+\/)?(?:shims|bin)|mise\/shims)\/?$/;

/**
 * Takes a version manager's directories off `env.PATH` for the whole run; returns what was taken. The
 * system's interpreters stay. Behind pyenv's shims each loop runner's question to `python3` and
 * `python` (src/infra/python-sites.ts) cost ~3,300 processes a run here, and the shims folder, which the
 * loops watch on PATH, was rehashed under them by anything that started pyenv. The suite's results do not
 * depend on which interpreter a developer's manager picks.
 */
export function dropVersionManagers(env: NodeJS.ProcessEnv): string[] {
  const entries = (env.PATH ?? '').split(delimiter);
  const dropped = entries.filter((entry) => VERSION_MANAGER_DIR.test(entry));
  if (dropped.length > 0) env.PATH = entries.filter((entry) => !dropped.includes(entry)).join(delimiter);
  return dropped;
}
