// What the exit watch (src/infra/exit-watch.ts) costs a measured run: every Node process a metric,
// guard or track run starts loads its preload, and the baseline's runs do too, so the cost is in every
// score alike; this says how large it is. A bare Node start with and without the preload, taken in
// turns so that the host's load falls on both; one that calls process.exit, whose call is logged; and
// the watch's own making and removal around each run. The same for a Python start (python3 -c pass)
// with and without the read watch's sitecustomize (src/infra/python-watch.ts), which every Python
// process of a loop's runs loads.
import { spawnSync } from 'node:child_process';
import { startExitWatch } from '../../src/infra/exit-watch.js';
import type { Row } from './report.js';
import { summarize, type Summary } from './stats.js';
import { cleanEnv, tempDir } from './support.js';

export interface ExitWatchCost {
  starts: number;
  /** The fs calls each process of fsCalls and fsCallsOutside makes. */
  fsCallCount: number;
  bare: Summary;
  watched: Summary;
  /** A watched start that calls process.exit(0): its call is logged, with its stack. */
  exiting: Summary;
  /** startExitWatch and remove, around each run. */
  setup: Summary;
  /** A Node process making fsCallCount fs calls in its own folder, without and with the read watch. */
  fsCalls: { bare: Summary; watched: Summary };
  /** The same calls on one path outside the tree, which the watch resolves and takes the stack of. */
  fsCallsOutside: { bare: Summary; watched: Summary };
  /** python3 -c pass without and with the read watch; undefined where python3 is missing. */
  python?: { bare: Summary; watched: Summary };
}

const FS_CALL_COUNT = 100_000;
/** A path outside the tree, absent: the watch notes each test of it (logging a few stacks once). */
const OUTSIDE = '/var/tmp/forge-bench-absent';
/** `count` tests of one path, as a test runner makes them by the thousand. */
const fsCallsOn = (path: string, count: number) =>
  `const fs = require('fs'); for (let i = 0; i < ${count}; i += 1) fs.existsSync(${JSON.stringify(path)});`;

function startMs(
  env: Record<string, string | undefined>,
  code: string,
  program = process.execPath,
  cwd?: string,
): number {
  const started = performance.now();
  const ran = spawnSync(program, [program === process.execPath ? '-e' : '-c', code], {
    env,
    stdio: 'ignore',
    ...(cwd === undefined ? {} : { cwd }),
  });
  const took = performance.now() - started;
  if (ran.status !== 0) throw new Error(`${program} ${code} exited ${String(ran.status)}`);
  return took;
}

/** Python's start with and without the read watch, in turns; undefined without a python3. */
function pythonStarts(
  env: Record<string, string | undefined>,
  watchedEnv: Record<string, string | undefined>,
  starts: number,
): { bare: Summary; watched: Summary } | undefined {
  if (spawnSync('python3', ['-c', 'pass'], { env, stdio: 'ignore' }).status !== 0) return undefined;
  const bare: number[] = [];
  const watched: number[] = [];
  for (let round = -1; round < starts; round += 1) {
    const times = [startMs(env, 'pass', 'python3'), startMs(watchedEnv, 'pass', 'python3')];
    if (round < 0) continue;
    bare.push(times[0] ?? 0);
    watched.push(times[1] ?? 0);
  }
  return { bare: summarize(bare), watched: summarize(watched) };
}

/**
 * `fsCalls`: the calls each fs-call process makes (default 100,000; the tests take fewer, as they
 * check the figure's making, not its size).
 */
