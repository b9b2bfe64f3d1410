// The CLI's dependency container: real implementations by default, overridable in tests.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { StoreFactories } from '../beads/open-store.js';
import { systemClock, type Clock } from '../infra/clock.js';
import { diskLoopFiles, type LoopFiles } from '../infra/loop-files.js';
import { signalGroup } from '../infra/pid.js';
import type { TextSink } from '../infra/text-sink.js';
import type { AgentFactory } from '../loop/agent-executor.js';
import type { RunnerGit } from '../loop/types.js';
import type { Prompter } from './prompt.js';
import { createAgentFactory } from './agent-factory.js';
import { lazyStoreFactories } from './store-factories.js';

export type { TextSink } from '../infra/text-sink.js';

export interface CliDeps {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Data only: JSON documents, ids, tables. */
  stdout: TextSink;
  /** Everything meant for people. */
  stderr: TextSink;
  stderrIsTTY: boolean;
  clock: Clock;
  storeFactories: StoreFactories;
  version: string;
  pid: number;
  host: string;
  /** Calls `handler` on SIGINT/SIGTERM/SIGHUP with how many have arrived; returns an unsubscribe. */
  onInterrupt(handler: (count: number) => void): () => void;
  /** Leaves at once (a second Ctrl-C). */
  exitNow(code: number): never;
  /** Kills a whole process group at once (the live agent's, before leaving at once). */
  killProcessGroup(pid: number): void;
  /** Builds agent runners from specs (tests swap in fakes). */
  agentFactory: AgentFactory;
  createRunnerGit(cwd: string): Promise<RunnerGit | undefined>;
  /** How init asks questions: undefined = the terminal when stdin is one; null = never ask. */
  prompter?: Prompter | null;
  /** The Node version doctor checks (tests pretend to be an old Node). */
  nodeVersion?: string;
  /** How doctor tells a live lock holder from a dead one. */
  isProcessAlive?: (pid: number) => boolean;
  /** Makes (or reuses) the loop's worktree on branch ralph-loop/<epic>; returns its path. */
  prepareWorktree(repo: string, epicId: string, onNote?: (text: string) => void): Promise<string>;
  /** Where autoresearch reads and writes a loop's state (tests may keep it in memory). */
  loopFiles: LoopFiles;
}

export function createDeps(overrides: Partial<CliDeps> = {}): CliDeps {
  const deps: CliDeps = {
    cwd: process.cwd(),
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    stderrIsTTY: process.stderr.isTTY === true,
    clock: systemClock,
    storeFactories: lazyStoreFactories(),
    version: readPackageVersion(),
    pid: process.pid,
    host: hostname(),
    onInterrupt: listenForInterrupts,
    exitNow: (code) => process.exit(code),
    killProcessGroup: (pid) => signalGroup(pid, 'SIGKILL'),
    agentFactory: createAgentFactory(),
    createRunnerGit: async (cwd) => (await import('./runner-git.js')).createRunnerGit({ cwd, env: deps.env }),
    prepareWorktree: async (repo, epicId, onNote) =>
      (await import('./runner-git.js')).prepareLoopWorktree({
        repo,
        epicId,
        env: deps.env,
        ...(onNote === undefined ? {} : { onNote }),
      }),
    loopFiles: diskLoopFiles(),
    ...overrides,
  };
  return deps;
}

function listenForInterrupts(handler: (count: number) => void): () => void {
  let count = 0;
  const listener = (): void => {
    count += 1;
    handler(count);
  };
  // A closed terminal (SIGHUP) stops the run like SIGTERM: the agent's group stopped, the lock released.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of signals) process.on(signal, listener);
  return () => {
    for (const signal of signals) process.off(signal, listener);
  };
}

function readPackageVersion(): string {
  try {
    const raw = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(raw) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
