// The arbiter's pure decision: the bar, directions, floats, crashes, terminal reasons, replays.
import { describe, expect, it } from 'vitest';
import {
  ArbiterError,
  decide,
  type ArbiterConfig,
  type DecideInput,
} from '../../src/autoresearch/arbiter.js';
import type { JudgeVerdict } from '../../src/autoresearch/judge-output.js';
import type { LedgerLine } from '../../src/autoresearch/ledger.js';
import { summarizeLedger } from '../../src/autoresearch/ledger-summary.js';

type Step = number | 'crash' | 'doer-crash';

function config(
  overrides: Partial<Omit<ArbiterConfig, 'caps' | 'metric'>> & {
    direction?: 'maximize' | 'minimize';
    caps?: Partial<ArbiterConfig['caps']>;
  } = {},
): ArbiterConfig {
  const { direction = 'maximize', caps, ...rest } = overrides;
  return {
    metric: { direction },
    target: null,
    min_delta: 0,
    confirmation_rounds: 1,
    ...rest,
    caps: { max_iterations: 0, wall_clock_seconds: 0, plateau_threshold: 0, max_cost_usd: 0, ...caps },
  };
}

const ok = (score: number, findings = 0): JudgeVerdict => ({
  ok: true,
  output: { score, findings: Array.from({ length: findings }, (_, i) => `finding ${i}`) },
});

function input(
  cfg: ArbiterConfig,
  ledger: readonly LedgerLine[],
  step: Step,
  extra: Partial<DecideInput> = {},
): DecideInput {
  const iter = ledger.length === 0 ? 0 : (ledger.at(-1)?.iter ?? -1) + 1;
  return {
    config: cfg,
    ledger,
    iter,
    judge:
      step === 'crash' ? { ok: false, reason: 'judge timed out' } : ok(typeof step === 'number' ? step : 50),
    ...(step === 'doer-crash' ? { doerFailure: 'agent exited 1' } : {}),
    baseSha: `base-${iter}`,
    now: `2026-01-01T00:00:${String(iter).padStart(2, '0')}Z`,
    ...extra,
  };
}

/** Decides each step in turn, as the runner would, with the git step filling `sha`. */
function run(cfg: ArbiterConfig, steps: readonly Step[], extra: Partial<DecideInput> = {}) {
  const ledger: LedgerLine[] = [];
  const results = [];
  for (const step of steps) {
    const result = decide(input(cfg, ledger, step, extra));
    results.push(result);
    ledger.push({ ...result.line, sha: result.line.sha ?? `sha-${result.line.iter}` });
  }
  const last = results.at(-1);
  if (last === undefined) throw new Error('no steps');
  return { ledger, results, last, decisions: results.map((r) => r.decision) };
}

describe('decide: the baseline', () => {
  it('records iteration 0 as the baseline, sets the bar and continues to iteration 1', () => {
    const { last } = run(config(), [58]);
    expect(last.decision).toBe('baseline');
    expect(last.line).toMatchObject({
      iter: 0,
      score_after: 58,
      best_before: null,
      best_after: 58,
      delta: null,
    });
    expect(last.line.sha).toBe('base-0');
    expect(last.signal).toEqual({
      type: 'continue',
      iter: 0,
      next_iter: 1,
      current_score: 58,
      best_score: 58,
      decision: 'baseline',
      delta: null,
    });
  });

  it('a failed baseline is a crash; the first measured iteration then sets the bar and is kept', () => {
    const { decisions, ledger } = run(config(), ['crash', 10, 5]);
    expect(decisions).toEqual(['crash', 'keep', 'revert']);
    expect(ledger[1]?.reason).toMatch(/no measured baseline/);
    expect(ledger[2]?.best_before).toBe(10);
  });
});

