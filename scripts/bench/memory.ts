// Figure 4: memory over many no-op autoresearch iterations, in one process: the core runner with the real
// autoresearch executors (doer, hard judge, arbiter, strategist that stamps the next cycle) on the embedded
// store, with the real file lock, run dir and event log; agents, git and the metric are in-process no-ops.
import { stat } from 'node:fs/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAutoresearchExecutors } from '../../src/autoresearch/executors/index.js';
import { createLoopIdleProbe } from '../../src/autoresearch/idle-probe.js';
import { readArbiterSignal } from '../../src/autoresearch/signals.js';
import { stampIteration, stampRetrospective } from '../../src/autoresearch/stamp.js';
import { labelValue } from '../../src/loop/select.js';
import { systemClock } from '../../src/infra/clock.js';
import { createEventLogWriter } from '../../src/infra/event-log.js';
import { createFileLock } from '../../src/infra/lock-file.js';
import { createRunDir } from '../../src/infra/run-dir.js';
import { runEpic } from '../../src/loop/runner.js';
import type { Executor } from '../../src/loop/types.js';
import { createBenchLoop, metricResult, type BenchLoop } from './loop-fixture.js';
import { probeEmbeddedWrites, type StoreWriteProbe } from './store-writes.js';
import { tempDir } from './support.js';

export interface MemoryOptions {
  iterations: number;
  store: 'embedded' | 'memory';
  /** Where the workspace goes (a tmpfs keeps fsync out of a memory figure). */
  baseDir?: string;
  /**
   * A loop of this many iterations run first, its figures dropped: the code every iteration and the
   * loop's end take is compiled by then (V8 keeps bytecode and feedback in the heap's old space, ~2 MB
   * here), so the start → end growth is what the run retained, not code compiled on first use.
   */
  warmUpIterations?: number;
}

export interface MemorySample {
  /** Beads closed so far. */
  beads: number;
  rssMb: number;
  heapUsedMb: number;
}

export interface MemoryFigures {
  iterations: number;
  /** Iterations of the loop run before this one (MemoryOptions.warmUpIterations). */
  warmUpIterations: number;
  store: 'embedded' | 'memory';
  baseDir: string;
  beads: number;
  totalMs: number;
  /** ms per iteration over the first and the last tenth: growth here is per-operation cost, not memory. */
  firstTenthMsPerIter: number;
  lastTenthMsPerIter: number;
  gcAvailable: boolean;
  start: MemorySample;
  max: MemorySample;
  end: MemorySample;
  /** After a forced GC at start and end (when --expose-gc is on): what is really retained. */
  heapAfterGcStart: HeapAfterGc | null;
  heapAfterGcEnd: HeapAfterGc | null;
  /** After the run, with the memory store's records let go, after GC: what the runner itself retained. */
  heapWithoutStore: HeapAfterGc | null;
  /** `.beads/issues.jsonl` at the end: data the embedded store holds (and parses) by design. */
  storeBytes: number;
  samples: MemorySample[];
  /** Heap used after a forced GC every tenth of the run (empty without --expose-gc). */
  heapAfterGc: (HeapAfterGc & { beads: number })[];
  /**
   * With the memory-backed store: the loop's final beads written out as an embedded store (a tenth of
   * them, and all), and what one change costs there, measured after the memory figures.
   */
  embeddedWrites: StoreWriteProbe[];
}

const MB = 1024 * 1024;

function sample(beads: number): MemorySample {
  const usage = process.memoryUsage();
  return { beads, rssMb: usage.rss / MB, heapUsedMb: usage.heapUsed / MB };
}

export interface HeapAfterGc {
  heapUsedMb: number;
  /** Of which compiled code (V8's code spaces): grows as the JIT optimises more functions, not with data. */
  codeMb: number;
}

function collectGarbage(): HeapAfterGc | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return null;
  gc();
  gc();
  const codeBytes = getHeapSpaceStatistics()
    .filter((space) => space.space_name.includes('code'))
    .reduce((total, space) => total + space.space_used_size, 0);
  return { heapUsedMb: process.memoryUsage().heapUsed / MB, codeMb: codeBytes / MB };
}

/** Agents that do nothing, except the strategist, which stamps what comes next as a real one would. */
function noopAgents(loop: BenchLoop): Executor {
  return {
    kind: 'agent',
    writesCode: true,
    async execute(request) {
      if (request.role === 'strategist') {
        const iter = Number(labelValue(request.bead, 'iter'));
        const signal = await readArbiterSignal(loop.ctx.files, loop.ctx.paths.root);
        if (signal?.type === 'terminal') await stampRetrospective(loop.ctx, loop.store);
        else
          await stampIteration(loop.ctx, loop.store, {
            iter: iter + 1,
            directive: { text: `Directive ${iter + 1}: try the next idea.\n` },
          });
      }
      return {
        outcome: 'ok',
        message: 'nothing to do',
        agent: 'noop',
        finalText: request.role === 'doer' ? 'Done.\nHYPOTHESIS: nothing changes' : 'Done.',
      };
    },
  };
}

