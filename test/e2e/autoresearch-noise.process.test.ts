// `forge-pack loop --repeat` as a user runs it: the built CLIs on a temp repo, a metric with seeded
// jitter much larger than the doer's first change, the scripted agent. The small change is measured
// again and not kept; the large one is kept; the ledger holds the samples; status and the
// retrospective show the noise band and what the loop cost and earned.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { doer, retrospectiveRules, scriptedLoopRepo, stampNext } from '../support/loop-script.js';

/**
 * value + jitter in ±2, the jitter drawn by mulberry32 seeded with the run's number (counted in a file
 * outside the repository): the same sequence on every test run, with no clock or randomness involved.
 */
const NOISY_METRIC = `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const value = Number(readFileSync('src/value.txt', 'utf8').trim());
const counter = '../metric-runs.txt';
const n = existsSync(counter) ? Number(readFileSync(counter, 'utf8')) : 0;
writeFileSync(counter, String(n + 1));
let a = 4242 + n;
a = (a + 0x6d2b79f5) | 0;
let t = Math.imul(a ^ (a >>> 15), 1 | a);
t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
console.log(JSON.stringify({ value: Math.round((value + (unit - 0.5) * 4) * 100) / 100 }));
`;

beforeAll(assertBuilt);

describe('forge-pack loop --repeat over a noisy metric, end to end', () => {
  it('keeps no change inside the noise band, keeps a real improvement, and reports band and figures', async () => {
    const rules = (dir: string) => [
      doer(1, '10.5'), // +0.5 against jitter of ±2: noise
      doer(2, '30'), // +20: real
      ...retrospectiveRules(dir, '# Learned'),
      stampNext(dir, 'Try again.'),
    ];
    const repo = await scriptedLoopRepo(
      { 'src/value.txt': '10\n', 'metric/noisy.mjs': NOISY_METRIC },
      [],
      'forge-noise-',
    );
    await repo.rules(rules(repo.dir));
    const { base, dir, forge, ralph } = repo;

    const soft = await forge([
      'loop',
      'v',
      '--program',
      'p',
      '--rubric',
      'r.md',
      '--artifact',
      'a.md',
      '--repeat',
      '3',
    ]);
    expect(soft.exitCode).toBe(2);
    expect(soft.stderr).toContain('--repeat measures a hard metric');

    const stamped = await forge([
      'loop',
      'value',
      '--program',
      'Make the value in src/value.txt as large as possible.',
      '--metric-command',
      'node metric/noisy.mjs',
      '--score',
      'json:value',
      '--scope',
      'src/',
      '--repeat',
      '3',
      '--max-iterations',
      '2',
      '--agents',
      'doer=scripted,judge=scripted,strategist=scripted',
    ]);
    expect(stamped.exitCode, stamped.stderr).toBe(0);
    const epic = stamped.stdout.trim();

    const run = await ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    // The progress line says why a gain was not kept.
    expect(run.stderr).toMatch(/iter 1: [\d.]+ → [\d.]+ reverted \(within the noise ±[\d.]+\)\n/);
    expect(run.stderr).toMatch(
      /iter 2: [\d.]+ → [\d.]+ kept \(noise ±[\d.]+\); the loop ends: iteration_cap/,
    );

    const text = await readFile(join(dir, '.autoresearch', 'research-log.jsonl'), 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            iter: number;
            decision: string;
            score_after: number;
            samples?: number[];
            spread?: number;
            noise_band?: number;
            reason?: string;
          },
      );
    expect(lines.map((l) => [l.iter, l.decision, l.samples?.length])).toEqual([
      [0, 'baseline', 3],
      // within the noise: measured again (3 more samples), still within, not kept
      [1, 'revert', 6],
      [2, 'keep', 3],
    ]);
    for (const line of lines) {
      const sorted = [...(line.samples ?? [])].sort((a, b) => a - b);
      expect(line.spread).toBeCloseTo(sorted.at(-1)! - sorted[0]!, 9);
    }
    expect(lines[1]!.reason).toMatch(
      /^within the noise band ±[\d.]+ of the best kept score [\d.]+, also after measuring again \(median of 6 samples\)$/,
    );
    expect(lines[2]!.score_after).toBeGreaterThan(27);
    expect(Number(await readFile(join(base, 'metric-runs.txt'), 'utf8'))).toBe(12);
    expect(await readFile(join(dir, 'src', 'value.txt'), 'utf8')).toBe('30\n');

    const baselineBand = (lines[0]!.spread ?? 0) / 2;
    const bestBand = (lines[2]!.spread ?? 0) / 2;
    expect(baselineBand).toBeGreaterThan(0);
    const status = await ralph(['status', epic]);
    expect(status.exitCode).toBe(0);
    expect(status.stdout).toContain(
      `noise     best ±${Number(bestBand.toPrecision(6))} (median of 3 samples, spread ${Number((lines[2]!.spread ?? 0).toPrecision(6))})`,
    );
    expect(status.stdout).toMatch(
      /pace {6}[\d.]+ iterations\/hour · keep rate 50% · per iteration: doer \d+s, judge \d+s, arbiter \d+s, strategist \d+s/,
    );
    expect(status.stdout).toContain(
      'earned    $0.00 per iteration, $0.00 per kept improvement · improvement ',
    );

    const json = JSON.parse((await ralph(['status', epic, '--json'])).stdout) as {
      noise: { samples: number[]; spread: number; band: number };
      figures: Record<string, unknown> & { time_per_iteration_ms: Record<string, number | null> };
    };
    expect(json.noise.samples).toEqual(lines[2]!.samples);
    expect(json.figures).toMatchObject({
      iterations: 2,
      keep_rate: 0.5,
      cost_usd: 0,
      cost_per_iteration_usd: 0,
      cost_per_keep_usd: 0,
      improvement_per_usd: null,
    });
    expect(json.figures.improvement).toBeCloseTo(lines[2]!.score_after - lines[0]!.score_after, 9);
    expect(json.figures.iterations_per_hour).toBeGreaterThan(0);
    for (const role of ['doer', 'judge', 'arbiter', 'strategist'])
      expect(json.figures.time_per_iteration_ms[role]).toBeGreaterThan(0);

    const beads = (await readFile(join(dir, '.beads', 'issues.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { title: string; description?: string });
    const retro = beads.find((bead) => bead.title.startsWith('retrospective:'));
    expect(retro?.description).toContain('## What it cost and earned');
    expect(retro?.description).toContain('2 iteration(s)');
    expect(retro?.description).toContain('keep rate 50%');
    expect(retro?.description).toContain('Every score is the median of 3 runs');
    expect(retro?.description).toContain('not kept: 1 such iteration(s)');
  });
});