describe('decide: improvement', () => {
  it('maximize keeps a higher score and reverts a lower or equal one', () => {
    expect(run(config(), [50, 51]).last.decision).toBe('keep');
    expect(run(config(), [50, 49]).last.decision).toBe('revert');
    expect(run(config(), [50, 50]).last.decision).toBe('revert');
  });

  it('minimize keeps a lower score and reverts a higher or equal one', () => {
    const min = config({ direction: 'minimize' });
    expect(run(min, [50, 49]).last.decision).toBe('keep');
    expect(run(min, [50, 51]).last.decision).toBe('revert');
    expect(run(min, [50, 50]).last.decision).toBe('revert');
  });

  it('needs more than min_delta: exactly best + min_delta is not an improvement', () => {
    const max = config({ min_delta: 2 });
    expect(run(max, [10, 12]).last.decision).toBe('revert');
    expect(run(max, [10, 12.001]).last.decision).toBe('keep');
    const min = config({ direction: 'minimize', min_delta: 2 });
    expect(run(min, [10, 8]).last.decision).toBe('revert');
    expect(run(min, [10, 7.999]).last.decision).toBe('keep');
  });

  it('records delta as score minus the bar and the reason of a revert', () => {
    const { last } = run(config(), [58, 55]);
    expect(last.line).toMatchObject({
      score_before: 58,
      score_after: 55,
      best_before: 58,
      best_after: 58,
      delta: -3,
    });
    expect(last.line.reason).toMatch(/not an improvement on the best kept score 58/);
  });

  it('treats float noise as equality: 0.1 + 0.2 does not beat 0.3', () => {
    const { last } = run(config(), [0.3, 0.1 + 0.2]);
    expect(last.decision).toBe('revert');
    expect(last.line.delta).toBe(0);
  });

  it('an improvement of exactly min_delta stays a revert despite float error (0.8 vs 0.7 + 0.1)', () => {
    expect(0.8 > 0.7 + 0.1).toBe(true); // the naive comparison would keep it
    const { last } = run(config({ min_delta: 0.1 }), [0.7, 0.8]);
    expect(last.decision).toBe('revert');
    expect(last.line.delta).toBe(0.1);
  });

  it('a small real improvement on a float score is kept', () => {
    const { last } = run(config(), [0.3, 0.3000001]);
    expect(last.decision).toBe('keep');
    expect(last.line.best_after).toBe(0.3000001);
  });

  it('regression (bash arbiter compared with the last line): a revert does not lower the bar', () => {
    // baseline 58, iteration 1 scores 40 and is reverted; iteration 2 scores 50: the bash arbiter
    // compared 50 with 40 and kept a regression. The bar is still 58.
    const { decisions, ledger, last } = run(config(), [58, 40, 50]);
    expect(decisions).toEqual(['baseline', 'revert', 'revert']);
    expect(ledger[2]).toMatchObject({ score_before: 58, best_before: 58, best_after: 58, delta: -8 });
    expect(last.signal).toMatchObject({ best_score: 58, current_score: 50 });
  });

  it('regression (bash arbiter used integer arithmetic): fractional scores are compared as numbers', () => {
    expect(run(config(), [58.2, 58.7]).last.decision).toBe('keep');
    expect(run(config(), [58.7, 58.2]).last.decision).toBe('revert');
  });

  it('the bar rises with each keep and the ledger keeps every score', () => {
    const { decisions, ledger } = run(config(), [10, 12, 11, 15, 14]);
    expect(decisions).toEqual(['baseline', 'keep', 'revert', 'keep', 'revert']);
    expect(ledger.map((l) => l.best_after)).toEqual([10, 12, 12, 15, 15]);
    expect(ledger.map((l) => l.score_after)).toEqual([10, 12, 11, 15, 14]);
  });
});

describe('decide: crashes', () => {
  it('a judge failure is a crash that keeps the bar and records the reason', () => {
    const { last } = run(config(), [58, 'crash']);
    expect(last.decision).toBe('crash');
    expect(last.line).toMatchObject({ score_after: null, delta: null, best_after: 58, findings_count: 0 });
    expect(last.line.reason).toBe('the judge failed: judge timed out');
    expect(last.signal).toMatchObject({
      type: 'continue',
      decision: 'crash',
      current_score: null,
      best_score: 58,
    });
  });

  it('a doer failure is a crash even when the judge produced a score', () => {
    const { last } = run(config(), [58, 'doer-crash']);
    expect(last.decision).toBe('crash');
    expect(last.line.reason).toBe('the doer failed: agent exited 1');
  });

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['a numeric string', '85'],
    ['null', null],
  ])('a score that is %s is a judge failure, and the ledger line stays valid JSON', (_name, score) => {
    const judge = { ok: true, output: { score, findings: [] } } as unknown as JudgeVerdict;
    const baseline = run(config(), [58]).ledger;
    const result = decide(input(config(), baseline, 50, { judge }));
    expect(result.decision).toBe('crash');
    expect(result.line.reason).toMatch(/not a finite number/);
    const roundTrip = JSON.parse(JSON.stringify(result.line)) as LedgerLine;
    expect(roundTrip).toEqual(result.line);
    expect(roundTrip.score_after).toBeNull();
  });

  it('counts findings of a judged iteration', () => {
    const baseline = run(config(), [58]).ledger;
    expect(decide(input(config(), baseline, 60, { judge: ok(60, 6) })).line.findings_count).toBe(6);
  });
});

