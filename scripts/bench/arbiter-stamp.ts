// Figure 3: the arbiter and stamping with a long ledger, in process: `decide` plus the real ledger append
// (warm summary cache, and once cold: a full scan), the whole arbiter bead, and stampIteration on the
// embedded store.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { decide } from '../../src/autoresearch/arbiter.js';
import { createArbiterExecutor } from '../../src/autoresearch/executors/arbiter.js';
import { updateIterationState } from '../../src/autoresearch/iteration-state.js';
import { judgeOutputPath, writeJudgeOutput } from '../../src/autoresearch/judge-output.js';
import {
  loadLedgerSummary,
  recordLedgerLine,
  summaryPathFor,
} from '../../src/autoresearch/ledger-summary.js';
import { stampIteration } from '../../src/autoresearch/stamp.js';
import type { Bead } from '../../src/beads/types.js';
import { systemClock } from '../../src/infra/clock.js';
import type { Executor } from '../../src/loop/types.js';
import { createBenchLoop, growLedger, metricResult, type BenchLoop } from './loop-fixture.js';
import { summarize, type Summary } from './stats.js';
import { tempDir } from './support.js';

export interface ArbiterStampOptions {
  lines: number;
  /** Timed repetitions of each warm measurement. */
  rounds: number;
  /** Timed full-scan rounds (each reads the whole ledger). */
  coldRounds: number;
}

export interface ArbiterStamp {
  lines: number;
  /** `decide` alone, over the cached summary. */
  decide: Summary;
  /** Load the summary (cache), decide, append with recordLedgerLine (append + fsync + cache update). */
  decideAndRecord: Summary;
  /** The same with no summary cache: the whole ledger is read and parsed first. */
  decideAndRecordCold: Summary;
  /** The arbiter bead as the runner runs it (state, judge output, decide, git step, record, signal). */
  arbiterBead: Summary;
  /** stampIteration: next cycle's four beads rendered and created on the embedded store. */
  stamp: Summary;
}

function arbiterBead(loop: BenchLoop, iter: number): Bead {
  return {
    id: `bench-arbiter-${iter}`,
    title: `arbiter-${iter}: value booster`,
    status: 'in_progress',
    priority: 2,
    issue_type: 'task',
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
    labels: ['autoresearch', 'role:arbiter', `iter:${iter}`],
    parent: loop.epicId,
  };
}

/**
 * Measures on `existing` (a loop whose ledger already has `options.lines` lines, figure 2's largest),
 * or on a loop made here. The ledger grows by a few lines; stamping adds beads.
 */
export async function measureArbiterStamp(
  options: ArbiterStampOptions,
  existing?: BenchLoop,
): Promise<ArbiterStamp> {
  const dir = await tempDir('arbiter');
  try {
    const loop = existing ?? (await createBenchLoop(dir.path, { maxIterations: 0 }));
    const params = { direction: loop.config.metric.direction, target: loop.config.target };
    if (existing === undefined) await growLedger(loop, options.lines - 1);
    let summary = (await loadLedgerSummary(loop.ctx.files, loop.ledgerPath, params)).summary;
    if (summary.lines !== options.lines)
      throw new Error(`the ledger has ${summary.lines} lines, not ${options.lines}`);
    const judge = { ok: true as const, output: { score: (summary.best_score ?? 10) + 0.5, findings: [] } };
    const input = (iter: number) => ({
      config: loop.config,
      iter,
      judge,
      baseSha: 'b'.repeat(40),
      now: new Date().toISOString(),
      hypothesis: 'bench',
    });

    const decideOnly: number[] = [];
    for (let i = 0; i < Math.max(50, options.rounds); i += 1) {
      const t0 = performance.now();
      decide({ ...input(summary.last_iter + 1), ledger: summary });
      decideOnly.push(performance.now() - t0);
    }

    const timedRecord = async (): Promise<number> => {
      const t0 = performance.now();
      const loaded = await loadLedgerSummary(loop.ctx.files, loop.ledgerPath, params);
      const result = decide({ ...input(loaded.summary.last_iter + 1), ledger: loaded.summary });
      summary = await recordLedgerLine(
        loop.ctx.files,
        loop.ledgerPath,
        { ...result.line, sha: 'c'.repeat(40) },
        params,
      );
      return performance.now() - t0;
    };
    const warm: number[] = [];
    for (let i = 0; i < options.rounds; i += 1) warm.push(await timedRecord());
    const cold: number[] = [];
    for (let i = 0; i < options.coldRounds; i += 1) {
      await rm(summaryPathFor(loop.ledgerPath), { force: true });
      cold.push(await timedRecord());
    }

    const executor: Executor = createArbiterExecutor({
      repo: loop.repo,
      workspace: loop.ctx.paths.root,
      files: loop.ctx.files,
      config: loop.config,
      store: loop.store,
      git: loop.git,
      clock: systemClock,
      agents: { full: unused, readOnly: unused },
      runMetric: async () => metricResult(0),
    });
    const bead: number[] = [];
    for (let i = 0; i < options.rounds; i += 1) {
      const iter = summary.last_iter + 1;
      await writeJudgeOutput(loop.ctx.files, judgeOutputPath(loop.ctx.paths.root, iter), {
        score: (summary.best_score ?? 10) + (i % 3 === 2 ? -1 : 0.5),
        findings: ['one finding'],
      });
      await updateIterationState(loop.ctx.files, loop.ctx.paths.root, iter, (s) => ({
        ...s,
        base_sha: 'b'.repeat(40),
        hypothesis: 'bench',
      }));
      const t0 = performance.now();
      const result = await executor.execute({
        bead: arbiterBead(loop, iter),
        epicId: loop.epicId,
        role: 'arbiter',
        agentSpec: 'built-in',
        agentFromLabel: false,
        attempt: 1,
        cwd: loop.repo,
        signal: new AbortController().signal,
        timeoutMs: 60_000,
        transcriptPath: join(dir.path, 'arbiter.log'),
      });
      bead.push(performance.now() - t0);
      if (result.outcome !== 'ok') throw new Error(`the arbiter bead failed: ${result.message}`);
      summary = (await loadLedgerSummary(loop.ctx.files, loop.ledgerPath, params)).summary;
    }

    const stamp: number[] = [];
    for (let i = 0; i < options.rounds; i += 1) {
      const t0 = performance.now();
      const stamped = await stampIteration(loop.ctx, loop.store, {
        iter: i + 2,
        directive: { text: `Directive ${i + 2}: try the next idea on the list.\n` },
      });
      stamp.push(performance.now() - t0);
      if (stamped.created.length !== 4)
        throw new Error(`stamping ${i + 2} created ${stamped.created.length}`);
    }

    return {
      lines: options.lines,
      decide: summarize(decideOnly),
      decideAndRecord: summarize(warm),
      decideAndRecordCold: summarize(cold),
      arbiterBead: summarize(bead),
      stamp: summarize(stamp),
    };
  } finally {
    await dir.remove();
  }
}

const unused: Executor = {
  kind: 'unused',
  writesCode: false,
  execute: async () => {
    throw new Error('the arbiter ran an agent');
  },
};
