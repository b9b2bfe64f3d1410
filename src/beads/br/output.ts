// Finding br's JSON in what it prints: several documents per stream, log lines around them, error envelopes.
// Checked by hand, not with zod: every br call goes through here, and the br store's first calls start
// before zod has loaded (its schemas come in while br answers: store.ts).
import { isJsonObject } from '../../infra/json-object.js';

/**
 * Every JSON document (object or array) in `text`, in order. A document starts at the beginning of a line
 * (after indentation) or right after the previous document, so stray log lines such as
 * `2026-01-21T21:46:54Z  INFO beads_rust: opening db` or `[INFO] …` are skipped rather than misread.
 */
export function extractJsonDocuments(text: string): unknown[] {
  // Mostly br prints one document and nothing else: JSON.parse reads it whole, several times faster
  // than the scan below (~0.15 ms of a 30 KB ready list, three calls a bead).
  const whole = text.trim();
  if (whole.startsWith('{') || whole.startsWith('[')) {
    const parsed = tryParse(whole);
    if (parsed.ok) return [parsed.value];
  }
  const documents: unknown[] = [];
  let position = 0;
  let immediate = false;
  while (position < text.length) {
    const start = nextCandidate(text, position, immediate);
    if (start === -1) break;
    const end = matchingEnd(text, start);
    if (end !== -1) {
      const parsed = tryParse(text.slice(start, end));
      if (parsed.ok) {
        documents.push(parsed.value);
        position = end;
        immediate = true;
        continue;
      }
    }
    const newline = text.indexOf('\n', start);
    if (newline === -1) break;
    position = newline + 1;
    immediate = false;
  }
  return documents;
}

/** Index of the next `{` or `[` that may open a document, or -1. */
function nextCandidate(text: string, from: number, immediate: boolean): number {
  let lineStart = true;
  for (let i = from; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === '{' || char === '[') {
      if (lineStart || immediate) return i;
    } else if (char === '\n') {
      lineStart = true;
      continue;
    } else if (char !== ' ' && char !== '\t' && char !== '\r') {
      lineStart = false;
      immediate = false;
    }
  }
  return -1;
}

/** Index just past the bracket that closes the one at `start`, honouring strings; -1 when unbalanced. */
function matchingEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const char = text[i]!;
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{') stack.push('}');
    else if (char === '[') stack.push(']');
    else if (char === '}' || char === ']') {
      if (stack.pop() !== char) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** br's (and bd's) error report, normalised. */
export interface BrErrorReport {
  code: string;
  message: string;
  hint: string | undefined;
  retryable: boolean;
  context: unknown;
}

/** Absent, null or a string (what zod calls a nullish string). */
function isNullishString(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === 'string';
}

function isNullishBoolean(value: unknown): value is boolean | null | undefined {
  return value === undefined || value === null || typeof value === 'boolean';
}

/**
 * br's `{"error":{code,message,hint?,retryable?,context?}}` or bd's `{"error":"<string>","hint"?,"code"?}`
 * (other keys beside them allowed); anything else is not an error report.
 */
export function asErrorReport(document: unknown): BrErrorReport | undefined {
  if (!isJsonObject(document)) return undefined;
  const { error } = document;
  if (isJsonObject(error)) {
    const { code, message, hint, retryable, context } = error;
    if (typeof code !== 'string' || typeof message !== 'string') return undefined;
    if (!isNullishString(hint) || !isNullishBoolean(retryable)) return undefined;
    return { code, message, hint: hint ?? undefined, retryable: retryable ?? false, context };
  }
  if (typeof error !== 'string') return undefined;
  const { hint, code } = document;
  if (!isNullishString(hint) || !isNullishString(code)) return undefined;
  return {
    code: code ?? 'UNKNOWN',
    message: error,
    hint: hint ?? undefined,
    retryable: false,
    context: undefined,
  };
}

/** A structured log record (tracing's JSON format), which is never a command's result. */
function isLogRecord(document: unknown): boolean {
  if (!isJsonObject(document)) return false;
  return typeof document.level === 'string' && ('target' in document || 'fields' in document);
}

/**
 * Strips bd's `{schema_version, data}` envelope (`BD_JSON_ENVELOPE=1`) so one set of schemas reads both.
 * br's own list envelope (`{issues,total,…}`) is left to the list schema.
 */
export function unwrapDataEnvelope(document: unknown): unknown {
  if (!isJsonObject(document) || !('data' in document)) return document;
  const others = Object.keys(document).filter(
    (key) => !['data', 'schema_version', 'ok', 'success'].includes(key),
  );
  return others.length === 0 ? document.data : document;
}

export interface ClassifiedOutput {
  /** Result documents from stdout (error envelopes and log records removed, bd envelopes unwrapped). */
  results: unknown[];
  /** The first error envelope on stdout or stderr. */
  error: BrErrorReport | undefined;
}

export function classifyOutput(stdout: string, stderr: string): ClassifiedOutput {
  const results: unknown[] = [];
  let error: BrErrorReport | undefined;
  for (const document of extractJsonDocuments(stdout)) {
    const report = asErrorReport(document);
    if (report !== undefined) error ??= report;
    else if (!isLogRecord(document)) results.push(unwrapDataEnvelope(document));
  }
  if (error === undefined) {
    for (const document of extractJsonDocuments(stderr)) {
      error = asErrorReport(document);
      if (error !== undefined) break;
    }
  }
  return { results, error };
}

/** A short, single-line excerpt of raw output for error messages. */
export function excerpt(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(no output)';
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
