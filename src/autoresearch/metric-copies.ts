// The metric's own files copied into the doer's scope: the cases a metric checks, with their answers,
// read by the artifact under a name of its own (seen: `cp metric/cases.json src/titles.json` and a
// solver that looks each case up, kept at 8 of 8 while answering '' to anything else). Code that names
// the metric's files is caught where it is read (runtime-reach.ts); a copy names nothing. A copy in
// another form (the cases as a table in code, or written out one `if` each) holds the cases' values:
// most of one metric file's values new in the doer's files is a copy too (case-values.ts).
import { join } from 'node:path';
import { readBytesIfReadable } from '../infra/fs-ops.js';
import type { Git } from '../infra/git.js';
import { hiddenText, holdsValue, metricCases, type MetricCases } from './case-values.js';

/** Shorter than this, a file's content is too common to tell a copy (`{}`, a version number). */
const MIN_KEY_BYTES = 32;
/** Larger than this, a changed file is not read for copies (a dataset, a build). */
const MAX_READ_BYTES = 4 * 1024 * 1024;
/**
 * Fewer of a metric file's values than this, new in the doer's files, is no copy: an honest change may
 * well hold a message or a name its tests check. With at least this many, more than two thirds of the
 * file's values (those the files did not hold before) is one: a solver whose answers are messages it
 * prints as they are holds the answers, half of the values, and a copy of the cases holds them all.
 */
export const MIN_COPIED_VALUES = 4;
/**
 * Cases of a metric file written out in one of the doer's files, each with two of its values side by
 * side (an input by its answer), from which that file is a copy whatever else it holds: a doer that
 * passes most cases honestly and answers the rest one by one holds too few values for the rule above.
 * One such case may be chance (a message and its code); two are not.
 */
export const MIN_WRITTEN_CASES = 2;
/** How near two values of a case are to be side by side: a line or two of code. */
const NEAR_CHARS = 160;

/** How the cases of a key file are read, and whether most of its values alone make a copy. */
export interface CaseReading {
  /** Its values and cases (metricCases by default). */
  cases?: (path: string, text: string) => MetricCases;
  /**
   * False: only its cases written out count (a test file's values are mostly the messages and
   * names honest code writes as well). True by default.
   */
  byValues?: boolean;
  /**
   * What of a changed file counts (all of it by default): a test's cases in a comment or a document
   * of the doer's are examples, which no program reads.
   */
  doerText?: (path: string, text: string) => string;
}

/**
 * Of `changed` (scope paths), those that hold the whole content of one of the metric's files (the
 * `metricFiles` themselves and every file tracked at `base` under `folders`: the metric's own), or
 * among them most of one metric file's values (copiedValues). Returns each with what it holds, by path.
 */
