// Figure 2: `ralph-loop status` as a whole process on ledgers of growing size, with the summary cache
// fresh (the arbiter's normal state), stale (a line appended behind its back: the tail is read), and
// missing (a full scan), next to Node's own start and the CLI's module loading on the same machine.
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadLedgerSummary, summaryPathFor } from '../../src/autoresearch/ledger-summary.js';
import { createBenchLoop, growLedger, type BenchLoop } from './loop-fixture.js';
import { median } from './stats.js';
import { BIN, cleanEnv, expectSuccess, NODE, ROOT, runTimed, tempDir } from './support.js';

export type CacheState = 'fresh' | 'stale' | 'missing';

export interface StatusOptions {
  sizes: number[];
  runs: number;
  /** Runs of the full scan on ledgers of this many lines or more (a scan of 100k lines takes a second); 0: none. */
  bigRuns: number;
  bigLines: number;
  /** Called with the loop of each size before it is removed (figure 3 reuses the largest ledger). */
  withLoop?: (lines: number, loop: BenchLoop) => Promise<void>;
}

export interface StatusSize {
  lines: number;
  ledgerBytes: number;
  /** Median ms of the whole process per cache state. */
  ms: Record<CacheState, number>;
  runs: Record<CacheState, number[]>;
  /**
   * Median of (status − a `node -e 0` run just before it): Forge's own part, steadier than the total on
   * a machine whose load changes, since each pair sees the same load.
   */
  beyondNodeMs: Record<CacheState, number>;
  /** The summary source status reported (cache / tail / scan), to show each state took its path. */
  source: Record<CacheState, string>;
}

export interface StatusLatency {
  /** `node -e 0` with the same environment (every run of it, paired ones included). */
  nodeStartMs: number;
  /** `ralph-loop --version`: Node start plus loading the whole CLI. */
  cliLoadMs: number;
  /** A script loading only what status uses (status, ledger-summary, workspace), fresh cache, 100k lines. */
  leanStatusMs: number;
  sizes: StatusSize[];
}

async function repeat(runs: number, once: () => Promise<number>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) samples.push(await once());
  return samples;
}

/** What `ralph-loop status` would cost if the entry loaded only the status modules (a product proposal). */
const LEAN_STATUS = (root: string) => `// Forge bench: status through only the modules it needs.
import { hostname } from 'node:os';
const { loopStatus } = await import(${JSON.stringify(
  pathToFileURL(join(root, 'dist', 'autoresearch', 'status.js')).href,
)});
const { renderStatusText } = await import(${JSON.stringify(
  pathToFileURL(join(root, 'dist', 'cli', 'loop-status-text.js')).href,
)});
const { diskLoopFiles } = await import(${JSON.stringify(
  pathToFileURL(join(root, 'dist', 'infra', 'loop-files.js')).href,
)});
const [repo, epic] = process.argv.slice(2);
const status = await loopStatus(repo, epic, {
  now: () => Date.now(),
  host: hostname(),
  isProcessAlive: (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } },
  files: diskLoopFiles(),
});
process.stdout.write(renderStatusText(status, { unicode: true }));
`;

export async function measureStatusLatency(options: StatusOptions): Promise<StatusLatency> {
  const dir = await tempDir('status');
  try {
    const env = cleanEnv(dir.path);
    const leanScript = join(dir.path, 'lean-status.mjs');
    await writeFile(leanScript, LEAN_STATUS(ROOT));
    const nodeRuns: number[] = [];
    const nodeStart = async (): Promise<number> => {
      const ms = expectSuccess(await runTimed(NODE, ['-e', '0'], { cwd: dir.path, env }), 'node -e 0').ms;
      nodeRuns.push(ms);
      return ms;
    };
    await repeat(options.runs, nodeStart);
    const cliLoad = await repeat(
      options.runs,
      async () =>
        expectSuccess(await runTimed(NODE, [BIN.ralphLoop, '--version'], { cwd: dir.path, env }), 'version')
          .ms,
    );

    const sizes: StatusSize[] = [];
    let leanStatusMs = Number.NaN;
    for (const lines of options.sizes) {
      const repo = join(dir.path, `repo-${lines}`);
      await mkdir(repo, { recursive: true });
      const loop = await createBenchLoop(repo, { maxIterations: 0 });
      const params = { direction: loop.config.metric.direction, target: loop.config.target };
      const cachePath = summaryPathFor(loop.ledgerPath);
      // The baseline line is already there; grow to lines − 1, cache that (stale once one more lands).
      await growLedger(loop, lines - 2);
      await loadLedgerSummary(loop.ctx.files, loop.ledgerPath, params);
      const staleCache = await readFile(cachePath, 'utf8');
      await growLedger(loop, 1, 99);
      await loadLedgerSummary(loop.ctx.files, loop.ledgerPath, params);
      const freshCache = await readFile(cachePath, 'utf8');
      const ledgerBytes = (await stat(loop.ledgerPath)).size;

      const prepare: Record<CacheState, () => Promise<void>> = {
        fresh: () => writeFile(cachePath, freshCache),
        stale: () => writeFile(cachePath, staleCache),
        missing: () => rm(cachePath, { force: true }),
      };
      const ms = {} as Record<CacheState, number>;
      const runs = {} as Record<CacheState, number[]>;
      const beyondNodeMs = {} as Record<CacheState, number>;
      const source = {} as Record<CacheState, string>;
      for (const state of ['fresh', 'stale', 'missing'] as const) {
        const count = state === 'missing' && lines >= options.bigLines ? options.bigRuns : options.runs;
        if (count === 0) {
          runs[state] = [];
          ms[state] = Number.NaN;
          beyondNodeMs[state] = Number.NaN;
          source[state] = 'not run';
          continue;
        }
        const differences: number[] = [];
        runs[state] = await repeat(count, async () => {
          await prepare[state]();
          const node = await nodeStart();
          const run = expectSuccess(
            await runTimed(NODE, [BIN.ralphLoop, 'status', loop.epicId], { cwd: repo, env }),
            `ralph-loop status (${lines} lines, ${state} cache)`,
          );
          differences.push(run.ms - node);
          return run.ms;
        });
        ms[state] = median(runs[state]);
        beyondNodeMs[state] = median(differences);
        await prepare[state]();
        const json = expectSuccess(
          await runTimed(NODE, [BIN.ralphLoop, 'status', loop.epicId, '--json'], { cwd: repo, env }),
          'ralph-loop status --json',
        );
        source[state] = (JSON.parse(json.stdout) as { summary_source: string }).summary_source;
      }
      if (lines === Math.max(...options.sizes)) {
        await prepare.fresh();
        leanStatusMs = median(
          await repeat(
            options.runs,
            async () =>
              expectSuccess(
                await runTimed(NODE, [leanScript, repo, loop.epicId], { cwd: repo, env }),
                'lean status',
              ).ms,
          ),
        );
      }
      sizes.push({ lines, ledgerBytes, ms, runs, beyondNodeMs, source });
      await prepare.fresh();
      await options.withLoop?.(lines, loop);
      await rm(repo, { recursive: true, force: true });
    }
    return { nodeStartMs: median(nodeRuns), cliLoadMs: median(cliLoad), leanStatusMs, sizes };
  } finally {
    await dir.remove();
  }
}
