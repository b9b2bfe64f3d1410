// The ledger file and its cached summary: torn tails, corrupt lines, and a cache that never lies.
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { decide, type ArbiterConfig } from '../../src/autoresearch/arbiter.js';
import { appendLedgerLine, LedgerError, readLedger, type LedgerLine } from '../../src/autoresearch/ledger.js';
import {
  loadLedgerSummary,
  readCachedSummary,
  recordLedgerLine,
  summarizeLedger,
  summaryPathFor,
  type SummaryParams,
} from '../../src/autoresearch/ledger-summary.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';

// These tests keep the loop's files on disk, beside the repository they work on.
const loopFiles = diskLoopFiles();

const PARAMS: SummaryParams = { direction: 'maximize', target: 90 };

async function workspace(): Promise<{ dir: string; ledger: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-ledger-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return { dir, ledger: join(dir, 'research-log.jsonl') };
}

function line(iter: number, overrides: Partial<LedgerLine> = {}): LedgerLine {
  return {
    iter,
    ts: `2026-01-01T00:00:00.${String(iter).padStart(3, '0')}Z`,
    score_before: 50,
    score_after: 50 + iter,
    best_before: 50,
    best_after: 50 + iter,
    delta: iter,
    decision: iter === 0 ? 'baseline' : 'keep',
    base_sha: 'a'.repeat(40),
    sha: 'b'.repeat(40),
    findings_count: 2,
    hypothesis: `h${iter}`,
    cost_usd: 0.25,
    duration_ms: 1000,
    terminal: null,
    ...overrides,
  };
}

/** A realistic ledger: every line produced by decide() from seeded scores, crashes included. */
function generatedLines(count: number): LedgerLine[] {
  const cfg: ArbiterConfig = {
    metric: { direction: 'maximize' },
    target: 90,
    min_delta: 0,
    confirmation_rounds: 2,
    caps: { max_iterations: 0, wall_clock_seconds: 0, plateau_threshold: 0, max_cost_usd: 0 },
  };
  const lines: LedgerLine[] = [];
  let seed = 7;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let iter = 0; iter < count; iter++) {
    const crash = iter > 0 && next() < 0.1;
    const result = decide({
      config: cfg,
      ledger: lines,
      iter,
      judge: crash
        ? { ok: false, reason: 'x' }
        : { ok: true, output: { score: Math.round(next() * 1000) / 10, findings: [] } },
      baseSha: 'base',
      now: new Date(iter * 1000).toISOString(),
      iterationCostUsd: 0.1,
    });
    lines.push({ ...result.line, sha: 'sha' });
  }
  return lines;
}