export async function measureExitWatchCost(options: {
  starts: number;
  fsCalls?: number;
}): Promise<ExitWatchCost> {
  const fsCallCount = options.fsCalls ?? FS_CALL_COUNT;
  const dir = await tempDir('exit-watch');
  try {
    const env = cleanEnv(dir.path);
    const watch = await startExitWatch(dir.path);
    if (watch === undefined) throw new Error('no exit watch could be made');
    // With the trees, as a loop's runs have it: the read watch is loaded too.
    const watchedEnv = watch.env(env, [], [dir.path]);
    const bare: number[] = [];
    const watched: number[] = [];
    const exiting: number[] = [];
    // One of each first, unmeasured: the page cache and the binary's pages warm for both.
    for (let round = -1; round < options.starts; round += 1) {
      const times = [startMs(env, '0'), startMs(watchedEnv, '0'), startMs(watchedEnv, 'process.exit(0)')];
      if (round < 0) continue;
      bare.push(times[0] ?? 0);
      watched.push(times[1] ?? 0);
      exiting.push(times[2] ?? 0);
    }
    const python = pythonStarts(env, watchedEnv, options.starts);
    const fsCalls: number[][] = [[], [], [], []];
    for (let round = 0; round < Math.max(3, Math.ceil(options.starts / 4)); round += 1) {
      const inTree = fsCallsOn('package.json', fsCallCount);
      const outside = fsCallsOn(OUTSIDE, fsCallCount);
      fsCalls[0]?.push(startMs(env, inTree, process.execPath, dir.path));
      fsCalls[1]?.push(startMs(watchedEnv, inTree, process.execPath, dir.path));
      fsCalls[2]?.push(startMs(env, outside, process.execPath, dir.path));
      fsCalls[3]?.push(startMs(watchedEnv, outside, process.execPath, dir.path));
    }
    const logged = (await watch.read())?.length ?? 0;
    if (logged !== options.starts + 1)
      throw new Error(`the watch logged ${logged} exits, not ${options.starts + 1}`);
    await watch.remove();
    const setup: number[] = [];
    for (let round = 0; round < options.starts; round += 1) {
      const started = performance.now();
      const made = await startExitWatch(dir.path);
      await made?.remove();
      setup.push(performance.now() - started);
    }
    return {
      starts: options.starts,
      fsCallCount,
      bare: summarize(bare),
      watched: summarize(watched),
      exiting: summarize(exiting),
      setup: summarize(setup),
      ...(python === undefined ? {} : { python }),
      fsCalls: { bare: summarize(fsCalls[0] ?? []), watched: summarize(fsCalls[1] ?? []) },
      fsCallsOutside: { bare: summarize(fsCalls[2] ?? []), watched: summarize(fsCalls[3] ?? []) },
    };
  } finally {
    await dir.remove();
  }
}

/** The figure's rows; `ms` is the table's duration format. */
export function exitWatchRows(cost: ExitWatchCost, ms: (value: number) => string): Row[] {
  const extra = cost.watched.median - cost.bare.median;
  return [
    {
      figure: '14',
      measure: `exit watch: a Node start without / with its preload (median of ${cost.starts}, in turns), and the difference`,
      value: `${ms(cost.bare.median)} / ${ms(cost.watched.median)} (${extra >= 0 ? '+' : ''}${ms(extra)})`,
      budget: '',
      verdict: '',
    },
    {
      figure: '',
      measure:
        'a watched start that calls process.exit(0), logged with its stack; the watch made and removed around a run',
      value: `${ms(cost.exiting.median)}; ${ms(cost.setup.median)}`,
      budget: '',
      verdict: '',
    },
    ...[
      ['in its folder', cost.fsCalls] as const,
      ['on one path outside the tree', cost.fsCallsOutside] as const,
    ].map(([where, calls]) => ({
      figure: '',
      measure: `read watch: a Node process making ${cost.fsCallCount.toLocaleString('en-US')} fs.existsSync calls ${where}, without / with it`,
      value: `${ms(calls.bare.median)} / ${ms(calls.watched.median)} (${ms((calls.watched.median - calls.bare.median) / (cost.fsCallCount / 1000))} per 1,000 calls)`,
      budget: '',
      verdict: '',
    })),
    ...(cost.python === undefined
      ? []
      : [
          {
            figure: '',
            measure:
              'read watch: a Python start (python3 -c pass) without / with its sitecustomize, and the difference',
            value: `${ms(cost.python.bare.median)} / ${ms(cost.python.watched.median)} (${cost.python.watched.median >= cost.python.bare.median ? '+' : ''}${ms(cost.python.watched.median - cost.python.bare.median)})`,
            budget: '',
            verdict: '',
          },
        ]),
  ];
}