export async function measureMemory(options: MemoryOptions): Promise<MemoryFigures> {
  const warmUp = options.warmUpIterations ?? 0;
  if (warmUp > 0) await measureMemory({ ...options, iterations: warmUp, warmUpIterations: 0 });
  const dir = await tempDir('memory', options.baseDir);
  try {
    const loop = await createBenchLoop(dir.path, {
      maxIterations: options.iterations,
      plateau: 0,
      store: options.store,
    });
    const workspace = loop.ctx.paths.root;
    // Keep, keep, revert, …: never a plateau, never the target; the cap ends the loop.
    let measured = 0;
    const runMetric = async () => {
      measured += 1;
      return metricResult(measured % 3 === 0 ? 0 : 10 + measured);
    };
    const agents = noopAgents(loop);
    const builtins = createAutoresearchExecutors({
      repo: loop.repo,
      workspace,
      files: loop.ctx.files,
      config: loop.config,
      store: loop.store,
      git: loop.git,
      clock: systemClock,
      agents: { full: agents, readOnly: agents },
      runMetric,
    });
    const runDir = createRunDir(workspace);
    const log = createEventLogWriter(runDir.eventLogPath('bench-memory'));

    // Preallocated before the run, so the bench's own bookkeeping does not grow with it.
    const capacity = options.iterations * 4 + 16;
    const rss = new Float64Array(capacity);
    const heap = new Float64Array(capacity);
    const closedAt = new Float64Array(capacity);
    const heapAfterGc: (HeapAfterGc & { beads: number })[] = [];
    const heapAfterGcStart = collectGarbage();
    const start = sample(0);
    rss[0] = start.rssMb;
    heap[0] = start.heapUsedMb;
    const checkpointEvery = Math.max(1, Math.floor(options.iterations / 10)) * 4;
    if (heapAfterGcStart !== null) heapAfterGc.push({ beads: 0, ...heapAfterGcStart });
    let closed = 0;
    const started = performance.now();
    const summary = await runEpic(
      {
        epicId: loop.epicId,
        cwd: loop.repo,
        runId: 'bench-memory',
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
        store: loop.store,
        executors: { resolve: (role) => builtins[role] ?? agents },
        lock: createFileLock({ path: runDir.lockPath, host: 'bench' }),
        control: runDir,
        git: {
          operationInProgress: async () => undefined,
          indexLock: async () => undefined,
          dirtyPaths: async () => new Map(),
          commitChanges: async () => ({ leftOut: [] }),
        },
        idle: createLoopIdleProbe({ repo: loop.repo, workspace, files: loop.ctx.files }),
        clock: systemClock,
        emit: (event) => {
          log.write(event);
          if (event.type !== 'bead_closed') return;
          closed += 1;
          const now = sample(closed);
          closedAt[closed - 1] = performance.now();
          rss[closed] = now.rssMb;
          heap[closed] = now.heapUsedMb;
          const checkpoint =
            heapAfterGcStart !== null && closed % checkpointEvery === 0 ? collectGarbage() : null;
          if (checkpoint !== null) {
            heapAfterGc.push({ beads: closed, ...checkpoint });
          }
        },
      },
    );
    await log.flush();
    const totalMs = performance.now() - started;
    const end = sample(closed);
    const heapAfterGcEnd = collectGarbage();
    // Every iteration is four beads; the retrospective is one more.
    if (summary.reason !== 'terminal' || closed < options.iterations * 4) {
      throw new Error(
        `the memory loop stopped early (${summary.reason}: ${summary.message}) after ${closed} beads`,
      );
    }
    const tenth = Math.max(1, Math.floor(options.iterations / 10)) * 4;
    const span = (from: number, to: number) =>
      ((closedAt[to] ?? Number.NaN) - (closedAt[from] ?? Number.NaN)) / ((to - from) / 4);
    let maxAt = 0;
    for (let i = 1; i <= closed; i += 1) if ((rss[i] ?? 0) > (rss[maxAt] ?? 0)) maxAt = i;
    const at = (i: number): MemorySample => ({
      beads: i,
      rssMb: rss[i] ?? Number.NaN,
      heapUsedMb: heap[i] ?? Number.NaN,
    });
    const samples: MemorySample[] = [];
    for (let i = 0; i <= closed; i += 1) if (i % 40 === 0 || i === closed) samples.push(at(i));
    const issues = join(loop.repo, '.beads', 'issues.jsonl');
    // The write probe needs the records; then they are let go to see what the runner itself retained.
    let records = (await loop.records?.()) ?? [];
    const embeddedWrites =
      records.length === 0
        ? []
        : await probeEmbeddedWrites(records, join(dir.path, 'probe'), [
            Math.ceil(records.length / 10),
            records.length,
          ]);
    records = [];
    let heapWithoutStore: HeapAfterGc | null = null;
    if (loop.dropRecords !== undefined) {
      loop.dropRecords();
      heapWithoutStore = collectGarbage();
    }
    return {
      iterations: options.iterations,
      warmUpIterations: warmUp,
      store: options.store,
      baseDir: options.baseDir ?? tmpdir(),
      beads: closed,
      totalMs,
      firstTenthMsPerIter: span(0, tenth),
      lastTenthMsPerIter: span(closed - 1 - tenth, closed - 1),
      gcAvailable: heapAfterGcEnd !== null,
      start,
      max: at(maxAt),
      end,
      heapAfterGcStart,
      heapAfterGcEnd,
      heapWithoutStore,
      storeBytes: options.store === 'embedded' ? (await stat(issues)).size : 0,
      samples,
      heapAfterGc,
      embeddedWrites,
    };
  } finally {
    await dir.remove();
  }
}
