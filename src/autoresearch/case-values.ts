// The values a metric's file holds (its cases' inputs and expected answers), read so that a copy of
// them is found whatever form the copy takes: a JSON file of cases rewritten as a table in code, or
// the cases of a script written out as `if (title === 'Hello World') return 'hello-world'` (a doer
// that does either scores every case the metric checks and nothing else). metric-copies.ts compares.

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

/**
 * The values of a metric's file, in the order first seen, that it holds once: the strings and longer
 * numbers of JSON (a document, or one per line), else the quoted literals of code, else the fields of
 * each line (a plain list of answers, CSV, TSV). A value it holds more than once is a name or a label
 * every case shares (`"input"`, `"positive"`), which an honest solver may well print too: a case's own
 * input and answer are its alone.
 */
export function caseValues(text: string): string[] {
  const counts = new Map<string, number>();
  const add = (value: string) => {
    const trimmed = value.trim();
    if (trimmed.length < MIN_VALUE_CHARS || trimmed.length > MAX_VALUE_CHARS) return;
    if (PLUMBING.test(trimmed)) return;
    const count = counts.get(trimmed);
    if (count !== undefined) counts.set(trimmed, count + 1);
    else if (counts.size < MAX_VALUES) counts.set(trimmed, 1);
  };
  const json = jsonDocuments(text);
  if (json !== undefined) for (const document of json) collectJson(document, add);
  else {
    for (const match of text.matchAll(QUOTED)) add(match[2] ?? '');
    if (counts.size === 0)
      for (const line of text.split('\n')) for (const field of line.split(/[,\t;|]/)) add(field);
  }
  return [...counts].filter(([, count]) => count === 1).map(([value]) => value);
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

/** Every string (keys of objects too) and every number of four characters or more, depth first. */
function collectJson(value: unknown, add: (value: string) => void): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') add(next);
    else if (typeof next === 'number' && String(next).length >= 4) add(String(next));
    else if (Array.isArray(next)) for (let i = next.length - 1; i >= 0; i -= 1) stack.push(next[i]);
    else if (typeof next === 'object' && next !== null) {
      for (const [key, inner] of Object.entries(next).reverse()) stack.push(inner, key);
    }
  }
}
