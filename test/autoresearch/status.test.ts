// `ralph-loop status` over a crafted workspace: numbers, phases, rendering, and the cached-summary path.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { decide } from '../../src/autoresearch/arbiter.js';
import { parseLoopConfig, type LoopConfigFile } from '../../src/autoresearch/config.js';
import { appendLedgerLine, type LedgerLine } from '../../src/autoresearch/ledger.js';
import { recordLedgerLine } from '../../src/autoresearch/ledger-summary.js';
import { sparkline } from '../../src/autoresearch/sparkline.js';
import { processStartTicks } from '../../src/infra/pid.js';
import { loopStatus, type StatusPorts } from '../../src/autoresearch/status.js';
import { renderStatusText, roundRate } from '../../src/cli/loop-status-text.js';
import { registerLoop, workspacePaths, type WorkspacePaths } from '../../src/autoresearch/workspace.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';

// These tests keep the loop's files on disk, beside the repository they work on.
const loopFiles = diskLoopFiles();

const NOW = Date.parse('2026-11-22T12:00:00Z');
const EPIC = 'bd-7f3';

const CONFIG: LoopConfigFile = {
  subject: 'rate-limiter',
  epic_id: EPIC,
  metric: { type: 'hard', command: 'npm test -- --json', score: { from: 'json', path: 'numPassedTests' } },
  target: 95,
  scope: { doer_paths: ['src/'] },
  caps: { max_iterations: 0, plateau_threshold: 0 },
};

// baseline 50, then: keep 55, revert 52, crash, keep 60, revert 58, keep 61
const SCORES: (number | null)[] = [50, 55, 52, null, 60, 58, 61];

async function workspace(): Promise<{ repo: string; paths: WorkspacePaths; lines: LedgerLine[] }> {
  const repo = await mkdtemp(join(tmpdir(), 'forge-status-'));
  onTestFinished(() => rm(repo, { recursive: true, force: true }));
  const paths = workspacePaths(join(repo, '.autoresearch'));
  await mkdir(paths.root, { recursive: true });
  await writeFile(paths.config, JSON.stringify(CONFIG));
  await registerLoop(repo, EPIC, { workspace: '.autoresearch', subject: 'rate-limiter' });
  const config = parseLoopConfig(CONFIG, 'config.json');
  const lines: LedgerLine[] = [];
  for (const [iter, score] of SCORES.entries()) {
    const result = decide({
      config,
      ledger: lines,
      iter,
      judge:
        score === null ? { ok: false, reason: 'timed out' } : { ok: true, output: { score, findings: [] } },
      baseSha: 'a'.repeat(40),
      now: new Date(NOW - (10 - iter) * 60_000).toISOString(),
      hypothesis: iter === 0 ? '' : `idea ${iter}`,
      iterationCostUsd: 0.5,
      durationMs: 60_000,
    });
    lines.push(result.line);
    await recordLedgerLine(loopFiles, paths.ledger, result.line, { direction: 'maximize', target: 95 });
  }
  return { repo, paths, lines };
}

const ports = (alive: number[] = []): StatusPorts => ({
  now: () => NOW,
  host: 'here',
  isProcessAlive: (pid) => alive.includes(pid),
  files: diskLoopFiles(),
});

