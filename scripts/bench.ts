// `npm run bench`: measures Forge against the performance budget of DESIGN §7, prints one table on stdout
// and writes every number to bench/results.json. Progress goes to stderr. See `--help`.
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measureArbiterStamp, type ArbiterStamp } from './bench/arbiter-stamp.js';
import { measureCompare } from './bench/compare.js';
import type { BenchLoop } from './bench/loop-fixture.js';
import { measureMemory, type MemoryFigures } from './bench/memory.js';
import { promptTokenRows, type PromptTokens } from './bench/prompt-sizes.js';
import { buildRows, describeMachine, renderTable, type BenchFigures } from './bench/report.js';
import { measureRunnerOverhead } from './bench/runner-overhead.js';
import { measureStatusLatency } from './bench/status-latency.js';
import { measureStoreScale } from './bench/store-scale.js';
import { measureEpicStatus } from './bench/epic-status-latency.js';
import { measureReportRender } from './bench/report-render.js';
import { measureValidateCost } from './bench/validate-cost.js';
import { measureHomeGuardCost } from './bench/home-guard-cost.js';
import { measureExitWatchCost } from './bench/exit-watch-cost.js';
import { hostSpeedNote, measureHostSpeed } from './bench/host-speed.js';
import { measureIgnoredGuardCost } from './bench/ignored-guard-cost.js';
import { measureDoerSettleCost } from './bench/doer-settle-cost.js';
import { measureQueueRun } from './bench/queue-run.js';
import { BUILT_MAIN, droppedCostlyEnv, ROOT } from './bench/support.js';

const USAGE = `Usage: npm run bench -- [options]

Measures Forge against DESIGN §7 and prints a table; every number goes to bench/results.json.
Needs the build (npm run bench builds first). Nothing leaves 127.0.0.1.

  --quick              smaller counts (under 30 s); skips the real-claude figure
  --only <list>        figures to run, e.g. --only 1,2 (1 runner, 2 status, 3 arbiter/stamp,
                       4 memory, 5 model requests, 6 compare, 7 validate before a run,
                       8 embedded store at 100 / 1,000 / 10,000 beads)
                       9 the report page of a 10,000-iteration loop in chromium,
                       10 tokens of each role's prompt, real claude,
                       11 12 no-op beads of 10 s at --parallel 1 and 4, and through the queue
                       executor with 4 workers,
                       12 the guard of ignored files around an agent run,
                       13 the guard of the agent CLIs' files in HOME around an agent run,
                       14 the exit watch's preload in a Node start of a measured run,
                       15 a doer's commit settled: tree metadata and git's store)
  --compare "<cmd>"    also run the same no-op epic through another runner command on the same
                       fake br and print the ratio; placeholders {epic} {agent} {agent_script}
                       {node} {root} {beads_dir}, e.g.
                       --compare "node ../other/runner.js --epic {epic} --agent {agent}"
  --out <file>         where to write the results (default bench/results.json)
  -h, --help           this text
`;

interface Plan {
  beads: number;
  /** Beads of the whole CLI run in process (figure 1c). */
  cliBeads: number;
  /** Slices the br epics of figure 1b are run in (floor and runner take turns). */
  floorSlices: number;
  /** Figure 1d: whole runs against the floor, start to finish. */
  wholeBeads: number;
  wholeRounds: number;
  coreBeads: number;
  statusSizes: number[];
  statusRuns: number;
  statusBigRuns: number;
  /** Figure 2b: a plain epic's status, its beads and how many a run closes first. */
  epicStatusBeads: number;
  epicStatusClosed: number;
  arbiterRounds: number;
  arbiterColdRounds: number;
  memoryIterations: number;
  modelLoops: ('hard' | 'soft')[];
  compareBeads: number;
  validateBeads: number;
  storeScaleSizes: number[];
  storeScaleRounds: number;
  reportIterations: number;
  reportRuns: number;
  /** Figure 11: beads, each agent's time, workers. */
  queue: { beads: number; beadMs: number; workers: number };
  /** Figure 12: installed dependency files, other ignored files, rounds. */
  ignoredGuard: {
    dependencyFiles: number;
    otherFiles: number;
    buildCacheFiles: number;
    storeFiles: number;
    rounds: number;
  };
  /** Figure 13: [skills, files per skill] of each HOME, and rounds. */
  homeGuard: { homes: [number, number][]; rounds: number };
  /** Figure 14: Node starts with and without the exit watch's preload. */
  exitWatchStarts: number;
  /** Figure 15: tracked files of the repository, rounds. */
  doerSettle: { files: number; rounds: number };
}