describe('decide: terminal signals', () => {
  it('goal_reached when a kept score meets the target (maximize: ≥)', () => {
    const { last } = run(config({ target: 95 }), [90, 95]);
    expect(last.signal).toEqual({
      type: 'terminal',
      reason: 'goal_reached',
      iter: 1,
      final_score: 95,
      best_score: 95,
      decision: 'keep',
    });
    expect(last.line.terminal).toBe('goal_reached');
  });

  it('goal_reached for minimize when the score is at or below the target', () => {
    expect(run(config({ direction: 'minimize', target: 10 }), [20, 10]).last.signal).toMatchObject({
      type: 'terminal',
      reason: 'goal_reached',
    });
    expect(run(config({ direction: 'minimize', target: 10 }), [20, 11]).last.signal.type).toBe('continue');
  });

  it('a baseline that already meets the target ends the loop at iteration 0', () => {
    expect(run(config({ target: 95 }), [97]).last.signal).toMatchObject({
      type: 'terminal',
      reason: 'goal_reached',
      iter: 0,
    });
  });

  it('without a target the goal never triggers', () => {
    expect(run(config(), [10, 1000]).last.signal.type).toBe('continue');
  });

  it('iteration_cap at the iteration equal to max_iterations', () => {
    const { results } = run(config({ caps: { max_iterations: 3 } }), [10, 11, 12, 13]);
    expect(results.map((r) => r.signal.type)).toEqual(['continue', 'continue', 'continue', 'terminal']);
    expect(results[3]?.signal).toMatchObject({
      reason: 'iteration_cap',
      iter: 3,
      final_score: 13,
      best_score: 13,
    });
  });

  it('plateau after plateau_threshold consecutive non-improvements, crashes included', () => {
    const cfg = config({ caps: { plateau_threshold: 3 } });
    const { results } = run(cfg, [10, 9, 'crash', 8]);
    expect(results.map((r) => r.signal.type)).toEqual(['continue', 'continue', 'continue', 'terminal']);
    expect(results[3]?.signal).toMatchObject({
      reason: 'plateau',
      final_score: 8,
      best_score: 10,
      decision: 'revert',
    });
  });

  it('a keep resets the plateau count', () => {
    const cfg = config({ caps: { plateau_threshold: 2 } });
    const { results } = run(cfg, [10, 9, 11, 10, 12]);
    expect(results.every((r) => r.signal.type === 'continue')).toBe(true);
    expect(run(cfg, [10, 9, 11, 10, 9]).last.signal).toMatchObject({ type: 'terminal', reason: 'plateau' });
  });

  it('a crashed baseline does not count towards the plateau', () => {
    const cfg = config({ caps: { plateau_threshold: 2 } });
    const { results } = run(cfg, ['crash', 10, 9]);
    expect(results.map((r) => r.signal.type)).toEqual(['continue', 'continue', 'continue']);
  });

  it('budget when the ledger total reaches max_cost_usd', () => {
    const cfg = config({ caps: { max_cost_usd: 1 } });
    const { results } = run(cfg, [10, 11, 12], { iterationCostUsd: 0.4 });
    expect(results.map((r) => r.signal.type)).toEqual(['continue', 'continue', 'terminal']);
    expect(results[2]?.signal).toMatchObject({ reason: 'budget' });
    expect(results[2]?.line.cost_usd).toBe(0.4);
  });

  it('budget uses the runner-measured total when given', () => {
    const cfg = config({ caps: { max_cost_usd: 5 } });
    const baseline = run(cfg, [10]).ledger;
    expect(decide(input(cfg, baseline, 11, { costSoFarUsd: 4.99 })).signal.type).toBe('continue');
    expect(decide(input(cfg, baseline, 11, { costSoFarUsd: 5 })).signal).toMatchObject({ reason: 'budget' });
  });

  it('wall_clock when the elapsed time reaches the cap', () => {
    const cfg = config({ caps: { wall_clock_seconds: 3600 } });
    const baseline = run(cfg, [10]).ledger;
    expect(decide(input(cfg, baseline, 11, { wallClockElapsedSeconds: 3599 })).signal.type).toBe('continue');
    expect(decide(input(cfg, baseline, 11, { wallClockElapsedSeconds: 3600 })).signal).toMatchObject({
      reason: 'wall_clock',
    });
  });

  it('0 disables each cap', () => {
    const { results } = run(config(), [10, 9, 8, 7, 6, 5, 4], {
      iterationCostUsd: 100,
      wallClockElapsedSeconds: 1e9,
    });
    expect(results.every((r) => r.signal.type === 'continue')).toBe(true);
  });

  it('checks in order: goal, iteration cap, plateau, budget, wall clock', () => {
    const all = { max_iterations: 2, plateau_threshold: 1, max_cost_usd: 0.1, wall_clock_seconds: 1 };
    const extra = { iterationCostUsd: 1, wallClockElapsedSeconds: 10 };
    const reasonOf = (cfg: ArbiterConfig, steps: Step[]) => {
      const signal = run(cfg, steps.slice(0, -1)).ledger;
      const result = decide(input(cfg, signal, steps.at(-1) ?? 0, extra));
      return result.signal.type === 'terminal' ? result.signal.reason : 'continue';
    };
    // iteration 2 kept at the target: everything applies, goal first.
    expect(reasonOf(config({ target: 12, caps: all }), [10, 11, 12])).toBe('goal_reached');
    // iteration 2 reverted: the cap before the plateau.
    expect(reasonOf(config({ target: 100, caps: all }), [10, 11, 5])).toBe('iteration_cap');
    expect(reasonOf(config({ caps: { ...all, max_iterations: 0 } }), [10, 11, 5])).toBe('plateau');
    expect(reasonOf(config({ caps: { ...all, max_iterations: 0, plateau_threshold: 0 } }), [10, 11, 5])).toBe(
      'budget',
    );
    expect(
      reasonOf(
        config({ caps: { ...all, max_iterations: 0, plateau_threshold: 0, max_cost_usd: 0 } }),
        [10, 11, 5],
      ),
    ).toBe('wall_clock');
  });
});