describe('loopStatus', () => {
  it('reports subject, metric, counts, baseline → best → last, cost and the last five iterations', async () => {
    const { repo } = await workspace();
    const status = await loopStatus(repo, EPIC, ports());
    expect(status.subject).toBe('rate-limiter');
    expect(status.metric).toEqual({
      type: 'hard',
      direction: 'maximize',
      command: 'npm test -- --json',
      score: 'json:numPassedTests',
    });
    expect(status.target).toBe(95);
    expect(status.iterations).toEqual({
      decided: 6,
      kept: 3,
      reverted: 2,
      crashed: 1,
      tampered: 0,
      guard_failed: 0,
    });
    expect(status.scores).toEqual({
      baseline: 50,
      best: 61,
      best_iter: 6,
      current: 61,
      last: 61,
      last_iter: 6,
    });
    expect(status.cost_usd).toBe(3.5);
    expect(status.recent.map((r) => [r.iter, r.decision, r.score, r.hypothesis])).toEqual([
      [6, 'keep', 61, 'idea 6'],
      [5, 'revert', 58, 'idea 5'],
      [4, 'keep', 60, 'idea 4'],
      [3, 'crash', null, 'idea 3'],
      [2, 'revert', 52, 'idea 2'],
    ]);
    expect(status.trajectory.scores).toEqual(SCORES);
    expect(status.trajectory.sparkline).toBe('▁▄▂·▇▆█');
    expect(status.phase).toEqual({ state: 'idle', underway_iter: null });
    expect(status.summary_source).toBe('cache');
  });

  it('is running while the lock holder lives: the live bead and how long it has run', async () => {
    const { repo, paths } = await workspace();
    await writeFile(
      paths.lock,
      JSON.stringify({
        pid: 777,
        host: 'here',
        started_at: new Date(NOW - 3_600_000).toISOString(),
        epic: EPIC,
        run_id: 'r1',
        bead: 'bd-7f3.25',
        bead_started_at: new Date(NOW - 130_000).toISOString(),
      }),
    );
    // A question or a terminal signal does not hide a live runner.
    await writeFile(paths.needsHuman, 'Q?\n');
    const status = await loopStatus(repo, EPIC, ports([777]));
    expect(status.phase).toEqual({
      state: 'running',
      pid: 777,
      host: 'here',
      verified: true,
      run_started_at: new Date(NOW - 3_600_000).toISOString(),
      run_elapsed_ms: 3_600_000,
      bead: 'bd-7f3.25',
      bead_elapsed_ms: 130_000,
    });
    expect(status.stale_lock).toBeNull();
    expect(renderStatusText(status, { unicode: true })).toContain(
      'phase     running: bd-7f3.25 for 2m10s (pid 777, run started 1h00m ago)',
    );

    // The same lock from a dead runner is stale: the loop is not running.
    const dead = await loopStatus(repo, EPIC, ports([]));
    expect(dead.phase.state).toBe('waiting_for_human');
    expect(dead.stale_lock).toMatchObject({ pid: 777, host: 'here' });
  });

  it('a live pid that is now another process (its start differs from the lock’s) holds a stale lock', async () => {
    const { repo, paths } = await workspace();
    const start = processStartTicks(process.pid);
    expect(start).toBeDefined();
    const lock = { pid: process.pid, host: 'here', started_at: 'x', epic: EPIC, run_id: 'r' };
    await writeFile(paths.lock, JSON.stringify({ ...lock, pid_start: start! + 1 }));
    const reused = await loopStatus(repo, EPIC, ports([process.pid]));
    expect(reused.phase.state).not.toBe('running');
    expect(reused.stale_lock).toMatchObject({ pid: process.pid, host: 'here' });

    await writeFile(paths.lock, JSON.stringify({ ...lock, pid_start: start }));
    expect((await loopStatus(repo, EPIC, ports([process.pid]))).phase.state).toBe('running');
  });

  it('a lock taken on another host cannot be checked and counts as running, marked unverified', async () => {
    const { repo, paths } = await workspace();
    await writeFile(
      paths.lock,
      JSON.stringify({ pid: 1, host: 'elsewhere', started_at: 'x', epic: EPIC, run_id: 'r' }),
    );
    const status = await loopStatus(repo, EPIC, ports());
    expect(status.phase).toMatchObject({
      state: 'running',
      verified: false,
      run_elapsed_ms: null,
      bead: null,
    });
  });

  it('idle mid-iteration (the run stopped after the doer or the judge) says which iteration waits for its arbiter', async () => {
    const { repo, paths } = await workspace();
    await mkdir(join(paths.root, 'iterations'), { recursive: true });
    // The decided iterations' records are there too: only the one past the ledger's last counts.
    await writeFile(join(paths.root, 'iterations', 'iter-6.json'), '{"iter":6}');
    expect((await loopStatus(repo, EPIC, ports())).phase).toEqual({ state: 'idle', underway_iter: null });
    await writeFile(join(paths.root, 'iterations', 'iter-7.json'), '{"iter":7}');
    const status = await loopStatus(repo, EPIC, ports());
    expect(status.phase).toEqual({ state: 'idle', underway_iter: 7 });
    expect(renderStatusText(status, { unicode: true })).toContain(
      `idle (not running): iteration 7 is under way, not yet decided; ralph-loop ${EPIC} goes on with it`,
    );
  });

  it('is waiting for a human while needs-human.md exists, else terminated with the reason', async () => {
    const { repo, paths } = await workspace();
    await writeFile(
      paths.needsHuman,
      '# Should the limiter be per user or per key?\n\nDetails…\n\n## Answer\n',
    );
    const waiting = await loopStatus(repo, EPIC, ports());
    expect(waiting.phase).toEqual({
      state: 'waiting_for_human',
      needs_human: paths.needsHuman,
      question: 'Should the limiter be per user or per key?',
    });
    expect(renderStatusText(waiting, { unicode: true })).toContain(`ralph-loop resume ${EPIC}`);

    await rm(paths.needsHuman);
    await writeFile(
      paths.terminalSignal,
      JSON.stringify({
        type: 'terminal',
        reason: 'plateau',
        iter: 6,
        final_score: 61,
        best_score: 61,
        decision: 'keep',
      }),
    );
    const ended = await loopStatus(repo, EPIC, ports());
    expect(ended.phase).toEqual({
      state: 'terminated',
      reason: 'plateau',
      iter: 6,
      final_score: 61,
      best_score: 61,
    });
    expect(renderStatusText(ended, { unicode: true })).toContain('phase     terminated: plateau (best 61)');
  });

  it('reads every file of the loop through its LoopFiles: a loop held only in memory has a status', async () => {
    const files = createMemoryLoopFiles({ now: () => NOW - 60_000 });
    const repo = '/mem/repo';
    const paths = workspacePaths(join(repo, '.autoresearch'));
    await files.writeJson(paths.config, CONFIG);
    const config = parseLoopConfig(CONFIG, 'config.json');
    const lines: LedgerLine[] = [];
    for (const [iter, score] of [50, 55].entries()) {
      const { line } = decide({
        config,
        ledger: lines,
        iter,
        judge: { ok: true, output: { score, findings: [] } },
        baseSha: 'a'.repeat(40),
        now: new Date(NOW - 120_000).toISOString(),
        hypothesis: `idea ${iter}`,
        iterationCostUsd: 0.5,
      });
      lines.push(line);
      await recordLedgerLine(files, paths.ledger, line, { direction: 'maximize', target: 95 });
    }
    await files.writeText(
      join(paths.root, 'runs', 'r1.jsonl'),
      [
        { ts: new Date(NOW - 100_000).toISOString(), type: 'run_started' },
        {
          ts: new Date(NOW - 40_000).toISOString(),
          type: 'attempt_finished',
          role: 'doer',
          duration_ms: 30_000,
        },
      ]
        .map((event) => JSON.stringify(event))
        .join('\n'),
    );
    const memoryPorts = (alive: number[]): StatusPorts => ({ ...ports(alive), files });
    // Above Linux's largest pid_max (2^22), so no real process has it: the lock in memory was written
    // a minute before NOW, and a real process with a small pid (pids wrap at 32,768 here, and the suite
    // starts tens of thousands) started since would make the holder a recycled pid, not a live runner.
    const pid = 5_004_242;
    const lock = {
      pid,
      host: 'here',
      started_at: new Date(NOW - 5_000).toISOString(),
      epic: EPIC,
      run_id: 'r',
    };
    await files.writeJson(paths.lock, lock);
    const running = await loopStatus(repo, EPIC, memoryPorts([pid]), { workspace: '.autoresearch' });
    expect(running.phase).toMatchObject({ state: 'running', pid, run_elapsed_ms: 5_000 });
    expect(running.scores).toMatchObject({ baseline: 50, best: 55 });
    expect(running.figures).toMatchObject({ run_ms: 60_000, time_per_iteration_ms: { doer: 30_000 } });
    expect(running.config_error).toBeNull();

    await files.writeText(paths.needsHuman, '# Per user or per key?\n');
    const waiting = await loopStatus(repo, EPIC, memoryPorts([]), { workspace: '.autoresearch' });
    expect(waiting.phase).toMatchObject({ state: 'waiting_for_human', question: 'Per user or per key?' });
    expect(waiting.stale_lock).toMatchObject({ pid });

    await files.remove(paths.needsHuman);
    await files.writeJson(paths.terminalSignal, {
      reason: 'target',
      iter: 1,
      final_score: 55,
      best_score: 55,
    });
    const ended = await loopStatus(repo, EPIC, memoryPorts([]), { workspace: '.autoresearch' });
    expect(ended.phase).toMatchObject({ state: 'terminated', reason: 'target' });
  });

  it('catches up when the ledger grew past the cache, and rebuilds when there is no cache', async () => {
    const { repo, paths, lines } = await workspace();
    const extra = {
      ...lines[lines.length - 1]!,
      iter: 7,
      score_after: 70,
      decision: 'keep' as const,
      hypothesis: 'idea 7',
    };
    // Appended as the arbiter does (chained), but without bringing the cache up to date.
    await appendLedgerLine(loopFiles, paths.ledger, extra);
    const tail = await loopStatus(repo, EPIC, ports());
    expect(tail.summary_source).toBe('tail');
    expect(tail.scores.best).toBe(70);
    expect(tail.recent[0]?.hypothesis).toBe('idea 7');

    await rm(join(paths.root, 'ledger-summary.json'));
    const scanned = await loopStatus(repo, EPIC, ports());
    expect(scanned.summary_source).toBe('scan');
    expect(scanned.scores.best).toBe(70);
    expect((await loopStatus(repo, EPIC, ports())).summary_source).toBe('cache');
  });

  it('an empty ledger (a soft baseline not judged yet) has no scores and no trend', async () => {
    const repo = await mkdtemp(join(tmpdir(), 'forge-status-'));
    onTestFinished(() => rm(repo, { recursive: true, force: true }));
    const paths = workspacePaths(join(repo, 'loops', 'spec'));
    await mkdir(paths.root, { recursive: true });
    await writeFile(
      paths.config,
      JSON.stringify({
        subject: 'spec',
        metric: { type: 'soft', rubric_path: 'r.md', artifact_path: 'docs/s.md' },
      }),
    );
    await writeFile(paths.ledger, '');
    const status = await loopStatus(repo, 'bd-x', ports(), { workspace: 'loops/spec' });
    expect(status.scores.best).toBeNull();
    expect(status.iterations.decided).toBe(0);
    await writeFile(paths.config, JSON.stringify({ subject: 'spec', epic_id: 'bd-other', metric: {} }));
    await expect(loopStatus(repo, 'bd-x', ports(), { workspace: 'loops/spec' })).rejects.toThrow(
      /belongs to epic bd-other, not bd-x/,
    );
    const text = renderStatusText(status, { unicode: true });
    expect(text).toContain('metric    soft: rubric r.md on docs/s.md, maximize');
    expect(text).toContain('score     — (baseline) → — (best) → — (last)');
    expect(text).not.toContain('trend');
  });
});

