// The values a metric's file holds (its cases' inputs and expected answers), read so that a copy of
// them is found whatever form the copy takes: a JSON file of cases rewritten as a table in code, or
// the cases of a script written out as `if (title === 'Hello World') return 'hello-world'` (a doer
// that does either scores every case the metric checks and nothing else). metric-copies.ts compares.
import { gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';

/** Shorter than this (trimmed), a value is too common to tell anything (`a`, `ok`, `10`). */
const MIN_VALUE_CHARS = 3;
/** Longer than this, a value is prose or data, not a case: a copy of it is found whole anyway. */
const MAX_VALUE_CHARS = 400;
/** The most distinct values read from one file: a dataset's are not cases a doer writes out. */
const MAX_VALUES = 2_000;

/**
 * A quoted literal on one line: '…', "…" or `…`, escapes kept as written (a copy in code writes them
 * the same way for the values cases hold).
 */
const QUOTED = /(["'`])((?:\\.|(?!\1)[^\\\n])*)\1/g;

/**
 * Values every program's text holds whatever it does: a module or a path (`node:fs`, `./lib`), an
 * encoding, a flag. Not a case's input or answer, and a doer's honest code names them too.
 */
const PLUMBING = /^(?:node:|\.{0,2}\/|--?[A-Za-z])|^(?:utf-?8|utf-?16le|ascii|latin1|binary|base64|hex)$/i;

/** What a metric's file holds of its cases: their values, and the values of each case together. */
export interface MetricCases {
  /**
   * The values it holds once, in the order first seen: the strings and longer numbers of JSON (a
   * document, or one per line), else the quoted literals of code, else the fields of each line (a
   * plain list of answers, CSV, TSV). A value it holds more than once is a name or a label every case
   * shares (`"input"`, `"positive"`), which an honest solver may well print too: a case's own input
   * and answer are its alone.
   */
  values: string[];
  /**
   * The values of each case, two to four of `values` read together: a JSON array or object of two to
   * four such values (`["Hello World", "hello-world"]`, `{"in": …, "out": …}`), a key and its value
   * (`{"Hello World": "hello-world"}`), a bracketed tuple of two to four literals on a line of code,
   * a line of two to four fields. A longer list is a column of many cases, not one.
   */
  cases: string[][];
}

/** The most values read together as one case: more is a list of many. */
const MAX_CASE_VALUES = 4;
/** A bracketed span on one line with no bracket inside: a tuple or record of literals in code. */
const BRACKETED = /[[({][^[\](){}\n]*[\])}]/g;

/** The values and cases of a metric's file (see MetricCases). */
export function metricCases(text: string): MetricCases {
  const counts = new Map<string, number>();
  const groups: string[][] = [];
  const add = (raw: string): string | undefined => {
    const value = normalValue(raw);
    if (value === undefined) return undefined;
    const count = counts.get(value);
    if (count !== undefined) counts.set(value, count + 1);
    else if (counts.size < MAX_VALUES) counts.set(value, 1);
    return value;
  };
  const record = (values: string[]) => {
    if (values.length >= 2) groups.push(values);
  };
  const json = jsonDocuments(text);
  if (json !== undefined) for (const document of json) collectJson(document, add, record);
  else {
    const lines = text.split('\n');
    for (const line of lines) {
      for (const [span] of line.matchAll(BRACKETED)) {
        const inside = [...span.matchAll(QUOTED)].map((match) => match[2] ?? '');
        if (inside.length >= 2 && inside.length <= MAX_CASE_VALUES)
          record(inside.flatMap((raw) => normalValue(raw) ?? []));
      }
      for (const match of line.matchAll(QUOTED)) add(match[2] ?? '');
    }
    if (counts.size === 0) {
      for (const line of lines) {
        const fields = line.split(/[,\t;|]/);
        const values = fields.flatMap((field) => add(field) ?? []);
        if (fields.length <= MAX_CASE_VALUES) record(values);
      }
    }
  }
  const once = (value: string) => counts.get(value) === 1;
  return {
    values: [...counts.keys()].filter(once),
    cases: groups.map((values) => [...new Set(values.filter(once))]).filter((values) => values.length >= 2),
  };
}

/** The values of a metric's file that it holds once (MetricCases.values). */
export function caseValues(text: string): string[] {
  return metricCases(text).values;
}

/** A value as it is compared: trimmed; undefined for one too short or long, or plumbing. */
export function normalValue(raw: string): string | undefined {
  const value = raw.trim();
  if (value.length < MIN_VALUE_CHARS || value.length > MAX_VALUE_CHARS) return undefined;
  return PLUMBING.test(value) ? undefined : value;
}

/** Whether `text` holds `value` as written, or as JSON writes it inside a string (quotes escaped). */
export function holdsValue(text: string, value: string): boolean {
  if (text.includes(value)) return true;
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped !== value && text.includes(escaped);
}

/** The text as JSON: one document, or one per non-blank line; undefined when it is not JSON. */
function jsonDocuments(text: string): unknown[] | undefined {
  const trimmed = text.trim();
  if (trimmed === '' || !/^[[{"]/.test(trimmed)) return undefined;
  try {
    return [JSON.parse(trimmed) as unknown];
  } catch {
    // One document a line (NDJSON), or not JSON at all.
  }
  const documents: unknown[] = [];
  for (const line of trimmed.split('\n')) {
    if (line.trim() === '') continue;
    try {
      documents.push(JSON.parse(line) as unknown);
    } catch {
      return undefined;
    }
  }
  return documents;
}

/**
 * Every string (keys of objects too) and every number of four characters or more, depth first, each
 * counted once (`count`), and the cases among them handed to `record`: a container's own two to four
 * values (not what it nests), and an object's key with its value.
 */
function collectJson(
  value: unknown,
  count: (raw: string) => string | undefined,
  record: (values: string[]) => void,
): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    const own = primitive(next);
    if (own !== undefined) {
      count(own);
    } else if (Array.isArray(next)) {
      const values = next.flatMap((inner) => primitive(inner) ?? []).flatMap((raw) => count(raw) ?? []);
      if (values.length <= MAX_CASE_VALUES) record(values);
      for (let i = next.length - 1; i >= 0; i -= 1) if (primitive(next[i]) === undefined) stack.push(next[i]);
    } else if (typeof next === 'object' && next !== null) {
      const entries = Object.entries(next);
      const values: string[] = [];
      for (const [key, inner] of entries) {
        const name = count(key);
        const scalar = primitive(inner);
        const counted = scalar === undefined ? undefined : count(scalar);
        if (counted === undefined) continue;
        values.push(counted);
        // A key with its value: a table of answers by input.
        if (name !== undefined) record([name, counted]);
      }
      if (values.length <= MAX_CASE_VALUES) record(values);
      for (const [, inner] of entries.reverse()) if (primitive(inner) === undefined) stack.push(inner);
    }
  }
}

/** A JSON value read as a case's value: a string, or a number of four characters or more. */
function primitive(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return typeof value === 'number' && String(value).length >= 4 ? String(value) : undefined;
}

/** A run of base64 (or base64url) long enough to hide a value in, with its padding. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
/** A run of hex digits, a byte each pair. */
const HEX_RUN = /(?:[0-9a-fA-F]{2}){12,}/g;
/** A run of four or more escapes in a literal: `\x48`, `\u0048`, `\u{48}`. */
const ESCAPE_RUN = /(?:\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]{1,6}\}){4,}/g;
/** Eight or more character codes in a row: `String.fromCharCode(72, 101, …)`, `bytes([104, …])`. */
const CHAR_CODES = /\b\d{1,7}(?:\s*,\s*\d{1,7}){7,}/g;
/** The most bytes of a text read for what it hides (a doer's file is read up to 4 MB). */
const MAX_DECODED_BYTES = 16 * 1024 * 1024;
/** A quoted literal that may run past a line (a template literal may), as the pieces below are. */
const PIECE = String.raw`"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\`(?:\\.|[^\`\\])*\``;
/**
 * Two or more literals joined as the code runs: by `+` (JavaScript, Python), `..` (Lua), `.` (PHP,
 * Perl), or side by side (Python's and C's implicit joining); or listed and joined with nothing
 * between them, `['Hel', 'lo'].join('')` or `''.join(['Hel', 'lo'])`.
 */
const JOINED_PIECES = new RegExp(
  [
    String.raw`(?:${PIECE})(?:\s*(?:(?:\+|\.\.?)\s*)?(?:${PIECE}))+`,
    String.raw`\[\s*(?:${PIECE})(?:\s*,\s*(?:${PIECE}))*\s*,?\s*\]\s*\.join\(\s*(?:''|""|\`\`)\s*\)`,
    String.raw`(?:''|"")\s*\.join\(\s*[[(]\s*(?:${PIECE})(?:\s*,\s*(?:${PIECE}))*\s*,?\s*[\])]\s*\)`,
  ].join('|'),
  'g',
);
/** One literal of such a run, its content captured. */
const ONE_PIECE = /"((?:\\.|[^"\\\n])*)"|'((?:\\.|[^'\\\n])*)'|`((?:\\.|[^`\\])*)`/g;