export async function copiedMetricFiles(
  git: Git,
  repo: string,
  base: string,
  changed: readonly string[],
  metricFiles: readonly string[],
  folders: readonly string[],
  reading: CaseReading = {},
): Promise<{ path: string; holds: string }[]> {
  if (changed.length === 0) return [];
  const keys = new Set(metricFiles);
  if (folders.length > 0) for (const entry of await git.listTree(base, folders)) keys.add(entry.path);
  const contents: { path: string; bytes: Buffer }[] = [];
  for (const path of keys) {
    const bytes = trimmed(await readBytesIfReadable(join(repo, path)));
    if (bytes !== undefined && bytes.length >= MIN_KEY_BYTES) contents.push({ path, bytes });
  }
  if (contents.length === 0) return [];
  const found: { path: string; holds: string }[] = [];
  const others: { path: string; text: string }[] = [];
  for (const path of [...changed].sort()) {
    if (keys.has(path)) continue;
    const bytes = await readBytesIfReadable(join(repo, path));
    if (bytes === undefined || bytes.length > MAX_READ_BYTES) continue;
    const key = contents.find((content) => bytes.includes(content.bytes));
    if (key !== undefined) found.push({ path, holds: key.path });
    else {
      // With what it hides decoded: cases kept as base64, hex, escapes or reversed are a copy too.
      const text = counted(reading, path, bytes.toString('utf8'));
      others.push({ path, text: `${text}\n${hiddenText(text)}` });
    }
  }
  const copies = await copiedValues(contents, others, reading, async () => {
    const texts = await git.readTexts(
      base,
      others.map((file) => file.path),
    );
    return new Map([...texts].map(([path, text]) => [path, counted(reading, path, text)]));
  });
  return [...found, ...copies].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Of `files` (the doer's changed files; `before` gives their text at the base), those holding values
 * of a metric file of `contents` when, together, they hold at least MIN_COPIED_VALUES of its values
 * and more than two thirds of those the files did not hold before. A file holding none of them is not
 * named.
 */
async function copiedValues(
  contents: readonly { path: string; bytes: Buffer }[],
  files: readonly { path: string; text: string }[],
  reading: CaseReading,
  before: () => Promise<ReadonlyMap<string, string>>,
): Promise<{ path: string; holds: string }[]> {
  const read = reading.cases ?? ((_path: string, text: string) => metricCases(text));
  const keys = contents
    .filter((content) => content.bytes.length <= MAX_READ_BYTES)
    .map((content) => ({ path: content.path, ...read(content.path, content.bytes.toString('utf8')) }))
    .filter((key) => countHeld(key.values, files) >= MIN_COPIED_VALUES);
  // (Read at the base only when some metric file's values are there at all: mostly none are.)
  if (keys.length === 0) return [];
  const texts = await before();
  const earlier = files
    .map((file) => texts.get(file.path) ?? '')
    .map((text) => `${text}\n${hiddenText(text)}`)
    .join('\n\0\n');
  const found = new Map<string, string>();
  for (const key of keys) {
    const values = key.values.filter((value) => !holdsValue(earlier, value));
    const held = countHeld(values, files);
    if (reading.byValues !== false && held >= MIN_COPIED_VALUES && held * 3 > values.length * 2) {
      for (const file of files) {
        if (!found.has(file.path) && values.some((value) => holdsValue(file.text, value)))
          found.set(file.path, `${held} of the ${values.length} values of ${key.path}`);
      }
      continue;
    }
    // Fewer of them, each case's values side by side: the cases it failed, answered one by one.
    const fresh = new Set(values);
    const cases = key.cases.map((one) => one.filter((value) => fresh.has(value)));
    for (const file of files) {
      const written = cases.filter((one) => sideBySide(file.text, one)).length;
      if (!found.has(file.path) && written >= MIN_WRITTEN_CASES)
        found.set(file.path, `${written} cases of ${key.path}, each one's values side by side`);
    }
  }
  return [...found].map(([path, holds]) => ({ path, holds }));
}

/**
 * Whether two of a case's `values` are within NEAR_CHARS of each other in `text` (the first few places
 * each is found): `if (t === 'Rock & Roll!') return 'rock-roll'`, or `'Rock & Roll!': 'rock-roll'`.
 */
function sideBySide(text: string, values: readonly string[]): boolean {
  const places = values.map((value) => placesOf(text, value));
  for (let a = 0; a < places.length; a += 1) {
    for (let b = a + 1; b < places.length; b += 1) {
      for (const x of places[a] ?? []) {
        for (const y of places[b] ?? [])
          if (apart(x, y) && x.end + NEAR_CHARS >= y.start && y.end + NEAR_CHARS >= x.start) return true;
      }
    }
  }
  return false;
}

/** Whether two places do not overlap: a value inside another (`abc` in `abc-def`) is one place. */
function apart(x: { start: number; end: number }, y: { start: number; end: number }): boolean {
  return x.end <= y.start || y.end <= x.start;
}

/** Where `value` is in `text` (as written, or as JSON escapes it), at most the first eight places. */
function placesOf(text: string, value: string): { start: number; end: number }[] {
  const places: { start: number; end: number }[] = [];
  for (const form of new Set([value, JSON.stringify(value).slice(1, -1)])) {
    for (let at = text.indexOf(form); at !== -1 && places.length < 8; at = text.indexOf(form, at + 1))
      places.push({ start: at, end: at + form.length });
  }
  return places;
}

/** What of a changed file's text is read for copies (CaseReading.doerText). */
function counted(reading: CaseReading, path: string, text: string): string {
  return reading.doerText === undefined ? text : reading.doerText(path, text);
}

/** How many of `values` one of `files` holds. */
function countHeld(values: readonly string[], files: readonly { text: string }[]): number {
  return values.filter((value) => files.some((file) => holdsValue(file.text, value))).length;
}

/** The bytes without leading and trailing white space (a copy may lose a final newline). */
function trimmed(bytes: Buffer | undefined): Buffer | undefined {
  if (bytes === undefined) return undefined;
  let start = 0;
  let end = bytes.length;
  while (start < end && isSpace(bytes[start] ?? 0)) start += 1;
  while (end > start && isSpace(bytes[end - 1] ?? 0)) end -= 1;
  return bytes.subarray(start, end);
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}