describe('decide: confirmation rounds', () => {
  const cfg = config({ target: 95, confirmation_rounds: 2 });

  it('needs the target met in consecutive iterations; a reverted iteration can confirm a kept one', () => {
    const { results } = run(cfg, [90, 96, 95.5]);
    expect(results.map((r) => r.signal.type)).toEqual(['continue', 'continue', 'terminal']);
    expect(results[2]?.signal).toMatchObject({
      reason: 'goal_reached',
      decision: 'revert',
      final_score: 95.5,
      best_score: 96,
    });
  });

  it('a crash or a score below the target restarts the count', () => {
    expect(run(cfg, [90, 96, 'crash', 97]).results.map((r) => r.signal.type)).toEqual([
      'continue',
      'continue',
      'continue',
      'continue',
    ]);
    expect(run(cfg, [90, 96, 'crash', 97, 98]).last.signal).toMatchObject({
      reason: 'goal_reached',
      iter: 4,
    });
    expect(run(cfg, [90, 96, 94, 97]).last.signal.type).toBe('continue');
  });

  it('a reverted measurement above the target does not count while the kept tree is below it', () => {
    // best 94.9; 95.2 is within min_delta, so it is reverted and the repository still holds 94.9.
    const tight = config({ target: 95, min_delta: 0.5, confirmation_rounds: 1 });
    const { last } = run(tight, [94.9, 95.2]);
    expect(last.decision).toBe('revert');
    expect(last.signal.type).toBe('continue');
  });
});

