// A temp git repo with the embedded store (or the fake br) and the fake runner agent, driven through
// the CLIs' programs in the test's process, or the built CLIs as processes where a test needs one: the
// fixture of the ralph-loop process tests.
import { execa } from 'execa';
import { mkdtemp, readFile, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { ROOT, runCli, runCliInProcess, type CliResult } from './cli.js';
import { FAKE_BR_BIN } from './fake-br/fake-br-env.js';

export const FAKE_AGENT = join(ROOT, 'test', 'support', 'fake-runner-agent.mjs');

export type Action =
  | { exit: number }
  | { sleepMs: number }
  /** Waits until the file exists: the test's go-ahead, instead of a guess at how long it needs. */
  | { waitFor: string }
  | { hang: true }
  | { stdout: string }
  | { write: { path: string; content: string } }
  | { grandchild: string }
  /** Runs a command and waits for it; `{bead}` in an argument becomes the bead's id. */
  | { exec: string[] }
  /** From here on the agent ignores SIGTERM (only SIGKILL ends it). */
  | { ignoreTerm: true };

export interface Repo {
  dir: string;
  store: Store;
  env: Record<string, string>;
  agent: string;
  script(plan: Record<string, Action[][]>): Promise<void>;
  calls(): Promise<{ bead: string; attempt: number; stdin: string; pid: number; cwd: string }[]>;
  /** forge-pack's program in the test's process (`runCliInProcess`). */
  forge(args: string[]): Promise<CliResult>;
  /** forge-pack as a process: exit codes, output and faults as a user meets them. */
  forgeProcess(args: string[]): Promise<CliResult>;
  /** forge-pack `beads …` in the test's process, for setup and for reading the store back. */
  beads(args: string[]): Promise<CliResult>;
  /** ralph-loop's program in the test's process (`runCliInProcess`). */
  ralph(args: string[]): Promise<CliResult>;
  /** ralph-loop as a process, killed after `timeoutMs`. */
  ralphProcess(args: string[], timeoutMs?: number): Promise<CliResult>;
  epic(titles: string[], extra?: (index: number) => string[]): Promise<{ epic: string; ids: string[] }>;
  show(id: string): Promise<{ status: string; labels?: string[]; comments?: { text: string }[] }>;
}

export type Store = 'embedded' | 'br';

/**
 * `git: false`: a plain project directory, no repository in it or above it. `under`: where to make it
 * (default: the system's temp dir).
 */
export async function makeRepo(
  store: Store = 'embedded',
  options: { git?: boolean; under?: string } = {},
): Promise<Repo> {
  const dir = await mkdtemp(join(options.under ?? tmpdir(), 'forge-e2e-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const bin = join(dir, '.bin');
  await mkdir(bin);
  await symlink(FAKE_AGENT, join(bin, 'claude'));
  if (store === 'br') await symlink(FAKE_BR_BIN, join(bin, 'br'));
  const work = join(dir, 'repo');
  await mkdir(work);
  const gitEnv = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_CEILING_DIRECTORIES: dir };
  if (options.git !== false) {
    await execa('git', ['init', '-q', '-b', 'main'], { cwd: work, env: gitEnv });
    await execa(
      'git',
      ['-c', 'user.email=t@e.st', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init'],
      {
        cwd: work,
        env: gitEnv,
      },
    );
  }
  const scriptPath = join(dir, 'script.json');
  const logPath = join(dir, 'calls.jsonl');
  await writeFile(scriptPath, '{}');
  const env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: dir,
    // Java's home too (it reads the account's, not HOME): Forge watches the package stores in both.
    JAVA_TOOL_OPTIONS: `-Duser.home=${dir}`,
    FAKE_RUNNER_SCRIPT: scriptPath,
    FAKE_RUNNER_LOG: logPath,
    FAKE_BR_VERSION: '0.2.19',
    FAKE_BR_LOG: join(dir, 'br-calls.jsonl'),
    ...gitEnv,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e.st',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e.st',
  };
  const repo: Repo = {
    dir: work,
    store,
    env,
    agent: `${process.execPath} ${FAKE_AGENT}`,
    script: (plan) => writeFile(scriptPath, JSON.stringify(plan)),
    async calls() {
      const text = await readFile(logPath, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map(
          (line) =>
            JSON.parse(line) as { bead: string; attempt: number; stdin: string; pid: number; cwd: string },
        );
    },
    forge: (args) => runCliInProcess('forge-pack', ['--store', store, ...args], { cwd: work, env }),
    forgeProcess: (args) => runCli('forge-pack', ['--store', store, ...args], { cwd: work, env }),
    beads: (args) => runCliInProcess('forge-pack', ['--store', store, 'beads', ...args], { cwd: work, env }),
    ralph: (args) => runCliInProcess('ralph-loop', ['--store', store, ...args], { cwd: work, env }),
    ralphProcess: (args, timeoutMs) =>
      runCli('ralph-loop', ['--store', store, ...args], { cwd: work, env, timeoutMs }),
    async epic(titles, extra) {
      const epic = JSON.parse((await repo.beads(['create', 'Epic', '-t', 'epic', '--json'])).stdout) as {
        id: string;
      };
      const ids: string[] = [];
      for (const [index, title] of titles.entries()) {
        const created = await repo.beads([
          'create',
          title,
          '--parent',
          epic.id,
          '--json',
          ...(extra?.(index) ?? []),
        ]);
        expect(created.exitCode, created.stderr).toBe(0);
        ids.push((JSON.parse(created.stdout) as { id: string }).id);
      }
      return { epic: epic.id, ids };
    },
    async show(id) {
      const shown = await repo.beads(['show', id, '--json']);
      return (JSON.parse(shown.stdout) as { status: string }[])[0]!;
    },
  };
  expect((await repo.beads(['init'])).exitCode).toBe(0);
  return repo;
}
