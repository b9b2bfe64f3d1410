// The zod-free reading of a plain ledger line: it takes the common line, and whatever it returns is what
// zod would have returned; everything else (and every error) is still zod's.
import { describe, expect, it } from 'vitest';
import { plainLedgerLine } from '../../src/autoresearch/ledger-fast.js';
import {
  ledgerLineSchema,
  LedgerError,
  lineHash,
  parseLedgerText,
  type LedgerLine,
} from '../../src/autoresearch/ledger.js';

type Raw = Record<string, unknown>;

const BASELINE: Raw = {
  iter: 0,
  ts: '2026-11-01T00:00:00.000Z',
  score_before: null,
  score_after: 42.5,
  best_before: null,
  best_after: 42.5,
  delta: null,
  decision: 'baseline',
  base_sha: null,
  sha: 'a'.repeat(40),
  findings_count: 0,
  hypothesis: 'baseline',
  cost_usd: 0,
  duration_ms: 1200,
};
const KEEP: Raw = {
  ...BASELINE,
  iter: 1,
  score_before: 42.5,
  score_after: 44,
  best_before: 42.5,
  best_after: 44,
  delta: 1.5,
  decision: 'keep',
  base_sha: 'a'.repeat(40),
  sha: 'b'.repeat(40),
  findings_count: 3,
  hypothesis: 'inline the hot loop',
  cost_usd: 0.12,
  duration_ms: 60_000,
  terminal: null,
};
const REVERT: Raw = {
  ...KEEP,
  iter: 2,
  score_after: 41,
  best_after: 44,
  delta: -3,
  decision: 'revert',
  sha: null,
  reason: 'the score fell',
};
const CRASH: Raw = {
  ...KEEP,
  iter: 3,
  score_after: null,
  delta: null,
  decision: 'crash',
  sha: null,
  reason: 'the metric command crashed',
};
const RICH: Raw = {
  ...KEEP,
  iter: 4,
  terminal: 'goal_reached',
  guard_reverted_paths: ['docs/a.md', 'b.txt'],
  tracks: { latency_ms: 12.5, size: null, '7': 3 },
  evidence: '149/153 passed (TAP)',
  samples: [43, 44, 45],
  spread: 2,
  noise_band: 1,
  population: 3,
  candidate: 2,
  prev: '0123456789abcdef0123456789abcdef',
};
const GUARD_FAILED: Raw = {
  ...CRASH,
  iter: 5,
  decision: 'guard_failed',
  failed_guard: { name: 'lint', kind: 'guard', exit_code: 1, reason: 'lint failed', output_tail: 'x' },
};
const TAMPER: Raw = {
  ...CRASH,
  iter: 6,
  decision: 'tamper',
  tamper: [{ role: 'doer', paths: ['.autoresearch/config.json'] }],
};

/** Lines the fast path must take itself: without them it would be dead code. */
const PLAIN = { BASELINE, KEEP, REVERT, CRASH, RICH };
const VALID = { ...PLAIN, GUARD_FAILED, TAMPER };

const ODD: unknown[] = [
  null,
  undefined,
  -1,
  -0,
  0,
  0.5,
  1,
  2,
  1e300,
  -1e300,
  2 ** 53,
  2 ** 53 - 1,
  -(2 ** 53),
  Number.MIN_VALUE,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  '',
  'x',
  'keep',
  'goal_reached',
  'guard',
  true,
  false,
  [],
  {},
  ['a'],
  [1],
  [null],
  ['a', 1],
  [Number.NaN],
  { a: 1 },
  { a: null },
  { a: 'x' },
  { a: Number.POSITIVE_INFINITY },
  { role: 'doer', paths: [] },
  [{ role: 'doer', paths: ['x'] }],
  { name: 'g', kind: 'track', exit_code: null, reason: 'r', output_tail: '' },
  new Date(0),
  Object.create(null) as unknown,
];

const SHAPE_KEYS = Object.keys(ledgerLineSchema.shape);

/** Fields the fast path leaves to zod whatever their value. */
const LEFT_TO_ZOD = ['tamper', 'failed_guard'];

