// In-memory ports for runner tests: memory store, fake clock, scripted executors, in-memory lock.
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import type { BeadStore } from '../../src/beads/types.js';
import { runEpic } from '../../src/loop/runner.js';
import type {
  AcquireResult,
  ExecutionRequest,
  ExecutionResult,
  Executor,
  LockHolder,
  LoopEvent,
  RunnerDeps,
  RunnerOptions,
  RunSummary,
} from '../../src/loop/types.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';

export type Behaviour = (
  request: ExecutionRequest,
  call: number,
) => Promise<ExecutionResult> | ExecutionResult;

export interface Harness {
  store: BeadStore;
  clock: FakeClock;
  events: LoopEvent[];
  requests: ExecutionRequest[];
  lockState: { holder?: LockHolder | undefined; live: boolean; released: number };
  stopFile: { requested: boolean };
  /** Per-bead-title behaviour; beads not listed succeed. */
  behaviours: Map<string, Behaviour>;
  run(overrides?: Partial<RunnerOptions>, deps?: Partial<RunnerDeps>): Promise<RunSummary>;
  epic(titles: string[], options?: { priorities?: number[] }): Promise<{ epicId: string; ids: string[] }>;
}

export const ok = (message = 'done'): ExecutionResult => ({ outcome: 'ok', message, agent: 'fake' });

export function createHarness(): Harness {
  const clock = createFakeClock();
  const store = createMemoryBeadStore({ clock });
  const events: LoopEvent[] = [];
  const requests: ExecutionRequest[] = [];
  const behaviours = new Map<string, Behaviour>();
  const calls = new Map<string, number>();
  const lockState: Harness['lockState'] = { live: false, released: 0 };
  const stopFile = { requested: false };

  const executor: Executor = {
    kind: 'fake',
    writesCode: true,
    async execute(request) {
      requests.push(request);
      const call = (calls.get(request.bead.id) ?? 0) + 1;
      calls.set(request.bead.id, call);
      const behaviour = behaviours.get(request.bead.title);
      return behaviour === undefined ? ok() : behaviour(request, call);
    },
  };

  const harness: Harness = {
    store,
    clock,
    events,
    requests,
    lockState,
    stopFile,
    behaviours,
    async epic(titles, options = {}) {
      const epic = await store.create({ title: 'Epic', type: 'epic', priority: 1 });
      const ids: string[] = [];
      for (const [index, title] of titles.entries()) {
        clock.advance(1);
        const bead = await store.create({
          title,
          parent: epic.id,
          priority: options.priorities?.[index] ?? 2,
        });
        ids.push(bead.id);
      }
      return { epicId: epic.id, ids };
    },
    async run(overrides = {}, deps = {}) {
      const epicId = overrides.epicId ?? '';
      return runEpic(
        {
          epicId,
          cwd: '/repo',
          runId: 'run-1',
          pid: 4242,
          host: 'test-host',
          agents: { commandLine: { roles: {} }, config: {}, builtin: 'fake' },
          beadTimeoutMs: 60_000,
          wallClockMs: 0,
          maxBeads: 0,
          maxAttempts: 3,
          backoffMs: 1_000,
          maxBackoffMs: 60_000,
          autoCommit: false,
          dryRun: false,
          signal: new AbortController().signal,
          ...overrides,
        },
        {
          store,
          executors: { resolve: () => executor },
          lock: {
            async acquire(holder): Promise<AcquireResult> {
              if (lockState.holder !== undefined && lockState.live)
                return { ok: false, holder: lockState.holder };
              const previous = lockState.holder;
              lockState.holder = holder;
              lockState.live = true;
              return previous === undefined ? { ok: true } : { ok: true, tookOverFrom: previous };
            },
            async update(patch) {
              if (lockState.holder !== undefined) lockState.holder = { ...lockState.holder, ...patch };
            },
            async release() {
              lockState.holder = undefined;
              lockState.live = false;
              lockState.released += 1;
            },
          },
          control: {
            stopRequested: async () => stopFile.requested,
            clearStop: async () => {
              stopFile.requested = false;
            },
            transcriptPath: (bead) => `/logs/${bead}.log`,
          },
          clock,
          emit: (event) => events.push(event),
          ...deps,
        },
      );
    },
  };
  return harness;
}