describe('readLedger', () => {
  it('reads an empty or missing ledger as no lines', async () => {
    const { ledger } = await workspace();
    expect(await readLedger(loopFiles, ledger)).toEqual({
      lines: [],
      bytes: 0,
      terminatedLines: 0,
      warnings: [],
      events: [],
      candidates: [],
    });
  });

  it('round-trips appended lines', async () => {
    const { ledger } = await workspace();
    await appendLedgerLine(loopFiles, ledger, line(0));
    await appendLedgerLine(loopFiles, ledger, line(1, { reason: 'because', guard_reverted_paths: ['x'] }));
    const read = await readLedger(loopFiles, ledger);
    expect(read.lines).toEqual([line(0), line(1, { reason: 'because', guard_reverted_paths: ['x'] })]);
    expect(read.warnings).toEqual([]);
  });

  it('tolerates a torn last line with a warning, and the next append repairs it', async () => {
    const { ledger } = await workspace();
    await appendLedgerLine(loopFiles, ledger, line(0));
    await appendFile(ledger, '{"iter":1,"ts":"2026-');
    const read = await readLedger(loopFiles, ledger);
    expect(read.lines).toEqual([line(0)]);
    expect(read.warnings).toEqual([
      `${ledger}:2: ignoring a torn last line (an interrupted write); the next append repairs it`,
    ]);

    await appendLedgerLine(loopFiles, ledger, line(1));
    expect(await readLedger(loopFiles, ledger)).toMatchObject({ lines: [line(0), line(1)], warnings: [] });
    expect((await readFile(ledger, 'utf8')).split('\n')).toHaveLength(3);
  });

  it('names file and line of a corrupt line in the middle', async () => {
    const { ledger } = await workspace();
    await writeFile(ledger, `${JSON.stringify(line(0))}\n{"iter":1,"ts"\n${JSON.stringify(line(2))}\n`);
    await expect(readLedger(loopFiles, ledger)).rejects.toThrow(LedgerError);
    await expect(readLedger(loopFiles, ledger)).rejects.toThrow(`${ledger}:2: not valid JSON`);
    // Bad input named by file and line, as a malformed config is: exit 4, not 1 (an unexpected failure).
    await expect(readLedger(loopFiles, ledger)).rejects.toMatchObject({ exitCode: 4 });
  });

  it('is tamper-evident: a line edited, removed or slipped in after it was written is named', async () => {
    const { ledger } = await workspace();
    for (const iter of [0, 1, 2, 3])
      await appendLedgerLine(loopFiles, ledger, line(iter, { score_after: 10 + iter }));
    const written = await readFile(ledger, 'utf8');
    expect((await readLedger(loopFiles, ledger)).lines.map((l) => l.score_after)).toEqual([10, 11, 12, 13]);

    await writeFile(ledger, written.replace('"score_after":11', '"score_after":99'));
    await expect(readLedger(loopFiles, ledger)).rejects.toThrow(
      `${ledger}:2: this line was changed or removed after it was written`,
    );

    const rows = written.split('\n');
    await writeFile(ledger, [rows[0], rows[2], rows[3], ''].join('\n'));
    await expect(readLedger(loopFiles, ledger)).rejects.toThrow(
      `${ledger}:1: this line was changed or removed`,
    );

    await writeFile(ledger, `${written}${JSON.stringify(line(4))}\n`);
    await expect(readLedger(loopFiles, ledger)).rejects.toThrow(`${ledger}:5: this line has no chain hash`);
  });

  it('names the field of a line that is JSON but not a ledger line', async () => {
    const { ledger } = await workspace();
    await writeFile(
      ledger,
      `${JSON.stringify(line(0))}\n${JSON.stringify({ ...line(1), score_after: 'high' })}\n`,
    );
    await expect(readLedger(loopFiles, ledger)).rejects.toThrow(
      new RegExp(`^${ledger}:2: not a ledger line \\(score_after: `),
    );
  });

  it('a complete last line without its newline is a line, not a torn one', async () => {
    const { ledger } = await workspace();
    await writeFile(ledger, `${JSON.stringify(line(0))}\n${JSON.stringify(line(1))}`);
    expect(await readLedger(loopFiles, ledger)).toMatchObject({ lines: [line(0), line(1)], warnings: [] });
  });
});