interface Tally {
  fast: number;
  /** Keys present in some line the fast path took. */
  keys: Set<string>;
}

/** Asserts the contract on one value: a line from the fast path is exactly zod's output. */
function check(value: unknown, label: string, tally: Tally): LedgerLine | undefined {
  const fast = plainLedgerLine(value);
  if (fast === undefined) return undefined;
  const parsed = ledgerLineSchema.safeParse(value);
  expect(parsed.success, `${label}: fast path took what zod rejects`).toBe(true);
  if (!parsed.success) return undefined;
  // toStrictEqual: -0 is not 0, an `undefined` property is not an absent one.
  expect(fast, label).toStrictEqual(parsed.data);
  expect(Object.keys(fast), `${label}: key order`).toEqual(Object.keys(parsed.data));
  expect(fast, `${label}: a fresh object`).not.toBe(value);
  tally.fast++;
  for (const key of Object.keys(fast)) tally.keys.add(key);
  return fast;
}

function mutants(base: Raw): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const key of SHAPE_KEYS) {
    ODD.forEach((odd, i) => out.push([`${key}=ODD[${i}]`, { ...base, [key]: odd }]));
    const { [key]: _gone, ...without } = base;
    out.push([`without ${key}`, without]);
  }
  for (const key of ['extra', 'kind', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    out.push([`unknown ${key}`, { ...base, [key]: 1 }]);
  }
  out.push([
    'unknown via JSON __proto__',
    JSON.parse(`{"__proto__":{"x":1},${JSON.stringify(base).slice(1)}`),
  ]);
  out.push(['null prototype', Object.assign(Object.create(null) as object, base)]);
  out.push(['class instance', Object.assign(new (class Line {})(), base)]);
  out.push(['symbol key', { ...base, [Symbol('s')]: 1 }]);
  out.push(['non-enumerable known key', Object.defineProperty({ ...base }, 'evidence', { value: 'e' })]);
  out.push(['non-enumerable unknown key', Object.defineProperty({ ...base }, 'extra', { value: 'e' })]);
  out.push(['inherited optional key', Object.assign(Object.create({ reason: 'r' }) as object, base)]);
  out.push(['getter', Object.defineProperty({ ...base }, 'reason', { get: () => 'r', enumerable: true })]);
  const tracks = (value: unknown): unknown => ({ ...base, tracks: value });
  out.push(['tracks __proto__ key', tracks(JSON.parse('{"__proto__":1,"a":2}'))]);
  out.push(['tracks __proto__ null', tracks(JSON.parse('{"a":2,"__proto__":null}'))]);
  out.push(['tracks symbol key', tracks({ a: 1, [Symbol('s')]: 2 })]);
  out.push(['tracks non-enumerable', tracks(Object.defineProperty({ a: 1 }, 'b', { value: 2 }))]);
  out.push(['tracks null prototype', tracks(Object.assign(Object.create(null) as object, { a: 1 }))]);
  out.push(['tracks numeric keys', tracks({ b: 1, '10': null, '2': 3, '-1': 4, '01': 5 })]);
  out.push(['tracks constructor key', tracks({ constructor: 1 })]);
  out.push(['tracks array', tracks([1, 2])]);
  const holey = new Array<number>(3);
  holey[0] = 1;
  holey[2] = 3;
  out.push(['holey samples', { ...base, samples: holey }]);
  out.push([
    'array subclass',
    { ...base, guard_reverted_paths: new (class Paths extends Array<string> {})() },
  ]);
  out.push(['array with a property', { ...base, samples: Object.assign([1, 2], { extra: 1 }) }]);
  return out;
}

