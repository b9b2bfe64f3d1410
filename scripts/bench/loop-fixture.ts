// An autoresearch loop to measure, made by the real setup code (`forge-pack loop`'s), with git and the
// metric replaced by in-memory stand-ins, and realistic ledgers grown with the real arbiter.
import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { decide } from '../../src/autoresearch/arbiter.js';
import type { LoopConfig } from '../../src/autoresearch/config.js';
import type { JudgeVerdict } from '../../src/autoresearch/judge-output.js';
import { ledgerLineSchema, type LedgerLine } from '../../src/autoresearch/ledger.js';
import { loadLedgerSummary, type LedgerSummary } from '../../src/autoresearch/ledger-summary.js';
import { setupLoop } from '../../src/autoresearch/setup.js';
import type { LoopSetupOptions } from '../../src/autoresearch/setup-options.js';
import { openLoop, type LoopContext } from '../../src/autoresearch/loop-context.js';
import {
  createEmbeddedStore,
  createEngineStore,
  createMemoryBackend,
  type IssueRecord,
  type RecordBackend,
} from '../../src/beads/embedded/index.js';
import type { BeadStore } from '../../src/beads/types.js';
import type { Git } from '../../src/infra/git.js';
import type { ProcessResult } from '../../src/infra/process.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

/**
 * Git with nothing to do: one commit, a clean tree. The executors' git steps (snapshot, guard, keep,
 * revert) run their logic over it without spawning git, so a thousand iterations take seconds.
 */
export function createIdleGit(cwd: string): Git {
  const head = 'b'.repeat(40);
  return {
    cwd,
    headSha: async () => head,
    resolveCommit: async (rev) => (rev === head || rev === 'HEAD' ? head : undefined),
    statusPorcelain: async () => [],
    statusWithHead: async () => ({ head: { sha: head, branch: 'main' }, entries: [] }),
    changedSince: async () => [],
    pathsInCommit: async () => new Set<string>(),
    checkoutPathsFrom: async () => undefined,
    removePaths: async () => undefined,
    commitPaths: async () => undefined,
    isMergeOrRebaseInProgress: async () => false,
    saveFiles: async () => new Map(),
    writeSavedFiles: async () => undefined,
    listTree: async () => [],
    exportFiles: async () => undefined,
    readTexts: async () => new Map(),
    detachHead: async () => undefined,
    writeIndexTree: async () => 't'.repeat(40),
    readIndexTree: async () => undefined,
    worktreeAdd: async () => undefined,
    worktreeList: async () => [],
    worktreeRemove: async () => undefined,
    deleteBranch: async () => undefined,
    headState: async () => ({ sha: head, branch: 'main' }),
    isAncestor: async () => true,
    diffCommits: async () => [],
    resetSoft: async () => undefined,
    attachHead: async () => undefined,
    checkObjects: async () => undefined,
    commonDir: async () => `${cwd}/.git`,
    gitDir: async () => `${cwd}/.git`,
    topLevel: async () => cwd,
    subjectsBetween: async () => [],
  };
}

/** What a metric command that printed `{"score": n}` would return. */
export function metricResult(score: number): ProcessResult {
  return {
    exitCode: 0,
    signal: undefined,
    stdout: `${JSON.stringify({ score })}\n`,
    stderr: '',
    timedOut: false,
    aborted: false,
    spawnError: undefined,
    durationMs: 1,
  };
}

export interface BenchLoop {
  repo: string;
  epicId: string;
  store: BeadStore;
  git: Git;
  ctx: LoopContext;
  config: LoopConfig;
  ledgerPath: string;
  /** The memory store's records, in creation order (store `memory` only). */
  records?: () => Promise<IssueRecord[]>;
  /** Lets the memory store's records go (store `memory` only; the store is empty afterwards). */
  dropRecords?: () => void;
}

export interface BenchLoopOptions {
  maxIterations: number;
  /** 0: never stop on a plateau. */
  plateau?: number;
  target?: number;
  baselineScore?: number;
  /** `memory`: the embedded store's engine with its records kept in memory (no file rewritten per change). */
  store?: 'embedded' | 'memory';
}

export const BENCH_PROGRAM =
  'Make src/value.txt hold a larger number, one careful step per iteration; keep the file small and readable.';