describe('rendering', () => {
  it('prints the report with a unicode or ASCII trend', async () => {
    const { repo } = await workspace();
    const status = await loopStatus(repo, EPIC, ports());
    const text = renderStatusText(status, { unicode: true });
    expect(text.split('\n').slice(0, 7)).toEqual([
      'rate-limiter  (epic bd-7f3)',
      'metric    hard: `npm test -- --json` → json:numPassedTests, maximize · target 95',
      'phase     idle (not running)',
      'iters     6 decided: 3 kept, 2 reverted, 1 crashed · 7m00s',
      'spend     $3.50 · 0 in / 0 out tokens · 0 agent run(s)',
      'score     50 (baseline) → 61 (best, iter 6) → 61 (last, iter 6)',
      'trend     ▁▄▂·▇▆█  (iterations 0–6)',
    ]);
    expect(text).toContain('     6  kept            61        +1  "idea 6"');
    expect(text).toContain('     3  crashed          —            "idea 3"');
    expect(renderStatusText(status, { unicode: false })).toContain('trend     _:.x*+#  (iterations 0–6)');
  });

  it('sparkline scales between the lowest and highest score, crashes are gaps', () => {
    expect(sparkline([1, 2, 3, 4, 5, 6, 7, 8], true)).toBe('▁▂▃▄▅▆▇█');
    expect(sparkline([5, 5], true)).toBe('██');
    expect(sparkline([null, 3, null], false)).toBe('x#x');
  });
});

describe('the pace line', () => {
  it.each([
    [1418.72, 1419],
    [100.4, 100],
    [99.94, 99.9],
    [2.3456, 2.35],
    [0.012345, 0.0123],
  ])('rounds %d iterations/hour to %d', (rate, shown) => {
    expect(roundRate(rate)).toBe(shown);
  });
});