const DEFAULT_PLAN: Plan = {
  beads: 120,
  cliBeads: 100,
  floorSlices: 4,
  wholeBeads: 20,
  wholeRounds: 7,
  coreBeads: 300,
  statusSizes: [1_000, 10_000, 100_000],
  statusRuns: 5,
  statusBigRuns: 2,
  epicStatusBeads: 300,
  epicStatusClosed: 20,
  arbiterRounds: 20,
  arbiterColdRounds: 2,
  memoryIterations: 1000,
  modelLoops: ['hard', 'soft'],
  compareBeads: 100,
  validateBeads: 300,
  storeScaleSizes: [100, 1_000, 10_000],
  // 30 rounds put figure 8's ready ratio anywhere from 1.19× to 1.56× from run to run (30 samples of a
  // 0.3 ms call between fsyncs); 120 hold it at 1.42–1.45× and take 3 s.
  storeScaleRounds: 120,
  reportIterations: 10_000,
  reportRuns: 3,
  queue: { beads: 12, beadMs: 10_000, workers: 4 },
  ignoredGuard: {
    dependencyFiles: 20_000,
    otherFiles: 2_000,
    buildCacheFiles: 50_000,
    storeFiles: 20_000,
    rounds: 5,
  },
  // Forge's own 11 skills; and 40 skills of 5 files, a user with a collection.
  homeGuard: {
    homes: [
      [11, 1],
      [40, 5],
    ],
    rounds: 15,
  },
  exitWatchStarts: 30,
  doerSettle: { files: 50_000, rounds: 5 },
};

const QUICK_PLAN: Plan = {
  beads: 16,
  cliBeads: 16,
  floorSlices: 2,
  wholeBeads: 8,
  wholeRounds: 1,
  coreBeads: 200,
  statusSizes: [1_000, 100_000],
  statusRuns: 3,
  statusBigRuns: 0,
  epicStatusBeads: 50,
  epicStatusClosed: 3,
  arbiterRounds: 5,
  arbiterColdRounds: 1,
  memoryIterations: 30,
  modelLoops: [],
  compareBeads: 20,
  validateBeads: 100,
  storeScaleSizes: [100, 1_000, 10_000],
  storeScaleRounds: 10,
  reportIterations: 10_000,
  reportRuns: 1,
  queue: { beads: 4, beadMs: 1_000, workers: 2 },
  ignoredGuard: {
    dependencyFiles: 2_000,
    otherFiles: 200,
    buildCacheFiles: 2_000,
    storeFiles: 2_000,
    rounds: 2,
  },
  homeGuard: {
    homes: [
      [11, 1],
      [40, 5],
    ],
    rounds: 3,
  },
  exitWatchStarts: 8,
  doerSettle: { files: 5_000, rounds: 2 },
};

const started = performance.now();
function progress(message: string): void {
  process.stderr.write(
    `bench [${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`,
  );
}

/** A tmpfs keeps fsync out of the memory figure; the system temp dir otherwise. */
function memoryBaseDir(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/** Figure 4 runs in a fresh process with --expose-gc, so earlier figures do not colour its heap. */
function runMemoryChild(iterations: number): Promise<MemoryFigures> {
  const script = fileURLToPath(import.meta.url);
  const args = [
    ...process.execArgv,
    '--expose-gc',
    script,
    '--child',
    'memory',
    '--iterations',
    String(iterations),
    '--base',
    memoryBaseDir(),
  ];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the memory figure's process exited ${String(code)}`));
      resolvePromise(JSON.parse(out) as MemoryFigures);
    });
  });
}

