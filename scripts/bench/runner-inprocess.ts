// The runner's own time per bead, with no br and no agent process: the core over the memory store, and the
// whole CLI wiring (file lock, event log, transcripts, embedded store on disk) with an in-process no-op agent.
import type { AgentRunner } from '../../src/agents/types.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import { runProgram } from '../../src/cli/main.js';
import { createRalphLoopProgram } from '../../src/cli/ralph-loop.js';
import { systemClock } from '../../src/infra/clock.js';
import { runEpic } from '../../src/loop/runner.js';
import type { EpicLock, Executor, LockHolder } from '../../src/loop/types.js';
import { perBeadFromEvents, readRunEvents } from './runner-process.js';
import { seedEmbeddedEpic } from './seed.js';
import { gaps } from './stats.js';
import { cleanEnv, initGitRepo, tempDir } from './support.js';

export interface InProcessRun {
  beads: number;
  totalMs: number;
  /** Bead-to-bead times. */
  perBead: number[];
}

const noopExecutor: Executor = {
  kind: 'noop',
  writesCode: false,
  execute: async () => ({ outcome: 'ok', message: 'nothing to do', agent: 'noop' }),
};

function memoryLock(): EpicLock {
  let holder: LockHolder | undefined;
  return {
    acquire: async (record) => {
      holder = record;
      return { ok: true };
    },
    update: async (patch) => {
      if (holder !== undefined) holder = { ...holder, ...patch };
    },
    release: async () => {
      holder = undefined;
    },
  };
}

/** The core runner alone: memory store, no-op executor, in-memory lock, no event log. */
export async function runCoreInProcess(count: number): Promise<InProcessRun> {
  const store = createMemoryBeadStore();
  const epic = await store.create({ title: 'bench: no-op epic', type: 'epic', priority: 1 });
  for (let i = 1; i <= count; i += 1) await store.create({ title: `no-op ${i}`, parent: epic.id });
  const closedAt: number[] = [];
  const started = performance.now();
  const summary = await runEpic(
    {
      epicId: epic.id,
      cwd: process.cwd(),
      runId: 'bench',
      pid: process.pid,
      host: 'bench',
      agents: { commandLine: { roles: {} }, config: {}, builtin: 'noop' },
      beadTimeoutMs: 60_000,
      wallClockMs: 0,
      maxBeads: 0,
      maxAttempts: 1,
      backoffMs: 0,
      maxBackoffMs: 0,
      autoCommit: false,
      dryRun: false,
      signal: new AbortController().signal,
    },
    {
      store,
      executors: { resolve: () => noopExecutor },
      lock: memoryLock(),
      control: {
        stopRequested: async () => false,
        clearStop: async () => undefined,
        transcriptPath: (id) => `/dev/null/${id}`,
      },
      clock: systemClock,
      emit: (event) => {
        if (event.type === 'bead_closed') closedAt.push(performance.now());
      },
    },
  );
  const totalMs = performance.now() - started;
  if (summary.beadsClosed !== count)
    throw new Error(`the core runner closed ${summary.beadsClosed} of ${count}`);
  return { beads: count, totalMs, perBead: gaps(closedAt) };
}

const noopRunner: AgentRunner = {
  name: 'noop',
  run: async () => ({
    outcome: 'ok',
    message: 'nothing to do',
    finalText: '',
    exitCode: 0,
    durationMs: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    permissionDenials: [],
    toolErrors: [],
    agent: 'noop',
    scripted: false,
  }),
};

/**
 * The whole `ralph-loop` program in this process (commander, store opening, file lock, run dir, event
 * log, progress lines, embedded store on disk, git check), with only the agent process replaced by an
 * in-process no-op: what a bead costs the runner and its store, without br and without a spawn.
 */
export async function runCliInProcess(count: number): Promise<InProcessRun> {
  const dir = await tempDir('cli');
  try {
    await initGitRepo(dir.path, dir.path);
    const seeded = await seedEmbeddedEpic(dir.path, count);
    const sink = { write: () => undefined };
    const started = performance.now();
    const code = await runProgram(
      'ralph-loop',
      createRalphLoopProgram,
      ['node', 'ralph-loop', '--store', 'embedded', seeded.epicId, '--agent', 'noop', '--max-attempts', '1'],
      {
        cwd: dir.path,
        env: cleanEnv(dir.path),
        stdout: sink,
        stderr: sink,
        stderrIsTTY: false,
        agentFactory: () => noopRunner,
        onInterrupt: () => () => undefined,
      },
    );
    const totalMs = performance.now() - started;
    if (code !== 0) throw new Error(`ralph-loop (in process) exited ${code}`);
    const perBead = perBeadFromEvents(await readRunEvents(dir.path, seeded.epicId));
    if (perBead.closed !== count)
      throw new Error(`ralph-loop (in process) closed ${perBead.closed} of ${count}`);
    return { beads: count, totalMs, perBead: perBead.cycle };
  } finally {
    await dir.remove();
  }
}