describe('decide: replays and resume', () => {
  it('returns the recorded line and signal for an iteration already in the ledger', () => {
    const cfg = config({ target: 100, caps: { plateau_threshold: 5 } });
    const { ledger, results } = run(cfg, [58, 60, 40]);
    const again = decide(input(cfg, ledger, 99, { iter: 1, judge: ok(1) }));
    expect(again.replayed).toBe(true);
    expect(again.decision).toBe('keep');
    expect(again.line).toEqual(ledger[1]);
    expect(again.signal).toEqual(results[1]?.signal);
  });

  it('re-emits a terminal signal exactly, even when the caps would now say otherwise', () => {
    const cfg = config({ caps: { wall_clock_seconds: 10 } });
    const ledger = run(cfg, [58]).ledger;
    const first = decide(input(cfg, ledger, 59, { wallClockElapsedSeconds: 11 }));
    ledger.push({ ...first.line, sha: 'x' });
    const again = decide(input(cfg, ledger, 70, { iter: 1, wallClockElapsedSeconds: 0 }));
    expect(again.signal).toEqual(first.signal);
    expect(again.signal).toMatchObject({ type: 'terminal', reason: 'wall_clock' });
  });

  it('replays from a summary when the iteration is among its recent lines', () => {
    const cfg = config();
    const { ledger } = run(cfg, [58, 60, 61]);
    const summary = summarizeLedger(ledger, { direction: 'maximize', target: null });
    const again = decide(input(cfg, ledger, 0, { ledger: summary, iter: 2 }));
    expect(again).toMatchObject({ replayed: true, decision: 'keep', line: ledger[2] });
  });

  it('refuses an iteration that skips one, or a doer iteration before the baseline', () => {
    const cfg = config();
    const { ledger } = run(cfg, [58, 60]);
    expect(() => decide(input(cfg, ledger, 70, { iter: 3 }))).toThrow(ArbiterError);
    expect(() => decide(input(cfg, ledger, 70, { iter: 3 }))).toThrow(
      /ends at iteration 1, so the next is 2/,
    );
    expect(() => decide(input(cfg, [], 70, { iter: 1 }))).toThrow(/next iteration is the baseline/);
  });

  it('resume never resets the score: the bar comes from the ledger, and a summary gives the same decision', () => {
    const cfg = config();
    const { ledger } = run(cfg, [58, 62, 40, 'crash']);
    // A fresh process: nothing in memory but the ledger lines (or the summary file).
    const fromLines = decide(input(cfg, ledger, 61));
    const summary = summarizeLedger(ledger, { direction: 'maximize', target: null });
    const fromSummary = decide(input(cfg, ledger, 61, { ledger: summary }));
    expect(fromLines.line).toMatchObject({ iter: 4, score_before: 62, best_before: 62, decision: 'revert' });
    expect(fromLines.signal).toMatchObject({ best_score: 62 });
    expect(fromSummary.line).toEqual(fromLines.line);
    expect(fromSummary.signal).toEqual(fromLines.signal);
  });

  it('refuses a summary folded for another direction or target', () => {
    const cfg = config({ target: 90 });
    const { ledger } = run(cfg, [58]);
    const summary = summarizeLedger(ledger, { direction: 'maximize', target: null });
    expect(() => decide(input(cfg, ledger, 60, { ledger: summary }))).toThrow(/another direction or target/);
  });

  it('records hypothesis, cost, duration, base and guard paths on the line', () => {
    const cfg = config();
    const { ledger } = run(cfg, [58]);
    const result = decide(
      input(cfg, ledger, 60, {
        hypothesis: 'cache the parse',
        iterationCostUsd: 0.41,
        durationMs: 183000,
        guardRevertedPaths: ['package.json'],
      }),
    );
    expect(result.line).toMatchObject({
      hypothesis: 'cache the parse',
      cost_usd: 0.41,
      duration_ms: 183000,
      base_sha: 'base-1',
      sha: null,
      guard_reverted_paths: ['package.json'],
      ts: '2026-01-01T00:00:01Z',
    });
  });
});

