// A strict JSON parser that keeps where every value is: line numbers for errors, spans for minimal edits.
import { lineAt } from './types.js';

export type JsonNode =
  | { kind: 'object'; start: number; end: number; entries: Map<string, JsonNode> }
  | { kind: 'array'; start: number; end: number; items: JsonNode[] }
  | { kind: 'string'; start: number; end: number; value: string }
  | { kind: 'number'; start: number; end: number; value: number }
  | { kind: 'boolean'; start: number; end: number; value: boolean }
  | { kind: 'null'; start: number; end: number };

export type JsonParse = { ok: true; root: JsonNode } | { ok: false; line: number; message: string };

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in strings
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** Parses JSON text (a leading BOM allowed); a syntax error names its line. */
export function parseJsonLocated(text: string): JsonParse {
  let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const skip = (): void => {
    while (pos < text.length && ' \t\n\r'.includes(text[pos]!)) pos += 1;
  };
  const describe = (): string => (pos >= text.length ? 'the end of the file' : `'${text[pos]}'`);
  const expect = (char: string, what: string): void => {
    skip();
    if (text[pos] !== char) throw new JsonSyntaxError(`expected ${what}, found ${describe()}`, pos);
    pos += 1;
  };
  const value = (): JsonNode => {
    skip();
    const start = pos;
    const char = text[pos];
    if (char === '{') {
      pos += 1;
      const entries = new Map<string, JsonNode>();
      skip();
      if (text[pos] === '}') {
        pos += 1;
        return { kind: 'object', start, end: pos, entries };
      }
      for (;;) {
        skip();
        if (text[pos] !== '"') {
          throw new JsonSyntaxError(`expected a property name in double quotes, found ${describe()}`, pos);
        }
        const key = value();
        if (key.kind !== 'string') throw new JsonSyntaxError('expected a property name', key.start);
        expect(':', "':' after the property name");
        entries.set(key.value, value());
        skip();
        if (text[pos] === ',') {
          pos += 1;
          continue;
        }
        expect('}', "',' or '}' after a property value");
        return { kind: 'object', start, end: pos, entries };
      }
    }
    if (char === '[') {
      pos += 1;
      const items: JsonNode[] = [];
      skip();
      if (text[pos] === ']') {
        pos += 1;
        return { kind: 'array', start, end: pos, items };
      }
      for (;;) {
        items.push(value());
        skip();
        if (text[pos] === ',') {
          pos += 1;
          continue;
        }
        expect(']', "',' or ']' after an array element");
        return { kind: 'array', start, end: pos, items };
      }
    }
    if (char === '"') {
      STRING.lastIndex = pos;
      const match = STRING.exec(text);
      if (match === null) throw new JsonSyntaxError('unterminated or invalid string', pos);
      pos += match[0].length;
      return { kind: 'string', start, end: pos, value: JSON.parse(match[0]) as string };
    }
    for (const [word, node] of [
      ['true', { kind: 'boolean', value: true }],
      ['false', { kind: 'boolean', value: false }],
      ['null', { kind: 'null' }],
    ] as const) {
      if (text.startsWith(word, pos)) {
        pos += word.length;
        return { ...node, start, end: pos };
      }
    }
    NUMBER.lastIndex = pos;
    const number = NUMBER.exec(text);
    if (number !== null) {
      pos += number[0].length;
      return { kind: 'number', start, end: pos, value: Number(number[0]) };
    }
    throw new JsonSyntaxError(`expected a value, found ${describe()}`, pos);
  };
  try {
    const root = value();
    skip();
    if (pos < text.length) throw new JsonSyntaxError(`unexpected ${describe()} after the JSON value`, pos);
    return { ok: true, root };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { ok: false, line: lineAt(text, error.offset), message: `invalid JSON: ${error.message}` };
  }
}

/** A short rendering of a node's value for error messages. */
export function showJson(text: string, node: JsonNode): string {
  const raw = text.slice(node.start, node.end);
  return raw.length > 40 ? `${raw.slice(0, 37)}...` : raw;
}

export function jsonKindName(node: JsonNode): string {
  return node.kind === 'object' ? 'an object' : node.kind === 'array' ? 'an array' : `a ${node.kind}`;
}