describe('ledger summary', () => {
  it('counts, streaks, best, cost and recent lines in one pass', () => {
    const lines = [
      line(0, { score_after: 50 }),
      line(1, { decision: 'keep', score_after: 91 }),
      line(2, { decision: 'revert', score_after: 92 }),
      line(3, { decision: 'crash', score_after: null }),
      line(4, { decision: 'revert', score_after: 40 }),
    ];
    const summary = summarizeLedger(lines, PARAMS);
    expect(summary).toMatchObject({
      lines: 5,
      last_iter: 4,
      baseline_score: 50,
      best_score: 91,
      best_iter: 1,
      current_score: 91,
      kept: 1,
      reverted: 2,
      crashed: 1,
      non_improvement_streak: 3,
      goal_streak: 0,
      total_cost_usd: 1.25,
      total_duration_ms: 5000,
    });
    expect(summarizeLedger(lines.slice(0, 3), PARAMS).goal_streak).toBe(2);
  });

  it('equals a full scan after many recorded lines, and is served from the cache', async () => {
    const { ledger } = await workspace();
    const lines = generatedLines(120);
    for (const l of lines) await recordLedgerLine(loopFiles, ledger, l, PARAMS);
    const scanned = summarizeLedger((await readLedger(loopFiles, ledger)).lines, PARAMS);
    const loaded = await loadLedgerSummary(loopFiles, ledger, PARAMS);
    expect(loaded.source).toBe('cache');
    expect(loaded.summary).toEqual(scanned);
    expect(loaded.summary.recent).toEqual(lines.slice(-20));
  });

  it('catches up by reading only the tail when lines were appended without it', async () => {
    const { ledger } = await workspace();
    const lines = generatedLines(30);
    for (const l of lines.slice(0, 10)) await recordLedgerLine(loopFiles, ledger, l, PARAMS);
    for (const l of lines.slice(10)) await appendLedgerLine(loopFiles, ledger, l);
    const loaded = await loadLedgerSummary(loopFiles, ledger, PARAMS);
    expect(loaded.source).toBe('tail');
    expect(loaded.summary).toEqual(summarizeLedger(lines, PARAMS));
    expect((await loadLedgerSummary(loopFiles, ledger, PARAMS)).source).toBe('cache');
  });

  it('is rebuilt when the ledger was rewritten (size or content no longer match)', async () => {
    const { ledger } = await workspace();
    const lines = generatedLines(12);
    for (const l of lines) await recordLedgerLine(loopFiles, ledger, l, PARAMS);
    // The user deletes the last three lines by hand.
    const kept = lines.slice(0, 9);
    await writeFile(ledger, kept.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const loaded = await loadLedgerSummary(loopFiles, ledger, PARAMS);
    expect(loaded.source).toBe('scan');
    expect(loaded.summary).toEqual(summarizeLedger(kept, PARAMS));

    // Same size, different content: the last line edited in place without changing its length.
    const current = await readFile(ledger, 'utf8');
    const edited = current.replace(/"sha":"sha"(?=[^\n]*\n$)/, '"sha":"shb"');
    expect(edited).not.toBe(current);
    expect(Buffer.byteLength(edited)).toBe(Buffer.byteLength(current));
    await writeFile(ledger, edited);
    const reloaded = await loadLedgerSummary(loopFiles, ledger, PARAMS);
    expect(reloaded.source).toBe('scan');
    expect(reloaded.summary.recent.at(-1)?.sha).toBe('shb');
  });

  it('is rebuilt for another direction or target, and when the cache file is garbage', async () => {
    const { ledger } = await workspace();
    for (const l of generatedLines(5)) await recordLedgerLine(loopFiles, ledger, l, PARAMS);
    expect((await loadLedgerSummary(loopFiles, ledger, { ...PARAMS, target: 95 })).source).toBe('scan');
    await writeFile(summaryPathFor(ledger), '{"version": 1, "ledger_bytes": "lots"}');
    expect((await loadLedgerSummary(loopFiles, ledger, PARAMS)).source).toBe('scan');
    expect((await loadLedgerSummary(loopFiles, ledger, PARAMS)).source).toBe('cache');
  });

  it('reports a torn tail as a warning and keeps serving the complete lines', async () => {
    const { ledger } = await workspace();
    const lines = generatedLines(4);
    for (const l of lines) await recordLedgerLine(loopFiles, ledger, l, PARAMS);
    await appendFile(ledger, '{"iter":4,');
    const loaded = await loadLedgerSummary(loopFiles, ledger, PARAMS);
    expect(loaded.summary).toEqual(summarizeLedger(lines, PARAMS));
    expect(loaded.warnings).toEqual([
      `${ledger}:5: ignoring a torn last line (an interrupted write); the next append repairs it`,
    ]);
    const next = generatedLines(5)[4];
    if (next === undefined) throw new Error('unreachable');
    const summary = await recordLedgerLine(loopFiles, ledger, next, PARAMS);
    expect(summary).toEqual(summarizeLedger([...lines, next], PARAMS));
    expect((await readLedger(loopFiles, ledger)).warnings).toEqual([]);
  });

  it('readCachedSummary serves status only while the cache matches the ledger exactly', async () => {
    const { ledger } = await workspace();
    expect(await readCachedSummary(loopFiles, ledger)).toBeUndefined();
    const lines = generatedLines(6);
    for (const l of lines) await recordLedgerLine(loopFiles, ledger, l, PARAMS);
    expect(await readCachedSummary(loopFiles, ledger)).toEqual(summarizeLedger(lines, PARAMS));
    await appendFile(ledger, `${JSON.stringify(lines[5])}\n`);
    expect(await readCachedSummary(loopFiles, ledger)).toBeUndefined();
  });

  it('an empty workspace has an empty summary', async () => {
    const { ledger } = await workspace();
    expect((await loadLedgerSummary(loopFiles, ledger, PARAMS)).summary).toMatchObject({
      lines: 0,
      last_iter: -1,
      best_score: null,
    });
  });

  it('does not write the cache when asked not to', async () => {
    const { ledger } = await workspace();
    for (const l of generatedLines(3)) await appendLedgerLine(loopFiles, ledger, l);
    expect((await loadLedgerSummary(loopFiles, ledger, PARAMS, { persist: false })).source).toBe('scan');
    expect((await loadLedgerSummary(loopFiles, ledger, PARAMS, { persist: false })).source).toBe('scan');
  });
});

// The same cache rules with the loop's files in memory: the port's byte ranges and sizes are all the
// cache needs to tell a ledger it describes from one changed behind its back.
describe('ledger summary over in-memory loop files', () => {
  const ledger = '/repo/.autoresearch/research-log.jsonl';

  it('is served from the cache, caught up from the tail, and rebuilt after a same-size edit', async () => {
    const files = createMemoryLoopFiles();
    const lines = generatedLines(12);
    for (const l of lines.slice(0, 8)) await recordLedgerLine(files, ledger, l, PARAMS);
    expect(files.paths()).toEqual([summaryPathFor(ledger), ledger]);
    expect((await loadLedgerSummary(files, ledger, PARAMS)).source).toBe('cache');

    for (const l of lines.slice(8)) await appendLedgerLine(files, ledger, l);
    const caughtUp = await loadLedgerSummary(files, ledger, PARAMS);
    expect(caughtUp.source).toBe('tail');
    expect(caughtUp.summary).toEqual(summarizeLedger(lines, PARAMS));

    const current = (await files.readIfExists(ledger)) ?? '';
    const edited = current.replace(/"sha":"sha"(?=[^\n]*\n$)/, '"sha":"shb"');
    expect(Buffer.byteLength(edited)).toBe(Buffer.byteLength(current));
    await files.writeText(ledger, edited);
    expect(await readCachedSummary(files, ledger)).toBeUndefined();
    const rebuilt = await loadLedgerSummary(files, ledger, PARAMS);
    expect(rebuilt.source).toBe('scan');
    expect(rebuilt.summary.recent.at(-1)?.sha).toBe('shb');
  });

  it('skips a torn last line, and the next recorded line repairs the ledger', async () => {
    const files = createMemoryLoopFiles();
    const lines = generatedLines(4);
    for (const l of lines.slice(0, 3)) await recordLedgerLine(files, ledger, l, PARAMS);
    await files.writeText(ledger, `${(await files.readIfExists(ledger)) ?? ''}{"iter":3,`);
    const torn = await loadLedgerSummary(files, ledger, PARAMS);
    expect(torn.summary).toEqual(summarizeLedger(lines.slice(0, 3), PARAMS));
    expect(torn.warnings).toHaveLength(1);

    const summary = await recordLedgerLine(files, ledger, lines[3]!, PARAMS);
    expect(summary).toEqual(summarizeLedger(lines, PARAMS));
    expect((await readLedger(files, ledger)).warnings).toEqual([]);
  });
});