describe('decide: against a naive reference over random runs', () => {
  // Scores and deltas are multiples of 0.5, exact in binary, so the reference can compare plainly.
  function reference(cfg: ArbiterConfig, steps: readonly Step[]) {
    const max = cfg.metric.direction === 'maximize';
    const better = (a: number, b: number, delta: number) => (max ? a > b + delta : a < b - delta);
    const meets = (s: number, t: number) => (max ? s >= t : s <= t);
    const out: { decision: string; best: number | null; terminal: string | null }[] = [];
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i];
      let best: number | null = null;
      for (let j = 0; j < i; j++) {
        const d = out[j];
        const s = steps[j];
        if ((d?.decision === 'keep' || d?.decision === 'baseline') && typeof s === 'number') best = s;
      }
      let decision: string;
      if (typeof step !== 'number') decision = 'crash';
      else if (i === 0) decision = 'baseline';
      else decision = best === null || better(step, best, cfg.min_delta) ? 'keep' : 'revert';
      const bestAfter = decision === 'keep' || decision === 'baseline' ? (step as number) : best;
      out.push({ decision, best: bestAfter, terminal: null });
      let streak = 0;
      for (let j = i; j >= 1 && (out[j]?.decision === 'revert' || out[j]?.decision === 'crash'); j--)
        streak++;
      let goal = 0;
      for (let j = i; j >= 0; j--) {
        const s = steps[j];
        const b = out[j]?.best ?? null;
        if (
          cfg.target === null ||
          typeof s !== 'number' ||
          b === null ||
          !meets(s, cfg.target) ||
          !meets(b, cfg.target)
        )
          break;
        goal++;
      }
      const cost = (i + 1) * 0.5;
      const entry = out[i];
      if (entry === undefined) throw new Error('unreachable');
      if (cfg.target !== null && goal >= cfg.confirmation_rounds) entry.terminal = 'goal_reached';
      else if (cfg.caps.max_iterations > 0 && i >= cfg.caps.max_iterations) entry.terminal = 'iteration_cap';
      else if (cfg.caps.plateau_threshold > 0 && streak >= cfg.caps.plateau_threshold)
        entry.terminal = 'plateau';
      else if (cfg.caps.max_cost_usd > 0 && cost >= cfg.caps.max_cost_usd) entry.terminal = 'budget';
    }
    return out;
  }

  function mulberry32(seed: number) {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  it('agrees with the reference on 300 seeded random runs, from lines and from the running summary', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const random = mulberry32(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
      const cfg = config({
        direction: pick(['maximize', 'minimize'] as const),
        min_delta: pick([0, 0, 0.5, 1]),
        target: pick([null, 8, 10, 12]),
        confirmation_rounds: pick([1, 1, 2, 3]),
        caps: {
          max_iterations: pick([0, 5, 15]),
          plateau_threshold: pick([0, 2, 4]),
          max_cost_usd: pick([0, 0, 6]),
        },
      });
      const steps: Step[] = Array.from({ length: 20 }, () =>
        random() < 0.15 ? 'crash' : Math.round(random() * 40) / 2,
      );
      const expected = reference(cfg, steps);
      const ledger: LedgerLine[] = [];
      let summary = summarizeLedger([], { direction: cfg.metric.direction, target: cfg.target });
      for (let i = 0; i < steps.length; i++) {
        const result = decide(input(cfg, ledger, steps[i] ?? 0, { iterationCostUsd: 0.5 }));
        // Deciding from the running summary (what the runner does on a long ledger) gives the same line.
        const viaSummary = decide(
          input(cfg, ledger, steps[i] ?? 0, { iterationCostUsd: 0.5, ledger: summary }),
        );
        expect(viaSummary.line).toEqual(result.line);
        summary = result.summary;
        const want = expected[i];
        const context = `seed ${seed}, iteration ${i}, steps ${JSON.stringify(steps.slice(0, i + 1))}`;
        expect(result.decision, context).toBe(want?.decision);
        expect(result.line.best_after, context).toBe(want?.best);
        expect(result.line.terminal, context).toBe(want?.terminal);
        ledger.push({ ...result.line, sha: 'x' });
        if (result.signal.type === 'terminal') break;
      }
    }
  });
});