describe('plainLedgerLine', () => {
  it('returns exactly what zod returns, for every mutant of every kind of line', () => {
    const tally: Tally = { fast: 0, keys: new Set() };
    let total = 0;
    for (const [name, base] of Object.entries(VALID)) {
      expect(ledgerLineSchema.safeParse(base).success, name).toBe(true);
      for (const [label, mutant] of mutants(base)) {
        total++;
        check(mutant, `${name} ${label}`, tally);
      }
    }
    for (const value of [null, undefined, 0, 'line', [], [BASELINE], new Map()]) {
      expect(plainLedgerLine(value)).toBeUndefined();
    }
    // The fast path is taken, and on many of the mutants, not only on the untouched lines.
    expect(total).toBeGreaterThan(7_000);
    expect(tally.fast).toBeGreaterThan(800);
    // Every field but the ones left to zod is read by the fast path (a new field: teach it, or list it).
    const untaught = SHAPE_KEYS.filter((key) => !tally.keys.has(key) && !LEFT_TO_ZOD.includes(key));
    expect(untaught).toEqual([]);
  });

  it('takes the plain lines and leaves tamper and failed-guard lines to zod', () => {
    const tally: Tally = { fast: 0, keys: new Set() };
    for (const [name, line] of Object.entries(PLAIN)) {
      expect(check(line, name, tally), name).toBeDefined();
      expect(check(JSON.parse(JSON.stringify(line)), `${name} from JSON`, tally), name).toBeDefined();
    }
    expect(plainLedgerLine(GUARD_FAILED)).toBeUndefined();
    expect(plainLedgerLine(TAMPER)).toBeUndefined();
    // A key the schema lacks goes to zod too: zod strips it today, but that is the schema's call to make.
    expect(plainLedgerLine({ ...KEEP, extra: 1 })).toBeUndefined();
    // -0 passes `.min(0)` in zod and stays -0; an explicit undefined is left to zod.
    expect(Object.is(plainLedgerLine({ ...KEEP, cost_usd: -0 })?.cost_usd, -0)).toBe(true);
    expect(plainLedgerLine({ ...KEEP, reason: undefined })).toBeUndefined();
  });
});

describe('parseLedgerText with the fast path', () => {
  /** Chained JSONL of `lines`, as Forge appends them. */
  function chained(lines: Raw[]): string {
    const raws: string[] = [];
    for (const line of lines) {
      const { prev: _prev, ...rest } = line;
      const last = raws.at(-1);
      raws.push(JSON.stringify(last === undefined ? rest : { ...rest, prev: lineHash(last) }));
    }
    return `${raws.join('\n')}\n`;
  }

  it('reads every kind of line as zod alone reads it, without the chain hash', () => {
    const lines = Object.values(VALID).map((line, iter) => ({ ...line, iter }));
    const text = chained(lines);
    const read = parseLedgerText(text, 'log.jsonl', 1);
    const byZod = text
      .trimEnd()
      .split('\n')
      .map((raw) => {
        const { prev: _chain, ...line } = ledgerLineSchema.parse(JSON.parse(raw));
        return line;
      });
    expect(read.lines).toStrictEqual(byZod);
    expect(read.lines.map((line) => Object.keys(line))).toEqual(byZod.map((line) => Object.keys(line)));
    expect(read.lines.every((line) => !('prev' in line))).toBe(true);
  });

  it.each([
    [{ ...KEEP, cost_usd: -1 }, 'cost_usd: Too small: expected number to be >=0'],
    [{ ...KEEP, score_after: 'x' }, 'score_after: expected number, received string'],
    [{ ...KEEP, hypothesis: undefined }, 'hypothesis: expected string, received undefined'],
    [
      { ...KEEP, iter2: 3, findings_count: 0.5, terminal: 'done' },
      'findings_count: expected int, received number; terminal: Invalid option: expected one of "goal_reached"|"iteration_cap"|"plateau"|"budget"|"wall_clock"',
    ],
    [{ ...KEEP, iter: 2 ** 53 }, 'iter: Too big: expected int to be <=9007199254740991'],
    [
      { ...KEEP, tracks: { a: 'x' }, samples: [1, 'y'] },
      'tracks.a: expected number, received string; samples[1]: expected number, received string',
    ],
  ])('still words a bad line as zod did: %#', (bad, fields) => {
    // The messages were recorded from the zod-only reader before the fast path existed.
    const text = chained([BASELINE, bad, { ...REVERT, iter: 2 }]);
    let thrown: unknown;
    try {
      parseLedgerText(text, 'log.jsonl', 1);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LedgerError);
    expect((thrown as LedgerError).message).toBe(`log.jsonl:2: not a ledger line (${fields})`);
  });
});
