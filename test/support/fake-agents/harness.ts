// Puts the fake agent on a private PATH (as `claude`, `codex`, `opencode`, `gemini`, `my-agent`) and reads back what it was called with.
import { chmod, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { goneNow } from '../pids.js';

const FAKE = join(dirname(fileURLToPath(import.meta.url)), 'fake-agent.mjs');
const NAMES = ['claude', 'codex', 'opencode', 'gemini', 'my-agent'];

export type FakeAction =
  | { line: unknown }
  | { stderr: string }
  | { sleepMs: number }
  /** That many MiB of numbered 1 KiB lines on stdout, then `flood done`. */
  | { flood: { mib: number } }
  | { hang: true }
  | { ignoreSigterm: true }
  | { grandchild: string }
  /** A process in a session of its own (setsid) that the group kill cannot reach. */
  | { escape: string }
  | { writeFile: { path: string; content: string } }
  /** A file in the agent's TMPDIR (the call log's env names it). */
  | { writeTempFile: { name: string; content: string } }
  /** Replaces the agent's TMPDIR with a symlink to this path. */
  | { linkTemp: string }
  | { exit: number };

export interface FakeCall {
  name: string;
  argv: string[];
  stdin: string;
  cwd: string;
  pid: number;
  env: Record<string, string>;
}

export interface FakeAgents {
  /** A temp directory for the test: `work` is an empty working tree inside it. */
  dir: string;
  work: string;
  /** The env to hand to an adapter: PATH with the fakes first, the scenario, the call log. */
  env(actions: FakeAction[], extra?: Record<string, string>): Record<string, string>;
  calls(): Promise<FakeCall[]>;
}

export async function setUpFakeAgents(): Promise<FakeAgents> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-agents-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  const work = join(dir, 'work');
  await mkdir(bin);
  await mkdir(work);
  await chmod(FAKE, 0o755);
  for (const name of NAMES) await symlink(FAKE, join(bin, name));
  const log = join(dir, 'calls.jsonl');
  return {
    dir,
    work,
    env: (actions, extra = {}) => ({
      PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: dir,
      FAKE_AGENT_SCENARIO: JSON.stringify({ actions }),
      FAKE_AGENT_LOG: log,
      ...extra,
    }),
    calls: async () => {
      const text = await readFile(log, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as FakeCall);
    },
  };
}

/** True once a pid is gone (a zombie waiting to be reaped counts as gone): goneNow, for `eventually`. */
export function isGone(pid: number): Promise<boolean> {
  return Promise.resolve(goneNow(pid));
}

/** Polls until `check` holds or `ms` pass; for "it did stop", never for timing. */
export async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}