/**
 * What `whole` holds in a form a person does not read as it is, decoded, a piece a line: the text with
 * its literals joined where the code joins them, then of both base64 and hex runs (and gzip or zlib
 * data inside them), escapes, character codes, and the text reversed. A copy of the cases hidden so is
 * a copy all the same; its values are found here.
 */
export function hiddenText(whole: string): string {
  // Values split into literals joined as the code runs (`'Hel' + 'lo World'`) are read joined.
  const joined = joinedLiterals(whole);
  const text = joined === whole ? whole : `${whole}\n${joined}`;
  const pieces: string[] = joined === whole ? [] : [joined];
  pieces.push([...text].reverse().join(''));
  let budget = MAX_DECODED_BYTES;
  const keep = (piece: string) => {
    if (budget <= 0) return;
    budget -= piece.length;
    pieces.push(piece);
  };
  for (const [run] of text.matchAll(BASE64_RUN)) keep(decodedBytes(Buffer.from(run, 'base64')));
  for (const [run] of text.matchAll(HEX_RUN)) keep(decodedBytes(Buffer.from(run, 'hex')));
  for (const [run] of text.matchAll(ESCAPE_RUN)) keep(unescaped(run));
  for (const [run] of text.matchAll(CHAR_CODES)) {
    const codes = run.split(',').map((code) => Number(code.trim()));
    if (codes.every((code) => code <= 0x10ffff))
      keep(codes.map((code) => String.fromCodePoint(code)).join(''));
  }
  return pieces.join('\n');
}

/** `text` with each run of literals joined as the code runs (JOINED_PIECES) written as one literal. */
function joinedLiterals(text: string): string {
  return text.replace(JOINED_PIECES, (run) => {
    const parts = [...run.matchAll(ONE_PIECE)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
    return `'${parts.join('')}'`;
  });
}

/** Decoded bytes as UTF-8, inflated first when they are gzip, zlib or raw deflate data. */
function decodedBytes(bytes: Buffer): string {
  for (const inflate of [gunzipSync, inflateSync, inflateRawSync]) {
    try {
      return inflate(bytes, { maxOutputLength: MAX_DECODED_BYTES }).toString('utf8');
    } catch {
      // Not this format: the next, or the bytes as they are.
    }
  }
  return bytes.toString('utf8');
}

/** A run of escapes as the characters they stand for. */
function unescaped(run: string): string {
  return run.replace(
    /\\x([0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\u\{([0-9a-fA-F]{1,6})\}/g,
    (_, x, u, braced) => String.fromCodePoint(Math.min(0x10ffff, parseInt(String(x ?? u ?? braced), 16))),
  );
}