/** A hard-metric loop in `repo` on the embedded store: workspace, config, registry, baseline, cycle 1. */
export async function createBenchLoop(repo: string, options: BenchLoopOptions): Promise<BenchLoop> {
  await mkdir(join(repo, 'src'), { recursive: true });
  await writeFile(join(repo, 'src', 'value.txt'), '10\n');
  const backend = options.store === 'memory' ? droppableMemoryBackend() : undefined;
  const store =
    backend === undefined
      ? createEmbeddedStore({ cwd: repo, actor: 'bench' })
      : createEngineStore(backend, { actor: 'bench' });
  await store.init({ prefix: 'bd' });
  const git = createIdleGit(repo);
  const setup: LoopSetupOptions = {
    subject: 'value booster',
    program: BENCH_PROGRAM,
    metric: {
      type: 'hard',
      command: 'node metric/score.mjs',
      score: { from: 'json', path: 'score' },
      direction: 'maximize',
    },
    ...(options.target === undefined ? {} : { target: options.target }),
    maxIterations: options.maxIterations,
    plateau: options.plateau ?? 0,
    scope: ['src/'],
    agents: { doer: 'noop', strategist: 'noop' },
  };
  const files = diskLoopFiles();
  const result = await setupLoop(repo, setup, {
    store,
    git,
    runMetric: async () => metricResult(options.baselineScore ?? 10),
    now: () => Date.now(),
    host: hostname(),
    isProcessAlive: () => false,
    files,
  });
  const ctx = await openLoop(repo, result.epic, { storeKind: 'embedded', files });
  return {
    repo,
    epicId: result.epic,
    store,
    git,
    ctx,
    config: ctx.config,
    ledgerPath: ctx.paths.ledger,
    ...(backend === undefined
      ? {}
      : { records: async () => [...(await backend.read()).values()], dropRecords: () => backend.drop() }),
  };
}

/** The memory backend, with a way to let go of every record (to see what else a long run retained). */
function droppableMemoryBackend(): RecordBackend & { drop(): void } {
  let inner = createMemoryBackend('bd');
  return {
    init: (prefix) => inner.init(prefix),
    read: () => inner.read(),
    update: (mutate) => inner.update(mutate),
    flush: () => inner.flush(),
    drop: () => {
      inner = createMemoryBackend('bd');
    },
  };
}

/** A deterministic pseudo-random sequence, so every run writes the same ledger. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HYPOTHESES = [
  'batch the writes so the hot loop allocates once per request instead of once per item',
  'replace the linear scan in the token bucket with a ring buffer indexed by second',
  'cache the parsed config between calls; the profile shows it parsed on every request',
  'split the refill into a separate timer so bursts no longer starve the steady clients',
  'inline the small helper the benchmark flags as hot and drop the closure it allocates',
];

/**
 * Appends `count` ledger lines after the ledger's current end, each decided by the real arbiter from the
 * running summary (keeps, reverts and the odd crash, realistic hypotheses, costs and durations), written
 * in one go. Every 500th line is checked against the ledger schema. Returns the summary at the end.
 */
export async function growLedger(
  loop: Pick<BenchLoop, 'config' | 'ledgerPath' | 'ctx'>,
  count: number,
  seed = 7,
): Promise<LedgerSummary> {
  const random = seededRandom(seed);
  const params = { direction: loop.config.metric.direction, target: loop.config.target };
  let summary = (await loadLedgerSummary(loop.ctx.files, loop.ledgerPath, params, { persist: false }))
    .summary;
  const start = Date.parse(summary.last_ts ?? '2026-11-22T10:00:00.000Z');
  const lines: string[] = [];
  let sha = randomBytes(20).toString('hex');
  for (let i = 0; i < count; i += 1) {
    const iter = summary.last_iter + 1;
    const best = summary.best_score ?? 10;
    const crashed = random() < 0.03;
    const score = Math.round((best + (random() - 0.6) * 4) * 100) / 100;
    const judge: JudgeVerdict = crashed
      ? { ok: false, reason: 'the metric command exited 1 with no score' }
      : {
          ok: true,
          output: {
            score,
            findings: Array.from({ length: Math.floor(random() * 6) }, (_, k) => `finding ${k}`),
          },
        };
    const result = decide({
      config: loop.config,
      ledger: summary,
      iter,
      judge,
      baseSha: sha,
      now: new Date(start + (i + 1) * 180_000).toISOString(),
      hypothesis: HYPOTHESES[iter % HYPOTHESES.length]!,
      iterationCostUsd: Math.round(random() * 150) / 100,
      durationMs: 60_000 + Math.floor(random() * 240_000),
    });
    if (result.decision === 'keep') sha = randomBytes(20).toString('hex');
    const line: LedgerLine = { ...result.line, sha };
    if (i % 500 === 0) ledgerLineSchema.parse(line);
    lines.push(JSON.stringify(line));
    summary = result.summary;
    if (result.signal.type === 'terminal') throw new Error(`the grown ledger ended the loop at ${iter}`);
  }
  await appendFile(loop.ledgerPath, lines.map((line) => `${line}\n`).join(''));
  return summary;
}
