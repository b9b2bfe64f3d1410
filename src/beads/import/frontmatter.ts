// A strict reader of the YAML frontmatter subset specs use: scalars, quoted strings, [a, b] and `- item` lists.
//
// Anything else (nested maps, block scalars, anchors, tags, flow maps) is refused with its line, rather
// than read wrongly: a spec whose fields import differently from what its author meant is worse than an error.

export type FrontValue = string | number | boolean | null | FrontValue[];

export interface FrontField {
  value: FrontValue;
  /** 1-based line of the key in the file. */
  line: number;
}

export type FrontmatterParse =
  | { ok: true; fields: Map<string, FrontField>; body: string; bodyLine: number; endLine: number }
  | { ok: false; line: number; message: string };

const KEY = /^([A-Za-z_][A-Za-z0-9_-]*)\s*:(?:\s+(.*))?$/;
const LIST_ITEM = /^\s+-(?:\s+(.*))?$|^-(?:\s+(.*))?$/;

export function parseFrontmatter(text: string): FrontmatterParse {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') {
    return { ok: false, line: 1, message: "expected frontmatter: the file must start with a '---' line" };
  }
  const close = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
  if (close === -1) return { ok: false, line: 1, message: "the frontmatter has no closing '---' line" };
  const fields = new Map<string, FrontField>();
  let list: { key: string; items: FrontValue[] } | undefined;
  for (let i = 1; i < close; i += 1) {
    const raw = lines[i]!;
    const line = i + 1;
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;
    if (raw.includes('\t'))
      return { ok: false, line, message: 'tabs are not allowed in frontmatter; indent with spaces' };
    const item = LIST_ITEM.exec(raw);
    if (item !== null && list !== undefined) {
      const scalar = readScalar((item[1] ?? item[2] ?? '').trim());
      if (!scalar.ok) return { ok: false, line, message: `${list.key}: ${scalar.message}` };
      list.items.push(scalar.value);
      continue;
    }
    if (/^\s/.test(raw)) {
      return {
        ok: false,
        line,
        message: 'unexpected indented line: nested maps are not supported in frontmatter',
      };
    }
    const match = KEY.exec(raw.trimEnd());
    if (match === null) return { ok: false, line, message: `expected 'key: value', got '${raw.trim()}'` };
    const key = match[1]!;
    if (fields.has(key)) return { ok: false, line, message: `${key}: appears twice` };
    const rest = stripComment((match[2] ?? '').trim());
    list = undefined;
    if (rest === '') {
      const items: FrontValue[] = [];
      list = { key, items };
      fields.set(key, { value: items, line });
      continue;
    }
    const value = readValue(rest);
    if (!value.ok) return { ok: false, line, message: `${key}: ${value.message}` };
    fields.set(key, { value: value.value, line });
  }
  // A key with nothing after it and no list items is empty, not an empty list.
  for (const [key, field] of fields) {
    if (Array.isArray(field.value) && field.value.length === 0 && !lines[field.line - 1]!.includes('[')) {
      fields.set(key, { value: null, line: field.line });
    }
  }
  return {
    ok: true,
    fields,
    body: lines.slice(close + 1).join('\n'),
    bodyLine: close + 2,
    endLine: close + 1,
  };
}

type Read = { ok: true; value: FrontValue } | { ok: false; message: string };

function readValue(text: string): Read {
  if (text.startsWith('[')) {
    if (!text.endsWith(']'))
      return { ok: false, message: "an inline list must end with ']' on the same line" };
    const inner = text.slice(1, -1).trim();
    if (inner === '') return { ok: true, value: [] };
    const items: FrontValue[] = [];
    for (const part of splitInline(inner)) {
      const scalar = readScalar(part.trim());
      if (!scalar.ok) return scalar;
      items.push(scalar.value);
    }
    return { ok: true, value: items };
  }
  return readScalar(text);
}

function readScalar(text: string): Read {
  if (text === '') return { ok: false, message: 'an empty list item' };
  if (text.startsWith('"')) {
    try {
      if (!/^"(?:[^"\\]|\\.)*"$/.test(text)) throw new Error('unterminated');
      return { ok: true, value: JSON.parse(text) as string };
    } catch {
      return { ok: false, message: `a double-quoted string must close on the same line: ${text}` };
    }
  }
  if (text.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(text)) {
      return { ok: false, message: `a single-quoted string must close on the same line: ${text}` };
    }
    return { ok: true, value: text.slice(1, -1).replaceAll("''", "'") };
  }
  if (/^[|>&*!{[%@`]/.test(text)) {
    return {
      ok: false,
      message: `'${text[0]}' starts YAML this importer does not read (block scalars, anchors, tags, maps); write a plain or quoted value`,
    };
  }
  if (/^(true|false)$/i.test(text)) return { ok: true, value: text.toLowerCase() === 'true' };
  if (/^(null|~)$/.test(text)) return { ok: true, value: null };
  if (/^[-+]?\d+(\.\d+)?$/.test(text)) return { ok: true, value: Number(text) };
  return { ok: true, value: text };
}

/** Splits `a, "b, c", 'd'` on the commas outside quotes. */
function splitInline(text: string): string[] {
  const parts: string[] = [];
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quote !== undefined) {
      if (char === '\\' && quote === '"') i += 1;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === ',') {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** Drops a ` # comment` after an unquoted value. */
function stripComment(text: string): string {
  if (text.startsWith('"') || text.startsWith("'")) return text;
  const hash = text.search(/\s#/);
  return hash === -1 ? text : text.slice(0, hash).trim();
}