/** Numbers rounded to 3 decimals in the JSON file: comparable across runs, no float noise. */
function roundNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1000) / 1000 : value;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      compare: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      child: { type: 'string' },
      iterations: { type: 'string' },
      base: { type: 'string' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.child === 'memory') {
    const iterations = Number(values.iterations ?? '1000');
    const figures = await measureMemory({
      iterations,
      warmUpIterations: Math.min(50, Math.ceil(iterations / 10)),
      store: 'memory',
      ...(values.base === undefined ? {} : { baseDir: values.base }),
    });
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    return 0;
  }
  if (!existsSync(BUILT_MAIN)) {
    process.stderr.write('bench: dist/ is missing; run `npm run build` first (npm run bench does).\n');
    return 3;
  }

  const plan = values.quick ? QUICK_PLAN : DEFAULT_PLAN;
  const only = new Set(
    (values.only ?? '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15').split(',').map((part) => part.trim()),
  );
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  progress('process starts on this host (bare Node, `true`)');
  const hostSpeed = await measureHostSpeed();
  const figures: BenchFigures = {};

  if (only.has('1')) {
    progress(`figure 1: runner overhead, ${plan.beads} no-op beads (embedded store, fake br, floor)`);
    figures.runner = await measureRunnerOverhead({
      beads: plan.beads,
      cliBeads: plan.cliBeads,
      slices: plan.floorSlices,
      coreBeads: plan.coreBeads,
      wholeBeads: plan.wholeBeads,
      wholeRounds: plan.wholeRounds,
    });
  }
  if (only.has('11')) {
    const q = plan.queue;
    progress(
      `figure 11: ${q.beads} no-op beads of ${q.beadMs / 1000} s at --parallel 1 and ${q.workers}, and through the queue with ${q.workers} workers`,
    );
    figures.queue = [
      await measureQueueRun({ ...q, mode: 'parallel', workers: 1 }),
      await measureQueueRun({ ...q, mode: 'parallel' }),
      await measureQueueRun({ ...q, mode: 'queue' }),
    ];
  }
  if (only.has('2') || only.has('3')) {
    const largest = Math.max(...plan.statusSizes);
    let arbiter: ArbiterStamp | undefined;
    const withLoop = only.has('3')
      ? async (lines: number, loop: BenchLoop) => {
          if (lines !== largest) return;
          progress(`figure 3: arbiter and stamping with a ${largest.toLocaleString('en-US')}-line ledger`);
          arbiter = await measureArbiterStamp(
            { lines: largest, rounds: plan.arbiterRounds, coldRounds: plan.arbiterColdRounds },
            loop,
          );
        }
      : undefined;
    progress(
      `figure 2: ralph-loop status on ${plan.statusSizes.map((n) => n.toLocaleString('en-US')).join(', ')}-line ledgers`,
    );
    const status = await measureStatusLatency({
      sizes: plan.statusSizes,
      runs: plan.statusRuns,
      bigRuns: plan.statusBigRuns,
      bigLines: 100_000,
      ...(withLoop === undefined ? {} : { withLoop }),
    });
    if (only.has('2')) {
      figures.status = status;
      progress(`figure 2b: ralph-loop status of a plain epic of ${plan.epicStatusBeads} beads`);
      figures.epicStatus = await measureEpicStatus({
        beads: plan.epicStatusBeads,
        closed: plan.epicStatusClosed,
        runs: plan.statusRuns,
      });
    }
    if (arbiter !== undefined) figures.arbiter = arbiter;
  }
  // Figures 4 and 5 measure memory and request counts, not time: they run side by side.
  let memory: Promise<MemoryFigures> | undefined;
  if (only.has('4')) {
    progress(`figure 4: memory over ${plan.memoryIterations} no-op autoresearch iterations (own process)`);
    memory = runMemoryChild(plan.memoryIterations);
    // Awaited after figure 5; until then a failure must not count as unhandled.
    memory.catch(() => undefined);
  }
  if (only.has('5')) {
    if (plan.modelLoops.length === 0) {
      figures.models = { skipped: 'skipped with --quick (the real claude takes ~20 s)' };
    } else if (!existsSync(join(ROOT, 'test', 'support', 'model-server', 'index.ts'))) {
      figures.models = { skipped: 'n/a (model server not available)' };
    } else {
      progress(
        'figure 5: model requests per iteration, real claude against the scripted server (hard, soft)',
      );
      // Loaded only here: the model server belongs to the end-to-end suite and may be missing.
      const { measureModelRequests } = await import('./bench/model-requests.js');
      figures.models = await measureModelRequests(plan.modelLoops);
      if (memory !== undefined) figures.memoryAlongsideModels = true;
    }
  }
  if (memory !== undefined) figures.memory = await memory;
  if (only.has('6')) {
    if (values.compare === undefined) {
      figures.compare = { skipped: 'not run (pass --compare "<runner command>")' };
    } else {
      progress(`figure 6: ${values.compare} vs ralph-loop, ${plan.compareBeads} beads`);
      figures.compare = await measureCompare(values.compare, plan.compareBeads);
    }
  }

  if (only.has('7')) {
    progress(`figure 7: validate before a run, ${plan.validateBeads} beads (embedded, fake br, process)`);
    figures.validate = await measureValidateCost({ beads: plan.validateBeads, rounds: 5 });
  }

  if (only.has('8')) {
    progress(`figure 8: embedded store at ${plan.storeScaleSizes.join(' / ')} beads (on disk, fsync)`);
    // The build directory's disk, not a tmpfs: a change's cost is mostly its fsync.
    figures.storeScale = await measureStoreScale({
      sizes: plan.storeScaleSizes,
      rounds: plan.storeScaleRounds,
      baseDir: join(ROOT, 'bench', 'tmp'),
    });
  }

  if (only.has('9')) {
    progress(
      `figure 9: ralph-loop report of ${plan.reportIterations.toLocaleString('en-US')} iterations, loaded in chromium`,
    );
    figures.report = await measureReportRender({ iterations: plan.reportIterations, runs: plan.reportRuns });
  }

  if (only.has('12')) {
    const g = plan.ignoredGuard;
    progress(
      `figure 12: the ignored-file guard around an agent run, ${g.dependencyFiles} dependency and ${g.otherFiles} other files, a build cache of ${g.buildCacheFiles}, a package store of ${g.storeFiles}`,
    );
    figures.ignoredGuard = await measureIgnoredGuardCost(g);
  }

  if (only.has('13')) {
    progress("figure 13: the guard of the agent CLIs' files in HOME around an agent run");
    figures.homeGuard = await measureHomeGuardCost(plan.homeGuard);
  }

  if (only.has('14')) {
    progress("figure 14: the exit watch's preload in every Node start of a measured run");
    figures.exitWatch = await measureExitWatchCost({ starts: plan.exitWatchStarts });
  }

  if (only.has('15')) {
    progress(`figure 15: a doer's commit settled, ${plan.doerSettle.files} tracked files`);
    figures.doerSettle = await measureDoerSettleCost(plan.doerSettle);
  }

  let promptTokens: PromptTokens | { skipped: string } | undefined;
  if (only.has('10')) {
    if (plan.modelLoops.length === 0) {
      promptTokens = { skipped: 'skipped with --quick (the real claude takes ~30 s)' };
    } else if (!existsSync(join(ROOT, 'test', 'support', 'model-server', 'index.ts'))) {
      promptTokens = { skipped: 'n/a (model server not available)' };
    } else {
      progress("figure 10: tokens of each role's prompt, real claude against the scripted server");
      const { measurePromptTokens } = await import('./bench/prompt-tokens.js');
      promptTokens = await measurePromptTokens(figures.models);
    }
  }

  const machine = describeMachine(loadAtStart);
  const rows = [...buildRows(figures), ...(promptTokens === undefined ? [] : promptTokenRows(promptTokens))];
  const date = new Date().toISOString();
  const elapsedSeconds = (performance.now() - started) / 1000;
  const dropped = droppedCostlyEnv();
  const notes = [
    `Forge bench ${date}${values.quick ? ' (--quick)' : ''}: Node ${machine.node}, ${machine.cpus.count} × ${machine.cpus.model}, ${machine.totalMemGiB} GiB, ${machine.platform}`,
    `load average ${machine.loadAverage.start.toFixed(2)} at start, ${machine.loadAverage.end.toFixed(2)} at end (${machine.cpus.count} CPUs): timings above the CPU count are inflated`,
    hostSpeedNote(hostSpeed),
    ...(dropped.length === 0
      ? []
      : [`children ran with a clean environment, without ${dropped.join(', ')} (it slows every Node start)`]),
  ];
  process.stdout.write(
    `${notes.join('\n')}\n\n${renderTable(rows)}\n\ntook ${elapsedSeconds.toFixed(0)} s\n`,
  );

  const out = resolve(values.out ?? join(ROOT, 'bench', 'results.json'));
  await mkdir(dirname(out), { recursive: true });
  const results = {
    date,
    machine,
    node: process.version,
    quick: values.quick,
    figures_run: [...only].sort(),
    plan,
    environment: { dropped_from_children: dropped },
    host_speed: hostSpeed,
    elapsed_seconds: elapsedSeconds,
    figures: { ...figures, ...(promptTokens === undefined ? {} : { promptTokens }) },
    table: rows,
  };
  await writeFile(out, `${JSON.stringify(results, roundNumbers, 2)}\n`);
  progress(`wrote ${out}`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
