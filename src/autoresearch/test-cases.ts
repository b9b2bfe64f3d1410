// The cases a test file checks, read from its code: each assertion's input beside the answer it
// expects. A doer that writes them into the code under test passes the tests without doing what they
// test (seen: `if (t === 'Hello World') return 'hello-world'`, one line for each of four tests, kept
// at 100% from 0 under `node --test`). The doer may not change the tests, so they are the metric's
// cases as surely as a cases file beside its script; metric-copies.ts looks for them written out.
//
// Only what a copy would carry counts: two literals that follow each other in one statement (an
// input and its answer, with only code between them), each distinctive (not a plain word: a key,
// a name or a message an honest change writes too), neither holding the other (`'html'` and
// `'text/html'`). A test's own name is no value. Reading, not parsing: any language with quoted
// strings.
import { normalValue, type MetricCases } from './case-values.js';

/** A quoted literal on one line, or a number of four digits or more (`832040`, `3.1416`). */
const LITERAL = /(["'`])((?:\\.|(?!\1)[^\\\n])*)\1|(?<![\w.$])\d[\d_]*(?:\.\d+)?(?![\w.])/g;
/**
 * What comes right before a test's name, or the names of its parameters: `test(`, `describe.skip(`,
 * `it.each([…])(`, `parametrize(`.
 */
const TEST_NAME_BEFORE =
  /(?:\b(?:test|it|describe|suite|context|specify|bench|scenario)(?:\s*\.\s*\w+)*\s*\(|\bparametrize\s*\(|\)\s*\()\s*$/;
/** The most text between an input and its answer: `), '`, `)).toBe(`, `) ==`. */
const MAX_GAP = 80;
/**
 * A gap that leaves the statement: a blank line, a `;`, the start of another row of a table (`[`,
 * `{`), another assertion or another test.
 */
const BREAK = /\n[ \t]*\n|[;[{]|\b(?:test|it|describe|def|fn|func|assert|expect)\b/;
/** Numbers shorter than this are counts and sizes any code holds. */
const MIN_NUMBER_CHARS = 4;

/** The values and the input-beside-answer pairs of a test file's code (see MetricCases). */
export function testCases(text: string): MetricCases {
  const values = new Set<string>();
  const cases: string[][] = [];
  let previous: { value: string; end: number } | undefined;
  for (const match of text.matchAll(LITERAL)) {
    const start = match.index;
    const end = start + match[0].length;
    const quoted = match[1] !== undefined;
    if (quoted && TEST_NAME_BEFORE.test(text.slice(Math.max(0, start - 120), start))) {
      previous = undefined;
      continue;
    }
    const value = quoted ? normalValue(match[2] ?? '') : numberValue(match[0]);
    if (value === undefined) continue;
    values.add(value);
    if (previous !== undefined) {
      const gap = text.slice(previous.end, start);
      if (gap.length <= MAX_GAP && !BREAK.test(gap) && isPair(previous.value, value))
        cases.push([previous.value, value]);
    }
    previous = { value, end };
  }
  return { values: [...values], cases };
}

function numberValue(raw: string): string | undefined {
  const value = raw.replace(/_/g, '');
  return value.length >= MIN_NUMBER_CHARS ? value : undefined;
}

/** Two values a copy would carry together: each distinctive, neither inside the other. */
function isPair(a: string, b: string): boolean {
  if (!isDistinctive(a) || !isDistinctive(b)) return false;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return !x.includes(y) && !y.includes(x);
}

/** Not a plain word, which honest code names too (`'greeting'`, `'Bonjour'`, `'red'`). */
function isDistinctive(value: string): boolean {
  return /[^\p{L}_]/u.test(value) || value.length >= 16;
}
