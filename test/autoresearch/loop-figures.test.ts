// What a loop cost and earned: a table of ledger counts, spend and run times against the figures.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loopFigures, type FiguresInput, type LoopFigures } from '../../src/autoresearch/loop-figures.js';
import { readRunTimes } from '../../src/autoresearch/run-times.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';

const input = (over: Partial<FiguresInput>): FiguresInput => ({
  direction: 'maximize',
  iterations: 10,
  kept: 4,
  baseline: 50,
  best: 62,
  costUsd: 6,
  roleMs: { doer: 600_000, judge: 50_000, arbiter: 1_000, strategist: 200_000 },
  runMs: 2 * 3_600_000,
  ...over,
});

const cases: [string, Partial<FiguresInput>, Partial<LoopFigures>][] = [
  [
    'a loop that spent and improved',
    {},
    {
      iterations_per_hour: 5,
      keep_rate: 0.4,
      time_per_iteration_ms: { doer: 60_000, judge: 5_000, arbiter: 100, strategist: 20_000 },
      cost_per_iteration_usd: 0.6,
      cost_per_keep_usd: 1.5,
      improvement: 12,
      improvement_per_usd: 2,
    },
  ],
  [
    'minimize: improvement is baseline − best',
    { direction: 'minimize', baseline: 120, best: 90 },
    { improvement: 30, improvement_per_usd: 5 },
  ],
  [
    'nothing spent: no improvement per dollar, cost per keep 0',
    { costUsd: 0 },
    { improvement_per_usd: null, cost_per_keep_usd: 0, cost_per_iteration_usd: 0, improvement: 12 },
  ],
  [
    'nothing kept: no cost per keep',
    { kept: 0, best: 50 },
    { keep_rate: 0, cost_per_keep_usd: null, improvement: 0, improvement_per_usd: 0 },
  ],
  [
    'no iteration yet',
    { iterations: 0, kept: 0, best: 50 },
    {
      iterations_per_hour: 0,
      keep_rate: null,
      cost_per_iteration_usd: null,
      time_per_iteration_ms: { doer: null, judge: null, arbiter: null, strategist: null },
    },
  ],
  [
    'no run recorded: no rate, no role times',
    { runMs: null, roleMs: {} },
    {
      iterations_per_hour: null,
      time_per_iteration_ms: { doer: null, judge: null, arbiter: null, strategist: null },
    },
  ],
  ['no baseline measured', { baseline: null, best: null }, { improvement: null, improvement_per_usd: null }],
];

describe('loopFigures', () => {
  it.each(cases)('%s', (_name, over, expected) => {
    expect(loopFigures(input(over))).toMatchObject(expected);
  });
});

describe('run times from the event log', () => {
  it('sums attempts by role (an alias under its role) and a run from its first event to its last, skipping a torn line and reading past a huge one, from disk and memory alike', async () => {
    const events = [
      { type: 'run_started', ts: '2026-01-01T00:00:00.000Z' },
      { type: 'attempt_finished', ts: '2026-01-01T00:01:00.000Z', role: 'doer', duration_ms: 50_000 },
      { type: 'activity', ts: '2026-01-01T00:01:05.000Z', message: 'x'.repeat(3 * 1024 * 1024) },
      { type: 'attempt_finished', ts: '2026-01-01T00:01:10.000Z', role: 'judge', duration_ms: 9_000 },
      { type: 'attempt_finished', ts: '2026-01-01T00:02:00.000Z', role: 'doer', duration_ms: 40_000 },
      { type: 'attempt_finished', ts: '2026-01-01T00:02:01.000Z', role: 'arbiter-script', duration_ms: 20 },
      { type: 'run_finished', ts: '2026-01-01T00:03:00.000Z' },
    ];
    const text = `${events.map((e) => JSON.stringify(e)).join('\n')}\n{"type":"attem`;
    const dir = await mkdtemp(join(tmpdir(), 'forge-run-times-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'runs'));
    await writeFile(join(dir, 'runs', 'r1.jsonl'), text);
    const memory = createMemoryLoopFiles();
    await memory.writeText(join(dir, 'runs', 'r1.jsonl'), text);
    const expected = { role_ms: { doer: 90_000, judge: 9_000, arbiter: 20 }, run_ms: 180_000, runs: 1 };
    expect(await readRunTimes(diskLoopFiles(), join(dir, 'runs'))).toEqual(expected);
    expect(await readRunTimes(memory, join(dir, 'runs'))).toEqual(expected);
    expect(await readRunTimes(diskLoopFiles(), join(dir, 'none'))).toBeUndefined();
  });
});
